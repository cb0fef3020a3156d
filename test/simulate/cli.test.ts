/**
 * `npm run simulate`: flags, inputs read from dist/<env>/ and the environment, and the
 * committed report. The process tests run the real CLI and the real binary.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEnvironment } from '../../config/environment.js';
import { podSourceFrom } from '../../simulate/args.js';
import { distObjects, prepare, readDist, zonesFor } from '../../simulate/inputs.js';
import { synthesize } from '../../charts/synth.js';
import { REPO, tempRepo } from '../support/repo.js';

function cli(args: string[], root = REPO) {
  const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'simulate/cli.ts'), '--root', root, ...args], { cwd: REPO, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('flags', () => {
  it.each([
    [{ pods: '3' }, '--pods needs --cpu (the request of each pod)'],
    [{ pods: '0', cpu: '1' }, '--pods must be an integer of at least 1, got "0"'],
    [{ pods: '2', cpu: 'lots' }, '--cpu must be a Kubernetes quantity such as 1, 500m or 1.5Gi, got "lots"'],
    [{ pods: '2', cpu: '1', arch: 'x86' }, '--arch must be one of amd64, arm64, got "x86"'],
    [{ pods: '2', cpu: '1', spread: 'rack' }, '--spread must be one of zone, hostname, got "rack"'],
    [{ pods: '2', cpu: '1', workload: ['inflate'] }, '--pods makes up pods; it cannot be combined with --workload or --replicas'],
    [{ cpu: '1' }, '--cpu describes made-up pods and needs --pods'],
    [{ replicas: '3' }, '--replicas needs --workload (which Deployment to scale)'],
    [{ workload: ['inflate'], replicas: '-1' }, '--replicas must be an integer of at least 0, got "-1"'],
  ])('%o is refused: %s', (flags, message) => {
    expect(() => podSourceFrom(flags)).toThrow(message);
  });

  it('reads ad hoc pods and Deployments', () => {
    expect(podSourceFrom({ pods: '30', cpu: '1', memory: '1.5Gi', arch: 'arm64', spread: 'zone' })).toEqual({ kind: 'adhoc', pods: 30, cpu: '1', memory: '1.5Gi', arch: 'arm64', spread: 'zone' });
    expect(podSourceFrom({ workload: ['checkout-api'], replicas: '30' })).toEqual({ kind: 'deployments', names: ['checkout-api'], replicas: 30 });
    expect(podSourceFrom({})).toEqual({ kind: 'deployments' });
  });
});

describe('inputs', () => {
  it('takes NodePools, EC2NodeClasses and Deployments from dist/<env>/ as synthesized', () => {
    const dist = readDist(REPO, 'prod');
    expect(dist.nodePools.map((o) => o.metadata.name)).toEqual(['critical', 'default']);
    expect(dist.nodeClasses.map((o) => o.metadata.name)).toEqual(['default']);
    expect(dist.deployments.map((o) => o.metadata.name)).toEqual(['checkout-api', 'inflate']);
  });

  it('classifies objects already in memory (npm run diff) exactly as it reads dist/<env>/ from disk', () => {
    const fromDisk = readDist(REPO, 'prod');
    const synthesized = synthesize({ root: REPO, only: ['prod'] }).environments[0]!.objects;
    expect(distObjects(synthesized, 'dist/prod')).toEqual(fromDisk);
    expect(() => distObjects(synthesized.filter((o) => o.kind !== 'NodePool'), 'abc123:dist/prod')).toThrow('abc123:dist/prod: (top level): must hold at least one karpenter.sh/v1 NodePool, got none');
    expect(() => distObjects([{ kind: 'NodePool', metadata: { name: 'x' } }], 'abc123:dist/prod')).toThrow('abc123:dist/prod: apiVersion:');
  });

  it('makes each Deployment its replicas of pods, or --replicas of them', () => {
    const p = prepare({ root: REPO, env: 'prod', pods: { kind: 'deployments' }, runs: 1 });
    // checkout-api has 3 replicas in dist/prod/; inflate has 0
    expect((p.input.pods as { metadata: { name: string; namespace: string } }[]).map((x) => `${x.metadata.namespace}/${x.metadata.name}`)).toEqual([
      'checkout/checkout-api-0',
      'checkout/checkout-api-1',
      'checkout/checkout-api-2',
    ]);
    expect(prepare({ root: REPO, env: 'prod', pods: { kind: 'deployments', names: ['inflate'], replicas: 10 }, runs: 1 }).input.pods).toHaveLength(10);
  });

  it('names the Deployments there are when asked for one that is not', () => {
    expect(() => prepare({ root: REPO, env: 'prod', pods: { kind: 'deployments', names: ['checkout'] }, runs: 1 })).toThrow(
      'dist/prod: (top level): has no Deployment "checkout"; Deployments are: checkout-api, inflate',
    );
  });

  it('defaults zones to <region>a,b,c and reads cluster.availabilityZones when the environment has it', () => {
    const shipped = loadEnvironment(join(REPO, 'environments/prod.yaml'), 'environments/prod.yaml');
    const { availabilityZones: _z, ...clusterWithout } = shipped.config.cluster;
    const env = { ...shipped, config: { ...shipped.config, cluster: clusterWithout } };
    expect(zonesFor(env)).toEqual({ zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], source: 'default us-east-1a,b,c; set cluster.availabilityZones in environments/prod.yaml to change' });
    expect(zonesFor(shipped)).toEqual({ zones: shipped.config.cluster.availabilityZones, source: 'environments/prod.yaml cluster.availabilityZones' });
    const withZones = { ...env, config: { ...env.config, cluster: { ...env.config.cluster, availabilityZones: ['us-east-1d', 'us-east-1f'] } } };
    expect(zonesFor(withZones).zones).toEqual(['us-east-1d', 'us-east-1f']);
  });

  it('uses the environment daemonSets instead of the EKS defaults', () => {
    const repo = tempRepo({ withDist: true });
    try {
      cpCatalogue(repo.root);
      repo.editEnvironment('prod', (e) => (e.daemonSets = [{ name: 'node-exporter', requests: { cpu: '200m', memory: '300Mi' } }]));
      const p = prepare({ root: repo.root, env: 'prod', pods: { kind: 'deployments' }, runs: 1 });
      expect(p.daemonSetsSource).toBe('environment');
      expect(p.input.daemonSets).toHaveLength(1);
      expect(JSON.stringify(p.input.daemonSets[0])).toContain('"requests":{"cpu":"200m","memory":"300Mi"}');
    } finally {
      repo.dispose();
    }
  });
});

function cpCatalogue(root: string) {
  spawnSync('cp', ['-r', join(REPO, 'catalogue'), join(root, 'catalogue')]);
}

describe('npm run simulate (process)', () => {
  it('prints the plan for prod and says what it assumed', () => {
    const r = cli(['--env', 'prod', '--pods', '1', '--cpu', '1', '--runs', '1']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('DaemonSets on every node (EKS add-on defaults): aws-node (cpu 25m), kube-proxy (cpu 100m), eks-pod-identity-agent (no requests)');
    expect(r.stdout).toContain('1 NodeClaim(s)');
    expect(r.stdout).toMatch(/cheapest first: c6a\.large \$0\.0765/);
  });

  it('fails naming the input when dist/<env>/ is missing, writing nothing', () => {
    const repo = tempRepo();
    try {
      cpCatalogue(repo.root);
      const r = cli(['--env', 'prod'], repo.root);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^error: invalid input, nothing was written\ndist\/prod: \(top level\): cannot be read: ENOENT/);
    } finally {
      repo.dispose();
    }
  });

  it('keeps the committed reports/<env>.simulation.md equal to a fresh simulation', () => {
    const repo = tempRepo({ withDist: true });
    try {
      cpCatalogue(repo.root);
      const r = cli(['--write'], repo.root);
      expect(r.status).toBe(0);
      for (const env of ['dev', 'prod', 'staging']) {
        expect(readFileSync(join(repo.root, 'reports', `${env}.simulation.md`), 'utf8')).toBe(readFileSync(join(REPO, 'reports', `${env}.simulation.md`), 'utf8'));
      }
    } finally {
      repo.dispose();
    }
  });
});
