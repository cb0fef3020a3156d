/**
 * Karpenter's own scheduler (the Go binary, real Provisioner.Schedule) on hand-checkable
 * scenarios. Inputs are built here, in the shape dist/ has, with the vendored catalogue;
 * each test says why Karpenter's answer is right.
 */
import { describe, expect, inject, it } from 'vitest';
import { readCatalogue, type CatalogueInstanceType } from '../../catalogue/catalogue.js';
import { runSimulation, type SimulationInput, type SimulationOutput } from '../../simulate/contract.js';
import { daemonSetObject, defaultDaemonSets } from '../../simulate/daemonsets.js';
import { adhocPods } from '../../simulate/inputs.js';
import { REPO } from '../support/repo.js';

const catalogue = readCatalogue(REPO, 'us-east-1');
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
/** aws-node 25m + kube-proxy 100m (+ eks-pod-identity-agent, no requests): 125m and 3 pod slots per node. */
const daemonSets = defaultDaemonSets({ cluster: { identity: 'podIdentity' } } as never).map(daemonSetObject);

type Req = { key: string; operator: string; values?: string[]; minValues?: number };
const PROD_DEFAULT: Req[] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
  { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
];

function nodePool(name: string, opts: { requirements?: Req[]; limits?: Record<string, string>; weight?: number; taints?: unknown[] } = {}) {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: opts.requirements ?? PROD_DEFAULT,
          expireAfter: '720h',
          ...(opts.taints && { taints: opts.taints }),
        },
      },
      ...(opts.limits && { limits: opts.limits }),
      ...(opts.weight !== undefined && { weight: opts.weight }),
    },
  };
}

const nodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], role: 'KarpenterNodeRole-test', subnetSelectorTerms: [{ tags: { a: 'b' } }], securityGroupSelectorTerms: [{ tags: { a: 'b' } }] },
};

function simulate(nodePools: unknown[], pods: unknown[]): SimulationOutput {
  const input: SimulationInput = { zones: ZONES, nodePools, nodeClasses: [nodeClass], daemonSets, pods, catalogue, runs: 1 };
  return runSimulation(inject('simulateBinary'), input);
}

const cpuOf = (t: CatalogueInstanceType) => Number(t.labels['karpenter.k8s.aws/instance-cpu']);

describe('Karpenter v1.13 Provisioner.Schedule, offline', () => {
  it('puts one pod of 1 vCPU on the cheapest admitted type that holds it plus the DaemonSets', () => {
    // GIVEN prod's default pool (c/m/r, generation > 5, amd64) and one pod requesting 1 vCPU
    // WHEN Karpenter schedules it
    const out = simulate([nodePool('default')], adhocPods({ kind: 'adhoc', pods: 1, cpu: '1' }));
    // THEN one NodeClaim whose cheapest option is c6a.large: the 1-vCPU c7a.medium ($0.0513)
    // has 940m allocatable, less than 1 + 0.125 vCPU of DaemonSets; c6a.large (2 vCPU,
    // 1930m allocatable) is the cheapest type of the pool with room, at $0.0765 On-Demand.
    expect(out.pending).toEqual([]);
    expect(out.nodeClaims).toHaveLength(1);
    expect(out.nodeClaims[0]!.instanceTypes[0]).toEqual({ name: 'c6a.large', minPrice: 0.0765, maxPrice: 0.0765 });
    expect(catalogue.instanceTypes['c7a.medium']!.resources['cpu']).toBe('940m');
    expect(out.nodeClaims[0]!.requests).toEqual({ cpu: '1125m', pods: '4' });
  });

  it('leaves pods pending with the limits reason when 150 pods of 1 vCPU meet limits.cpu 100', () => {
    // GIVEN limits {cpu: "100"} and 150 pods of 1 vCPU (150 vCPU of requests)
    const out = simulate([nodePool('default', { limits: { cpu: '100' } })], adhocPods({ kind: 'adhoc', pods: 150, cpu: '1' }));
    // THEN at least 50 stay pending, with Karpenter's limits reason
    const pending = out.pending.reduce((n, p) => n + p.count, 0);
    expect(pending).toBeGreaterThanOrEqual(50);
    expect(out.pending.map((p) => p.reason)).toContain('all available instance types exceed limits for nodepool (NodePool=default)');
    // AND the scheduler charged each NodeClaim its largest option's vCPUs, which stay within 100 (trap 10)
    const charged = out.nodeClaims.reduce((n, nc) => n + Math.max(...nc.instanceTypes.map((o) => cpuOf(catalogue.instanceTypes[o.name]!))), 0);
    expect(charged).toBeLessThanOrEqual(100);
  });

  it('never offers amd64 types from an arm64-only pool', () => {
    const arm = PROD_DEFAULT.map((r) => (r.key === 'kubernetes.io/arch' ? { ...r, values: ['arm64'] } : r));
    const out = simulate([nodePool('graviton', { requirements: arm })], adhocPods({ kind: 'adhoc', pods: 3, cpu: '1' }));
    const archs = new Set(out.nodeClaims.flatMap((nc) => nc.instanceTypes.map((o) => catalogue.instanceTypes[o.name]!.labels['kubernetes.io/arch'])));
    expect(out.nodeClaims.length).toBeGreaterThan(0);
    expect([...archs]).toEqual(['arm64']);
  });

  it('keeps a pod off a pool whose taint it does not tolerate', () => {
    const taint = { key: 'workload-class', value: 'critical', effect: 'NoSchedule' };
    // GIVEN only a tainted pool: the pod stays pending with the taint reason
    const alone = simulate([nodePool('critical', { taints: [taint] })], adhocPods({ kind: 'adhoc', pods: 1, cpu: '1' }));
    expect(alone.nodeClaims).toEqual([]);
    expect(alone.pending).toEqual([{ workload: 'default/adhoc', count: 1, reason: 'did not tolerate taint (taint=workload-class=critical:NoSchedule)' }]);
    // GIVEN the tainted pool weighs more than an untainted one: the pod still goes to the untainted one
    const both = simulate([nodePool('critical', { taints: [taint], weight: 100 }), nodePool('default')], adhocPods({ kind: 'adhoc', pods: 1, cpu: '1' }));
    expect(both.nodeClaims.map((nc) => nc.nodePool)).toEqual(['default']);
  });

  it('gives one NodeClaim per zone to pods spread over zones', () => {
    const out = simulate([nodePool('default')], adhocPods({ kind: 'adhoc', pods: 3, cpu: '1', spread: 'zone' }));
    expect(out.nodeClaims).toHaveLength(3);
    expect(out.nodeClaims.map((nc) => nc.zones)).toEqual(expect.arrayContaining(ZONES.map((z) => [z])));
  });

  it('keeps at least minValues options, packing fewer pods per NodeClaim to do so', () => {
    // GIVEN six types; with room for k pods of 1 vCPU (+125m DaemonSets): k=1 all six,
    // k=2..3 c6a.xlarge, c6a.2xlarge, m6a.xlarge (3920m+), k=4..7 c6a.2xlarge only (7910m)
    const types = ['c6a.large', 'c6a.xlarge', 'c6a.2xlarge', 'm6a.large', 'm6a.xlarge', 'r6a.large'];
    const pool = (minValues?: number) =>
      nodePool('default', { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: types, ...(minValues && { minValues }) }] });
    const pods = adhocPods({ kind: 'adhoc', pods: 6, cpu: '1' });
    // WHEN instance-type minValues is 3: each NodeClaim stops at 3 pods, keeping 3 options
    const withMin = simulate([pool(3)], pods);
    expect(withMin.nodeClaims.map((nc) => nc.instanceTypes.map((o) => o.name).sort())).toEqual([
      ['c6a.2xlarge', 'c6a.xlarge', 'm6a.xlarge'],
      ['c6a.2xlarge', 'c6a.xlarge', 'm6a.xlarge'],
    ]);
    // WHEN there is no minValues: one NodeClaim takes all six pods, and only c6a.2xlarge holds them
    const without = simulate([pool()], pods);
    expect(without.nodeClaims.map((nc) => nc.instanceTypes.map((o) => o.name))).toEqual([['c6a.2xlarge']]);
  });

  it('lets pool weight decide between two pools that both fit', () => {
    const c = PROD_DEFAULT.map((r) => (r.key === 'karpenter.k8s.aws/instance-category' ? { ...r, values: ['c'] } : r));
    const r = PROD_DEFAULT.map((q) => (q.key === 'karpenter.k8s.aws/instance-category' ? { ...q, values: ['r'] } : q));
    const pod = adhocPods({ kind: 'adhoc', pods: 1, cpu: '1' });
    // The heavier pool wins even though its r types cost more than the c types of the other.
    expect(simulate([nodePool('compute', { requirements: c, weight: 10 }), nodePool('memory', { requirements: r, weight: 50 })], pod).nodeClaims.map((nc) => nc.nodePool)).toEqual(['memory']);
    expect(simulate([nodePool('compute', { requirements: c, weight: 50 }), nodePool('memory', { requirements: r, weight: 10 })], pod).nodeClaims.map((nc) => nc.nodePool)).toEqual(['compute']);
  });
});
