import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, snapshotTree, tempRepo } from '../support/repo.js';
import { checkout, generatedState, leftovers, synthCli as run, synthInProcess } from '../support/generated.js';

/** Runs `npm run synth` the way a user does (a Node process, same entry point), against a temp copy of the inputs. */
function synthProcess(root: string, ...args: string[]) {
  const r = run(root, args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command in this process (charts/cli.ts): no Node start-up per run. */
async function synthCli(root: string, ...args: string[]) {
  const r = await synthInProcess(root, args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run synth (CLI)', () => {
  let repo: ReturnType<typeof tempRepo>;
  afterEach(() => repo?.dispose());

  it('writes every environment, twice byte-identical, with no temp directories left behind', () => {
    repo = tempRepo();
    const first = synthProcess(repo.root);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^synthesized dev \(4 objects\), prod \(8 objects\), staging \(9 objects\) into dist\/ and 12 Argo CD objects and 4 CRDs into argocd\/ in \d+ ms\n$/);
    const tree = snapshotTree(join(repo.root, 'dist'));
    expect(tree).toEqual(snapshotTree(join(REPO, 'dist')));
    expect(synthProcess(repo.root).code).toBe(0);
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(tree);
    expect(snapshotTree(join(repo.root, 'argocd'))).toEqual(snapshotTree(join(REPO, 'argocd')));
    expect(readdirSync(repo.root).sort()).toEqual(['argocd', 'catalogue', 'crds', 'dist', 'environments', 'gitops.yaml', 'infra', 'reports']);
    // reports/<env>.simulation.md is written by `npm run simulate -- --write`, not by synth.
    const synthReports = (dir: string) => Object.fromEntries(Object.entries(snapshotTree(dir)).filter(([f]) => !f.endsWith('.simulation.md')));
    expect(snapshotTree(join(repo.root, 'reports'))).toEqual(synthReports(join(REPO, 'reports')));
    expect(leftovers(repo.root)).toEqual([]);
  });

  it('an invalid environment exits 1 with file, path, value and what is allowed, and leaves dist/ byte-identical', async () => {
    repo = tempRepo({ withDist: true });
    writeFileSync(join(repo.root, 'dist/prod/stale.k8s.yaml'), 'kind: Stale\n');
    const before = snapshotTree(join(repo.root, 'dist'));
    repo.editEnvironment('staging', (e) => (e.nodePools[0].disruption = { budgets: [{ nodes: '150%' }] }));
    const r = await synthCli(repo.root);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: invalid input, nothing was written\n' +
        'environments/staging.yaml: nodePools[0].disruption.budgets[0].nodes: must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%), got "150%"\n',
    );
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(before);
  });

  it('errors in several files are all reported in one run', async () => {
    repo = tempRepo({ withDist: true });
    repo.writeEnvironmentText('dev', 'cluster: [\n');
    repo.editEnvironment('prod', (e) => (e.nodePools[0].expireAfter = '1x'));
    const r = await synthCli(repo.root);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'error: invalid input, nothing was written',
      'environments/dev.yaml:2:1: (top level): is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      'environments/prod.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
    ]);
  });

  it('--env prod replaces dist/prod only; stale files there are removed, other environments untouched', async () => {
    repo = tempRepo({ withDist: true });
    writeFileSync(join(repo.root, 'dist/prod/NodePool.removed.k8s.yaml'), 'kind: NodePool\n');
    writeFileSync(join(repo.root, 'dist/dev/untouched.k8s.yaml'), 'kind: Other\n');
    const r = await synthCli(repo.root, '--env', 'prod');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^synthesized prod \(8 objects\) into dist\/ \(argocd\/ left as is: --env given\) in \d+ ms\n$/);
    expect(existsSync(join(repo.root, 'dist/prod/NodePool.removed.k8s.yaml'))).toBe(false);
    expect(existsSync(join(repo.root, 'dist/dev/untouched.k8s.yaml'))).toBe(true);
  });

  it('GIVEN an environment named constructor (a valid name, and Object.prototype\'s) WHEN synthesized THEN it is written like any other', async () => {
    repo = tempRepo({ withDist: true });
    // Before: "There is already a Construct with name 'constructor'", exit 2 (the constructs library keeps children in a plain object).
    repo.writeEnvironmentText('constructor', readFileSync(join(REPO, 'environments/dev.yaml'), 'utf8').replace('name: karpenter-dev', 'name: karpenter-constructor'));
    const outputs = JSON.parse(readFileSync(join(REPO, 'infra/outputs/dev.json'), 'utf8').replaceAll('karpenter-dev', 'karpenter-constructor'));
    writeFileSync(join(repo.root, 'infra/outputs/constructor.json'), `${JSON.stringify(outputs, null, 2)}\n`);
    writeFileSync(join(repo.root, 'gitops.yaml'), `${readFileSync(join(repo.root, 'gitops.yaml'), 'utf8')}  constructor:\n    destination: {name: karpenter-constructor}\n`);
    const r = await synthCli(repo.root);
    expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^synthesized constructor \(4 objects\), dev \(4 objects\)/);
    const rename = (text: string) => text.replaceAll('karpenter-dev', 'karpenter-constructor').replaceAll('environment: dev', 'environment: constructor');
    const dev = snapshotTree(join(repo.root, 'dist/dev'));
    expect(snapshotTree(join(repo.root, 'dist/constructor'))).toEqual(Object.fromEntries(Object.entries(dev).map(([f, text]) => [f, rename(text)])));
  });

  it('a full synth removes the directory of an environment that no longer exists', async () => {
    repo = tempRepo({ withDist: true });
    mkdirSync(join(repo.root, 'dist/old'));
    writeFileSync(join(repo.root, 'dist/old/NodePool.x.k8s.yaml'), 'kind: NodePool\n');
    expect((await synthCli(repo.root)).code).toBe(0);
    expect(readdirSync(join(repo.root, 'dist')).sort()).toEqual(['dev', 'prod', 'staging']);
  });

  it('GIVEN --help THEN the usage on stdout and exit 0', () => {
    repo = tempRepo();
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'charts/main.ts'), '--help'], { cwd: REPO, encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]\n', '']);
  });

  it('an unknown --env and an unknown flag are errors, not crashes', async () => {
    repo = tempRepo();
    const unknownEnv = await synthCli(repo.root, '--env', 'qa');
    expect(unknownEnv.code).toBe(1);
    expect(unknownEnv.stderr).toBe('error: invalid input, nothing was written\nenvironments: (top level): has no environment "qa"; environments are: dev, prod, staging\n');
    const unknownFlag = await synthCli(repo.root, '--envv', 'qa');
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toBe("error: Unknown option '--envv'. Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]\n");
    expect(existsSync(join(repo.root, 'dist'))).toBe(false);
  });
});

describe('cdk8s synth (the ecosystem command) runs the same app', () => {
  let repo: ReturnType<typeof checkout>;
  afterEach(() => repo?.dispose());

  /** cdk8s.yaml as shipped, with the app command pointing at this checkout's entry point. */
  function withCdk8sYaml(root: string) {
    const config = parse(readFileSync(join(REPO, 'cdk8s.yaml'), 'utf8'));
    const tsx = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
    config.app = `${process.execPath} --import ${tsx} ${join(REPO, 'charts/main.ts')}`;
    config.imports = [];
    writeFileSync(join(root, 'cdk8s.yaml'), JSON.stringify(config));
  }
  const cdk8s = (root: string, ...args: string[]) => spawnSync(join(REPO, 'node_modules/.bin/cdk8s'), ['synth', ...args], { cwd: root, encoding: 'utf8' });

  it('GIVEN the shipped cdk8s.yaml THEN its output is a scratch directory, not dist/', () => {
    expect(parse(readFileSync(join(REPO, 'cdk8s.yaml'), 'utf8')).output).toBe('.cdk8s.out');
  });

  it('GIVEN valid input WHEN cdk8s synth runs THEN the app writes dist/ and argocd/ as npm run synth does, and a copy into the scratch directory', () => {
    repo = tempRepo();
    withCdk8sYaml(repo.root);
    const r = cdk8s(repo.root);
    expect(r.status, r.stderr).toBe(0);
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(snapshotTree(join(REPO, 'dist')));
    expect(snapshotTree(join(repo.root, 'argocd'))).toEqual(snapshotTree(join(REPO, 'argocd')));
    expect(snapshotTree(join(repo.root, '.cdk8s.out'))).toEqual(snapshotTree(join(REPO, 'dist')));
    expect(r.stdout).toContain('  - .cdk8s.out/dev/EC2NodeClass.default.k8s.yaml\n');
  });

  it('GIVEN an invalid environment WHEN cdk8s synth runs THEN it fails and dist/, argocd/ and the schema stay byte-identical', () => {
    repo = checkout();
    withCdk8sYaml(repo.root);
    repo.editEnvironment('dev', (e) => (e.nodePools[0].expireAfter = '1x'));
    const before = generatedState(repo.root);
    const r = cdk8s(repo.root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('environments/dev.yaml: nodePools[0].expireAfter: must be a duration');
    expect(generatedState(repo.root)).toEqual(before);
    expect(leftovers(repo.root)).toEqual([]);
  });
});

describe('CDK8S_OUTDIR that is not a generated directory is refused before anything is touched', () => {
  let repo: ReturnType<typeof checkout>;
  afterEach(() => repo?.dispose());

  it.each([
    ['environments', 'environments/, which synth does not generate'],
    ['.', 'the repository root'],
    ['/tmp', 'a directory outside the repository'],
    ['crds/karpenter', 'crds/, which synth does not generate'],
  ])('GIVEN CDK8S_OUTDIR=%s THEN exit 1, one line, nothing changed', async (outdir, what) => {
    repo = checkout();
    repo.editEnvironment('dev', (e) => (e.karpenter.replicas = 2));
    const before = generatedState(repo.root);
    const crds = snapshotTree(join(repo.root, 'crds'));
    const r = await synthInProcess(repo.root, [], { CDK8S_OUTDIR: outdir }, repo.root);
    expect(r.stderr).toBe(
      `error: CDK8S_OUTDIR=${outdir} is ${what}; synth writes only dist/ (or .cdk8s.out/, the scratch directory cdk8s.yaml gives cdk8s synth), so it refuses before touching anything\n`,
    );
    expect(r.status).toBe(1);
    expect(generatedState(repo.root)).toEqual(before);
    expect(snapshotTree(join(repo.root, 'crds'))).toEqual(crds);
  });
});

/**
 * Runs a full synth that must be refused: exit 1, exactly `lines` on stderr after the
 * headline, and every file of the repository (dist/, argocd/, environments/schema.json,
 * outputs files) byte-identical afterwards.
 */
async function expectRefused(root: string, lines: readonly string[]) {
  const before = snapshotTree(root);
  const r = await synthCli(root);
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n').filter(Boolean)).toEqual(['error: invalid input, nothing was written', ...lines]);
  expect(snapshotTree(root)).toEqual(before);
}

describe('npm run synth: every problem of every stage in one run, sorted by file', () => {
  let repo: ReturnType<typeof tempRepo>;
  afterEach(() => repo.dispose());

  it('GIVEN a bad environment file, a bad outputs file of another environment and an http:// URL in gitops.yaml WHEN synthesized THEN all three are reported, exit 1, nothing changed', async () => {
    repo = tempRepo({ withDist: true });
    repo.editEnvironment('dev', (e) => (e.nodePools[0].expireAfter = '1x'));
    repo.editOutputs('staging', (o) => (o.accountId = '1234'));
    const gitops = join(repo.root, 'gitops.yaml');
    writeFileSync(gitops, readFileSync(gitops, 'utf8').replace('url: https://git.example.com/', 'url: http://git.example.com/'));
    await expectRefused(repo.root, [
      'environments/dev.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
      'gitops.yaml: repository.url: must be a Git repository URL such as https://git.example.com/platform/karpenter-gitops.git or git@git.example.com:platform/karpenter-gitops.git, got "http://git.example.com/platform/karpenter-gitops.git"',
      'infra/outputs/staging.json: accountId: must be a 12-digit AWS account id, got "1234"',
    ]);
  });

  it('GIVEN an environment gitops.yaml does not cover, and a CEL violation in another environment WHEN synthesized THEN both are reported, the CEL one at the environment file', async () => {
    repo = tempRepo({ withDist: true });
    repo.editEnvironment('staging', (e) => (e.nodeClasses[0].capacityReservationSelectorTerms = [{ id: 'cr-0123456789abcdef0', tags: { team: 'a' } }]));
    const gitops = join(repo.root, 'gitops.yaml');
    writeFileSync(gitops, readFileSync(gitops, 'utf8').replace(/ {2}prod:\n {4}destination: \{name: karpenter-prod\}\n/, ''));
    await expectRefused(repo.root, [
      'environments/staging.yaml: nodeClasses[0].capacityReservationSelectorTerms: \'id\' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term (EC2NodeClass/default spec.capacityReservationSelectorTerms), got [{"id":"cr-0123456789abcdef0","tags":{"team":"a"}}]',
      'gitops.yaml: environments: has no entry for environment "prod" (environments/prod.yaml); add a destination or fleet for it',
    ]);
  });

  it('GIVEN a broken environment file WHEN synthesized THEN gitops.yaml is still checked against every environment file, loaded or not (no false "names no environment file")', async () => {
    repo = tempRepo({ withDist: true });
    repo.writeEnvironmentText('prod', 'cluster: [\n');
    await expectRefused(repo.root, [
      'environments/prod.yaml:2:1: (top level): is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });

  it('GIVEN an outputs file destroy left behind and a controller with more replicas than system nodes WHEN synthesized THEN both are reported in one run', async () => {
    repo = tempRepo({ withDist: true });
    writeFileSync(join(repo.root, 'infra/outputs/dev.json'), '{\n  "destroyed": true,\n  "clusterName": "karpenter-dev"\n}\n');
    repo.editEnvironment('prod', (e) => (e.karpenter.replicas = 5));
    await expectRefused(repo.root, [
      "environments/prod.yaml: karpenter.replicas: must be at most cluster.systemNodeGroup.size (2): the chart's required anti-affinity puts one controller per system node, the rest would stay Pending, got 5",
      'infra/outputs/dev.json: (top level): records that `npm run infra -- destroy` deleted cluster "karpenter-dev", its roles and its queue: nothing can be synthesized against it; run `npm run infra -- apply --env <env>` to recreate them (it rewrites this file), or remove the environment',
    ]);
  });

  it('GIVEN a workload named like the Karpenter chart\'s Deployment in its namespace WHEN synthesized THEN exit 1 naming the workload and the chart object, not a stack trace', async () => {
    repo = tempRepo({ withDist: true });
    repo.editEnvironment('staging', (e) => {
      e.workloads[0].name = 'karpenter';
      e.workloads[0].namespace = 'kube-system';
    });
    await expectRefused(repo.root, [
      'environments/staging.yaml:76:11: workloads[0].name: must not be "karpenter" in namespace kube-system: the Karpenter chart (Application staging-karpenter) renders Deployment and PodDisruptionBudget kube-system/karpenter too, and two Applications would fight over them; rename the workload',
    ]);
  });
});
