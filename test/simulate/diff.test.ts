/**
 * `npm run diff` with the simulation: Karpenter's own scheduler (the real binary) on the
 * base's dist/ read with real git and on the change synthesized in memory. Each scenario's
 * answer is checked against a hand-derivation from the catalogue, not only against the
 * lines it prints.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { readCatalogue } from '../../catalogue/catalogue.js';
import { main, runDiff, type Io } from '../../diff/cli.js';
import type { EnvironmentSimulation, ScenarioComparison, Side } from '../../diff/simulation.js';
import type { SimulationOutput } from '../../simulate/contract.js';
import { gitRepo } from '../diff/support.js';
import { REPO } from '../support/repo.js';

const binary = inject('simulateBinary');
const SIMULATE = { run: true, binary: () => binary } as const;
const catalogue = readCatalogue(REPO, 'us-east-1');

let repo: ReturnType<typeof gitRepo> | undefined;
afterEach(() => {
  repo?.dispose();
  repo = undefined;
});

const pool = (doc: any, name: string) => doc.nodePools.find((p: any) => p.name === name);
const output = (s: Side): SimulationOutput => {
  if (s.status !== 'ran') throw new Error(`side must have run, got ${JSON.stringify(s)}`);
  return s.output;
};
function scenarios(env: EnvironmentSimulation | undefined): readonly ScenarioComparison[] {
  if (env?.status !== 'ran') throw new Error(`environment must have been simulated, got ${JSON.stringify(env)}`);
  return env.scenarios;
}

/**
 * The oracle for inflate (pods of 1 CPU, no memory request) on prod's `default` pool
 * (amd64, categories c, m, r, generation > 5): the types the pool admits whose vCPUs stay
 * within the CPU limit and whose allocatable CPU holds `pods` CPUs plus the DaemonSets'
 * `overhead` (by default 125m: aws-node 25m + kube-proxy 100m), cheapest On-Demand first.
 */
function inflateOptions(limitCpu: number, pods: number, overhead = 0.125): string[] {
  const cores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q));
  return Object.entries(catalogue.instanceTypes)
    .filter(([, t]) => {
      const l = t.labels;
      return (
        l['kubernetes.io/arch'] === 'amd64' &&
        ['c', 'm', 'r'].includes(l['karpenter.k8s.aws/instance-category']!) &&
        Number(l['karpenter.k8s.aws/instance-generation']) > 5 &&
        Number(l['karpenter.k8s.aws/instance-cpu']) <= limitCpu &&
        cores(t.resources['cpu']!) >= pods + overhead
      );
    })
    .sort(([a, x], [b, y]) => (x.onDemandPrice ?? Infinity) - (y.onDemandPrice ?? Infinity) || (a < b ? -1 : 1))
    .map(([n]) => n);
}

describe('npm run diff: what Karpenter would launch, before and after', () => {
  it("GIVEN prod's default pool cut to 8 CPUs WHEN diffed THEN inflate's 10 pods go from one 16-vCPU-class NodeClaim to one 8-vCPU NodeClaim of 7 pods and 3 pending on the limit", async () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').limits = { cpu: '8' };
    });
    const result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: SIMULATE });
    const [, inflate] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('prod') : undefined);
    const before = output(inflate!.before);
    const after = output(inflate!.after);

    // Before: limit 100. All 10 pods (10 CPUs + 125m) on one NodeClaim: every admitted type
    // with at least 10.125 allocatable CPUs and at most 100 vCPUs is an option.
    const beforeOptions = inflateOptions(100, 10);
    expect(before.nodeClaims.map((nc) => [nc.nodePool, nc.pods, nc.instanceTypes.length, nc.instanceTypes[0]!.name])).toEqual([
      ['default', [{ workload: 'default/inflate', count: 10 }], beforeOptions.length, beforeOptions[0]],
    ]);
    expect(before.pending).toEqual([]);
    // After: limit 8. Only types of at most 8 vCPUs remain; their 7.91 allocatable CPUs
    // less 125m hold 7 pods. The NodeClaim is charged its largest option, 8 CPUs, against
    // the limit: nothing is left for the other 3, which stay pending with the limits reason.
    const afterOptions = inflateOptions(8, 7);
    expect(after.nodeClaims.map((nc) => [nc.nodePool, nc.pods, nc.instanceTypes.map((o) => o.name).sort()])).toEqual([
      ['default', [{ workload: 'default/inflate', count: 7 }], [...afterOptions].sort()],
    ]);
    expect(after.nodeClaims[0]!.instanceTypes[0]).toMatchObject({ name: afterOptions[0], minPrice: catalogue.instanceTypes[afterOptions[0]!]!.onDemandPrice });
    expect(after.pending).toEqual([
      { workload: 'default/inflate', count: 3, reason: 'did not tolerate taint (taint=workload-class=critical:NoSchedule); all available instance types exceed limits for nodepool (NodePool=default)' },
    ]);

    // The lines a reviewer reads: checked above, so they can be spelled out here.
    expect([beforeOptions.length, beforeOptions[0], afterOptions.length, afterOptions[0]]).toEqual([192, 'c6a.4xlarge', 37, 'c6a.2xlarge']);
    const md = result.markdown;
    const section = md.slice(md.indexOf('**inflate at 10 replicas**'));
    expect(section.split('\n').slice(0, 10)).toEqual([
      '**inflate at 10 replicas** (pods: default/inflate x10):',
      '',
      '| | before | after |',
      '|---|---|---|',
      '| NodeClaims | 1: `default` on-demand or spot: 192 options from c6a.4xlarge $0.6120 | 1: `default` on-demand or spot: 37 options from c6a.2xlarge $0.3060 |',
      `| $/hour | $0.6120 .. $${Math.max(...before.nodeClaims[0]!.instanceTypes.map((o) => o.maxPrice)).toFixed(4)} | $0.3060 .. $${Math.max(...after.nodeClaims[0]!.instanceTypes.map((o) => o.maxPrice)).toFixed(4)} |`,
      '| pods pending | none | 3 |',
      '',
      '- pending after: default/inflate x3: did not tolerate taint (taint=workload-class=critical:NoSchedule); all available instance types exceed limits for nodepool (NodePool=default)',
      '',
    ]);
    expect(md).toContain('\nNote: this is one provisioning round: Karpenter charges each NodeClaim it plans its largest option against the NodePool limits');
    expect(md.indexOf('#### What Karpenter would launch')).toBeGreaterThan(md.indexOf('| NodePool `default` | `spec.limits.cpu` | not replaced |'));

    // Deterministic: the same change, diffed again through the CLI, prints the same bytes;
    // --fail-on pending names the scenarios that leave more pods pending and exits 1.
    let stdout = '';
    let stderr = '';
    const io: Io = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ensureBinary: () => binary };
    const status = await main(['--root', repo.root, '--base', 'main', '--env', 'prod', '--fail-on', 'pending'], io);
    expect(stdout).toBe(md);
    expect(status).toBe(1);
    expect(stderr).toBe('more pods pending after the change: prod: Every workload at its replicas, together\nmore pods pending after the change: prod: inflate at 10 replicas\n');
  });

  it("GIVEN prod's default pool cut to 8 CPUs WHEN diffed THEN checkout-api's 3 zone-spread pods: 1 pending before and 2 after, each NodeClaim charged its largest option against the limit", () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').limits = { cpu: '8' };
    });
    const result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: SIMULATE });
    const [workloads] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('prod') : undefined);
    const vcpus = (s: Side) => output(s).nodeClaims.map((nc) => Math.max(...nc.instanceTypes.map((o) => Number(catalogue.instanceTypes[o.name]!.labels['karpenter.k8s.aws/instance-cpu']))));
    const pending = (s: Side) => output(s).pending.map((p) => p.count);
    // Before (limit 100): the first NodeClaim's largest option has 96 vCPUs, leaving 4 for
    // the second, whose options are therefore at most 4 vCPUs; nothing is left for the third pod.
    expect([vcpus(workloads!.before), pending(workloads!.before)]).toEqual([[96, 4], [1]]);
    // After (limit 8): the first NodeClaim's largest option takes all 8; two pods stay pending.
    expect([vcpus(workloads!.after), pending(workloads!.after)]).toEqual([[8], [2]]);
    expect(result.markdown).toContain('| pods pending | 1 | 2 |\n');
  });

  it("GIVEN prod's default pool moved from amd64 to arm64 WHEN diffed THEN inflate's options are all amd64 before and all arm64 after, cheapest first", () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').requirements = [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }];
    });
    const result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: SIMULATE });
    const [, inflate] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('prod') : undefined);
    const arch = (s: Side) => [...new Set(output(s).nodeClaims.flatMap((nc) => nc.instanceTypes.map((o) => catalogue.instanceTypes[o.name]!.labels['kubernetes.io/arch'])))];
    expect([arch(inflate!.before), arch(inflate!.after)]).toEqual([['amd64'], ['arm64']]);
    // c6g.4xlarge: the cheapest arm64 type of categories c, m, r, generation > 5 with 16 vCPUs (10 pods + 125m need more than 8).
    const first = output(inflate!.after).nodeClaims[0]!.instanceTypes[0]!;
    expect([first.name, first.minPrice]).toEqual(['c6g.4xlarge', catalogue.instanceTypes['c6g.4xlarge']!.onDemandPrice]);
    expect(result.markdown).toContain('| NodeClaims | 1: `default` on-demand or spot: 192 options from c6a.4xlarge $0.6120 | 1: `default` on-demand or spot: ');
    expect(result.markdown).toMatch(/ \| 1: `default` on-demand or spot: \d+ options from c6g\.4xlarge \$0\.5440 \|\n/);
  });

  it('GIVEN a change Karpenter schedules the same (a node class tag) WHEN diffed THEN each scenario is one line saying unchanged, with its plan', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].tags = { team: 'payments' };
    });
    const result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: SIMULATE });
    const [workloads, inflate] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('prod') : undefined);
    // The EC2NodeClass differs between the sides, so both ran; Karpenter's answers are equal.
    expect(output(inflate!.after)).toEqual(output(inflate!.before));
    expect(output(workloads!.after)).toEqual(output(workloads!.before));
    expect(result.markdown).toContain(
      '\n**inflate at 10 replicas** (pods: default/inflate x10): unchanged: 1 NodeClaim: `default` on-demand or spot: 192 options from c6a.4xlarge $0.6120; $0.6120 .. $10.9011 per hour; pods pending: none.\n',
    );
    expect(result.markdown).toMatch(/\n\*\*Every workload at its replicas, together\*\* \(pods: checkout\/checkout-api x3\): unchanged: \d+ NodeClaims?: [^\n]+; pods pending: \d+\.\n/);
    expect(result.markdown).not.toContain('| | before | after |');
  });

  it("GIVEN only prod's daemonSets changed (a 2-CPU agent on every node) WHEN diffed THEN its manifests are unchanged, yet inflate's options shrink to the types with 12 CPUs free: each side is simulated with its own environment file", () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.daemonSets = [{ name: 'big-agent', namespace: 'monitoring', requests: { cpu: '2', memory: '1Gi' } }];
    });
    const result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: SIMULATE });
    expect(result.reviews.map((r) => r.status)).toEqual(['unchanged']);
    const [, inflate] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('prod') : undefined);
    const optionsOf = (s: Side) => output(s).nodeClaims.map((nc) => nc.instanceTypes.map((o) => o.name).sort());
    // Before: the base's file names no DaemonSets, so the EKS add-on defaults (125m); after: the 2-CPU agent.
    expect(optionsOf(inflate!.before)).toEqual([[...inflateOptions(100, 10)].sort()]);
    expect(optionsOf(inflate!.after)).toEqual([[...inflateOptions(100, 10, 2)].sort()]);
    expect(inflateOptions(100, 10, 2).length).toBeLessThan(inflateOptions(100, 10).length);
    const prod = result.markdown.slice(result.markdown.indexOf('### prod'));
    expect(prod.split('\n').slice(0, 5)).toEqual(['### prod', '', 'No change to its manifests.', '', '#### What Karpenter would launch']);
  });

  it('GIVEN the change adds an environment WHEN diffed THEN there is no before, and the after is simulated', () => {
    repo = gitRepo();
    const dev = readFileSync(join(repo.root, 'environments', 'dev.yaml'), 'utf8');
    writeFileSync(join(repo.root, 'environments', 'qa.yaml'), dev.replaceAll('karpenter-dev', 'karpenter-qa'));
    const outputs = readFileSync(join(repo.root, 'infra', 'outputs', 'dev.json'), 'utf8');
    writeFileSync(join(repo.root, 'infra', 'outputs', 'qa.json'), outputs.replaceAll('karpenter-dev', 'karpenter-qa'));
    const result = runDiff({ root: repo.root, base: 'main', env: 'qa', simulate: SIMULATE });
    const [none, inflate] = scenarios(result.simulation.status === 'ran' ? result.simulation.environments.get('qa') : undefined);
    expect([none!.before, inflate!.before]).toEqual([{ status: 'absent' }, { status: 'absent' }]);
    expect(output(inflate!.after).pending).toEqual([]);
    expect(result.markdown).toContain('### qa (new environment)');
    expect(result.markdown).toContain(
      '**Every workload at its replicas (this environment has none)** (pods: no pods):\n\n| | before | after |\n|---|---|---|\n| NodeClaims | (no environment) | 0 |\n| $/hour | (no environment) | $0.0000 .. $0.0000 |\n| pods pending | (no environment) | none |\n',
    );
  });

  it('GIVEN a base that cannot be simulated (its dist/ has no inflate) WHEN diffed THEN that side says why, in the Markdown and on stderr, and the rest still runs', async () => {
    repo = gitRepo();
    repo.git('checkout', '-q', 'main');
    repo.git('rm', '-q', 'dist/prod/Deployment.inflate.k8s.yaml');
    repo.git('commit', '-q', '-m', 'a base from before inflate');
    const base = repo.git('rev-parse', 'main').trim().slice(0, 12);
    repo.git('checkout', '-q', 'feature');
    let stdout = '';
    let stderr = '';
    const io: Io = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ensureBinary: () => binary };
    expect(await main(['--root', repo.root, '--base', 'main', '--env', 'prod'], io)).toBe(0);
    const why = `${base}:dist/prod: (top level): has no Deployment "inflate"; Deployments are: checkout-api`;
    expect(stderr).toBe(`warning: prod: inflate at 10 replicas, before the change: not simulated: ${why}\n`);
    expect(stdout).toContain(
      '**inflate at 10 replicas** (pods: default/inflate x10):\n\n| | before | after |\n|---|---|---|\n| NodeClaims | not simulated | 1: `default` on-demand or spot: 192 options from c6a.4xlarge $0.6120 |\n',
    );
    expect(stdout).toContain(`\n- before: not simulated: ${why}\n`);
    expect(stdout).toMatch(/\*\*Every workload at its replicas, together\*\* \(pods: checkout\/checkout-api x3\): unchanged: /);
    // --fail-on pending cannot compare a scenario whose base did not run: it says so and exits 2.
    stderr = '';
    expect(await main(['--root', repo.root, '--base', 'main', '--env', 'prod', '--fail-on', 'pending'], io)).toBe(2);
    expect(stderr.split('\n').slice(1)).toEqual(['error: --fail-on pending: cannot tell whether more pods stay pending, some simulations did not run', '']);
  });
});
