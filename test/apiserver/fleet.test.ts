import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { attachApiServer, dryRunApply, type ApiServerClient } from '../support/apiserver.js';
import { REPO, tempRepo } from '../support/repo.js';

/**
 * The committed argocd/ has no fleet, so the suite over committed files never sees an
 * ApplicationSet: render a fleet configuration into a temp copy and let the server judge it.
 */
describe('fleet mode: every generated ApplicationSet is accepted by the real API server', () => {
  const repo = tempRepo();
  let server: ApiServerClient;
  let files: string[] = [];

  beforeAll(() => {
    server = attachApiServer(inject('kubeconfig'), inject('kubeBinDir'));
    writeFileSync(
      join(repo.root, 'gitops.yaml'),
      'repository: {url: "https://git.example.com/platform/karpenter-gitops.git", targetRevision: main}\n' +
        'environments:\n  dev: {fleet: {}}\n  staging: {fleet: {matchLabels: {tier: staging}}}\n  prod: {fleet: {matchLabels: {region: us-east-1}}}\n',
    );
    repo.editEnvironment('prod', (e) => (e.cluster.identity = 'irsa'));
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'charts/main.ts'), '--root', repo.root], { cwd: REPO, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`synth failed: ${r.stderr}`);
    files = readdirSync(join(repo.root, 'argocd'))
      .filter((f) => f.startsWith('ApplicationSet.'))
      .map((f) => join(repo.root, 'argocd', f));
  });
  afterAll(() => repo.dispose());

  it('renders three ApplicationSets per environment', () => {
    expect(files).toHaveLength(9);
  });

  it('each one passes kubectl apply --dry-run=server --validate=strict', async () => {
    for (const file of files) {
      const res = await dryRunApply(server, file);
      expect({ file, ok: res.ok, stderr: res.stderr.trim(), warnings: res.warnings }).toEqual({ file, ok: true, stderr: '', warnings: [] });
    }
  });
});
