import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, snapshotTree, tempRepo } from '../support/repo.js';

/** Runs `npm run synth` the way a user does (same entry point), against a temp copy of the inputs. */
function synthCli(root: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'charts/main.ts'), '--root', root, ...args], { cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run synth (CLI)', () => {
  let repo: ReturnType<typeof tempRepo>;
  afterEach(() => repo.dispose());

  it('writes every environment, twice byte-identical, with no temp directories left behind', () => {
    repo = tempRepo();
    const first = synthCli(repo.root);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^synthesized dev \(4 objects\), prod \(8 objects\), staging \(9 objects\) into dist\/ and 12 Argo CD objects and 4 CRDs into argocd\/ in \d+ ms\n$/);
    const tree = snapshotTree(join(repo.root, 'dist'));
    expect(tree).toEqual(snapshotTree(join(REPO, 'dist')));
    expect(synthCli(repo.root).code).toBe(0);
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(tree);
    expect(snapshotTree(join(repo.root, 'argocd'))).toEqual(snapshotTree(join(REPO, 'argocd')));
    expect(readdirSync(repo.root).sort()).toEqual(['argocd', 'catalogue', 'crds', 'dist', 'environments', 'gitops.yaml', 'infra', 'reports']);
    expect(snapshotTree(join(repo.root, 'reports'))).toEqual(snapshotTree(join(REPO, 'reports')));
  });

  it('an invalid environment exits 1 with file, path, value and what is allowed, and leaves dist/ byte-identical', () => {
    repo = tempRepo({ withDist: true });
    writeFileSync(join(repo.root, 'dist/prod/stale.k8s.yaml'), 'kind: Stale\n');
    const before = snapshotTree(join(repo.root, 'dist'));
    repo.editEnvironment('staging', (e) => (e.nodePools[0].disruption = { budgets: [{ nodes: '150%' }] }));
    const r = synthCli(repo.root);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: invalid input, nothing was written\n' +
        'environments/staging.yaml: nodePools[0].disruption.budgets[0].nodes: must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%), got "150%"\n',
    );
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(before);
  });

  it('errors in several files are all reported in one run', () => {
    repo = tempRepo({ withDist: true });
    repo.writeEnvironmentText('dev', 'cluster: [\n');
    repo.editEnvironment('prod', (e) => (e.nodePools[0].expireAfter = '1x'));
    const r = synthCli(repo.root);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'error: invalid input, nothing was written',
      'environments/dev.yaml: (top level): is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1',
      'environments/prod.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
    ]);
  });

  it('--env prod replaces dist/prod only; stale files there are removed, other environments untouched', () => {
    repo = tempRepo({ withDist: true });
    writeFileSync(join(repo.root, 'dist/prod/NodePool.removed.k8s.yaml'), 'kind: NodePool\n');
    writeFileSync(join(repo.root, 'dist/dev/untouched.k8s.yaml'), 'kind: Other\n');
    const r = synthCli(repo.root, '--env', 'prod');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^synthesized prod \(8 objects\) into dist\/ \(argocd\/ left as is: --env given\) in \d+ ms\n$/);
    expect(existsSync(join(repo.root, 'dist/prod/NodePool.removed.k8s.yaml'))).toBe(false);
    expect(existsSync(join(repo.root, 'dist/dev/untouched.k8s.yaml'))).toBe(true);
  });

  it('a full synth removes the directory of an environment that no longer exists', () => {
    repo = tempRepo({ withDist: true });
    mkdirSync(join(repo.root, 'dist/old'));
    writeFileSync(join(repo.root, 'dist/old/NodePool.x.k8s.yaml'), 'kind: NodePool\n');
    expect(synthCli(repo.root).code).toBe(0);
    expect(readdirSync(join(repo.root, 'dist')).sort()).toEqual(['dev', 'prod', 'staging']);
  });

  it('an unknown --env and an unknown flag are errors, not crashes', () => {
    repo = tempRepo();
    const unknownEnv = synthCli(repo.root, '--env', 'qa');
    expect(unknownEnv.code).toBe(1);
    expect(unknownEnv.stderr).toBe('error: invalid input, nothing was written\nenvironments: (top level): has no environment "qa"; environments are: dev, prod, staging\n');
    const unknownFlag = synthCli(repo.root, '--envv', 'qa');
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toBe("error: Unknown option '--envv'. Usage: npm run synth [-- --env <name>[,<name>...]] [--render-charts]\n");
    expect(existsSync(join(repo.root, 'dist'))).toBe(false);
  });
});

describe('cdk8s synth (the ecosystem command) runs the same app', () => {
  it('writes the same tree as npm run synth into its output directory', () => {
    const out = mkdtempSync(join(tmpdir(), 'cdk8s-out-'));
    try {
      const r = spawnSync(join(REPO, 'node_modules/.bin/cdk8s'), ['synth', '--output', out], { cwd: REPO, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(snapshotTree(out)).toEqual(snapshotTree(join(REPO, 'dist')));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
