import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { attachApiServer, dryRunApply, type ApiServerClient } from '../support/apiserver.js';
import { enforceRestricted } from './pod-security-labels.js';
import { REPO } from '../support/repo.js';

/** Every generated file Argo CD would apply: the committed dist/ and argocd/ trees. */
function generatedFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.yaml')) out.push(p);
    }
  };
  walk(join(REPO, 'dist'));
  walk(join(REPO, 'argocd'));
  return out;
}

const files = generatedFiles();

async function dryRunServerSide(server: ApiServerClient, file: string) {
  const res = await server.kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=argocd-controller', '--dry-run=server', '--validate=strict', '-f', file]);
  const warnings = `${res.stderr}\n${res.stdout}`.split('\n').filter((l) => l.trim().startsWith('Warning:'));
  return { ok: res.code === 0 && warnings.length === 0, ...res, warnings };
}

describe('a real kube-apiserver 1.36 with the vendored CRDs accepts every generated manifest', () => {
  let server: ApiServerClient;

  beforeAll(async () => {
    server = attachApiServer(inject('kubeconfig'), inject('kubeBinDir'));
    // Dry-run creates nothing, so namespaced objects need their namespaces to exist for real.
    const namespaces = new Set<string>();
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
        const o = doc.toJS();
        if (o?.metadata?.namespace) namespaces.add(o.metadata.namespace);
        if (o?.kind === 'Namespace') namespaces.add(o.metadata.name);
      }
    }
    for (const ns of [...namespaces].sort()) {
      const r = await server.kubectl(['create', 'namespace', ns, '--save-config']);
      if (r.code !== 0 && !r.stderr.includes('AlreadyExists')) throw new Error(`cannot create namespace ${ns}: ${r.stderr}`);
    }
    // Every namespace, built-in ones too, enforces and warns at Pod Security "restricted", so a
    // workload that would be refused in a labelled namespace fails here as a warning
    // (test/apiserver/pod-security.test.ts proves that it does).
    await enforceRestricted(server, [...namespaces]);
  });

  it('there is something to check in dist/ for every environment', () => {
    const envs = new Set(files.filter((f) => f.includes('/dist/')).map((f) => relative(join(REPO, 'dist'), f).split('/')[0]));
    expect([...envs].sort()).toEqual(['dev', 'prod', 'staging']);
  });

  it.each(files.map((f) => [relative(REPO, f), f]))('%s', async (_rel, file) => {
    // The CRDs are already installed (server-side) by the test setup, and Argo CD applies
    // them with ServerSideApply=true: dry-run them the same way, as an update.
    const isCrd = /^kind: CustomResourceDefinition$/m.test(readFileSync(file, 'utf8'));
    const res = isCrd ? await dryRunServerSide(server, file) : await dryRunApply(server, file);
    expect({ ok: res.ok, stderr: res.stderr.trim(), warnings: res.warnings }).toEqual({ ok: true, stderr: '', warnings: [] });
    expect(res.stdout).toMatch(/\(server dry run\)/);
  });
});
