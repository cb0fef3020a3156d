import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, tempRepo } from '../support/repo.js';

/** Runs an entry point the way npm does, against `root`. */
function run(entry: string, root: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, entry), '--root', root, ...args], { cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ADMITS_NOTHING =
  'environments/dev.yaml: nodePools[0]: NodePool "default" admits no instance type of the catalogue (requirements: karpenter.sh/capacity-type In [spot]; kubernetes.io/arch In [amd64, arm64]; karpenter.k8s.aws/instance-category In [c, m, t]; karpenter.k8s.aws/instance-cpu Lte [4]; karpenter.k8s.aws/instance-hypervisor NotIn [xen]; karpenter.k8s.aws/instance-size NotIn [nano, micro, small]; karpenter.k8s.aws/instance-family In [p5]; AMI family al2023): Karpenter can never launch a node for it';

describe('npm run analyze', () => {
  let repo: ReturnType<typeof tempRepo> | undefined;
  afterEach(() => repo?.dispose());

  it('prints the report synth commits as reports/<env>.md, and writes nothing', () => {
    const r = run('analyze/cli.ts', REPO, '--env', 'staging');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const committed = readFileSync(join(REPO, 'reports/staging.md'), 'utf8');
    expect(r.stdout).toBe(committed.replace('](staging.svg)', '](reports/staging.svg)'));
  });

  it('--json gives the analysis for other tools', () => {
    const r = run('analyze/cli.ts', REPO, '--env', 'prod', '--json');
    expect(r.code).toBe(0);
    const [prod] = JSON.parse(r.stdout);
    expect(prod.pools.map((p: any) => [p.name, p.admitted.length])).toEqual([
      ['default', 406],
      ['critical', 264],
    ]);
    expect(r.stderr).toContain('warning: environments/prod.yaml: nodeClasses[0].amiSelectorTerms[0].alias: "al2023@latest" in a production environment');
  });

  it('a pool that admits nothing: analyze exits 1 naming it; synth refuses and writes nothing', () => {
    repo = tempRepo();
    repo.editEnvironment('dev', (e) => (e.nodePools[0].requirements = [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['p5'] }]));
    const analyze = run('analyze/cli.ts', repo.root, '--env', 'dev');
    expect(analyze.code).toBe(1);
    expect(analyze.stderr.split('\n')).toContain(`error: ${ADMITS_NOTHING}`);
    const synth = run('charts/main.ts', repo.root);
    expect(synth.code).toBe(1);
    expect(synth.stderr.split('\n').slice(0, 2)).toEqual(['error: invalid input, nothing was written', ADMITS_NOTHING]);
    expect(existsSync(join(repo.root, 'dist'))).toBe(false);
    expect(existsSync(join(repo.root, 'reports'))).toBe(false);
  });

  it('a region without a catalogue is not analyzed: a warning, no report, synth still succeeds', () => {
    repo = tempRepo();
    repo.editEnvironment('dev', (e) => {
      e.cluster.region = 'eu-west-1';
      delete e.cluster.availabilityZones;
    });
    repo.editOutputs('dev', (o) => (o.region = 'eu-west-1'));
    const synth = run('charts/main.ts', repo.root);
    expect(synth.code).toBe(0);
    expect(synth.stderr.split('\n')).toContain(
      'warning: environments/dev.yaml: cluster.region: "eu-west-1" has no instance catalogue (catalogue/eu-west-1.json), so its NodePools were not analyzed; run `npm run catalogue -- --region eu-west-1`',
    );
    expect(readdirSync(join(repo.root, 'reports')).sort()).toEqual(['prod.chart.json', 'prod.md', 'prod.svg', 'staging.chart.json', 'staging.md', 'staging.svg']);
  });

  it('an unknown flag is an error with the usage', () => {
    const r = run('analyze/cli.ts', REPO, '--bogus');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("error: Unknown option '--bogus'. Usage: npm run analyze [-- --env <name>[,<name>...]] [--json]\n");
  });
});
