/**
 * Differential test: for single pods, Karpenter's cheapest option (the Go binary, real
 * Provisioner.Schedule) equals "the cheapest admitted type that fits", computed here
 * independently from the catalogue by a small oracle that knows nothing of Karpenter.
 */
import { describe, expect, inject, it } from 'vitest';
import { readCatalogue } from '../../catalogue/catalogue.js';
import { runSimulation } from '../../simulate/contract.js';
import { daemonSetObject } from '../../simulate/daemonsets.js';
import { adhocPods } from '../../simulate/inputs.js';
import { REPO } from '../support/repo.js';

const catalogue = readCatalogue(REPO, 'us-east-1');
const ZONES = ['us-east-1a', 'us-east-1b'];
/** One DaemonSet with 100m and 200Mi: the oracle adds the same, plus its pod slot. */
const DAEMON = { cpu: 0.1, memory: 200 * 2 ** 20 };

type Req = { key: string; operator: 'In' | 'NotIn' | 'Gt' | 'Lt' | 'Exists'; values?: string[] };

/** Kubernetes quantities as plain numbers (cores, bytes, counts). */
function num(q: string): number {
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G)?$/.exec(q);
  if (!m) throw new Error(`quantity must look like 940m or 14103Mi, got ${q}`);
  const mult: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9 };
  return Number(m[1]) * (m[2] ? mult[m[2]]! : 1);
}

/** Capacity type is an offering's, not a type's: every priced type is offered as both. */
function admits(labels: Record<string, string>, reqs: Req[]): boolean {
  return reqs.filter((r) => r.key !== 'karpenter.sh/capacity-type').every((r) => {
    const v = labels[r.key];
    switch (r.operator) {
      case 'In':
        return v !== undefined && r.values!.includes(v);
      case 'NotIn':
        return v === undefined || !r.values!.includes(v);
      case 'Gt':
        return v !== undefined && Number(v) > Number(r.values![0]);
      case 'Lt':
        return v !== undefined && Number(v) < Number(r.values![0]);
      case 'Exists':
        return v !== undefined;
    }
  });
}

/** The oracle: admitted by the pool's requirements and the pod's arch, priced, with room for the pod and the DaemonSet. */
function cheapestFit(reqs: Req[], pod: { cpu: string; memory?: string; arch?: string }): { name: string; price: number } | undefined {
  const cpu = num(pod.cpu) + DAEMON.cpu;
  const memory = (pod.memory ? num(pod.memory) : 0) + DAEMON.memory;
  const fits = Object.entries(catalogue.instanceTypes)
    .filter(([, t]) => t.onDemandPrice !== null && admits(t.labels, reqs) && (!pod.arch || t.labels['kubernetes.io/arch'] === pod.arch))
    .filter(([, t]) => num(t.resources['cpu']!) >= cpu && num(t.resources['memory']!) >= memory && num(t.resources['pods']!) >= 2)
    .map(([name, t]) => ({ name, price: t.onDemandPrice! }))
    .sort((a, b) => a.price - b.price || (a.name < b.name ? -1 : 1));
  return fits[0];
}

const PROD: Req[] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
  { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
];
/** Article 2's pool: spot, both architectures, six families, no tiny sizes. */
const MULTI_ARCH: Req[] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
  { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'c6g', 'm5', 'm6g', 'r5', 'r6g'] },
  { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['nano', 'micro', 'small'] },
];

const CASES: { pool: Req[]; pod: { cpu: string; memory?: string; arch?: string } }[] = [
  { pool: PROD, pod: { cpu: '250m', memory: '128Mi' } },
  { pool: PROD, pod: { cpu: '1' } },
  { pool: PROD, pod: { cpu: '1.5', memory: '12Gi' } },
  { pool: PROD, pod: { cpu: '7', memory: '4Gi' } },
  { pool: PROD, pod: { cpu: '2', memory: '60Gi' } },
  { pool: PROD, pod: { cpu: '60', memory: '200Gi' } },
  { pool: MULTI_ARCH, pod: { cpu: '1', memory: '1.5Gi' } },
  { pool: MULTI_ARCH, pod: { cpu: '3', memory: '20Gi', arch: 'amd64' } },
  { pool: MULTI_ARCH, pod: { cpu: '500m', arch: 'arm64' } },
];

describe('cheapest option vs an independent oracle', () => {
  it.each(CASES)('pool $pool.2.values, pod $pod', ({ pool, pod }) => {
    const daemonSets = [daemonSetObject({ name: 'agent', namespace: 'kube-system', requests: { cpu: '100m', memory: '200Mi' } })];
    const nodePool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'pool' },
      spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: pool } } },
    };
    const nodeClass = { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'default' }, spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] } };
    const out = runSimulation(inject('simulateBinary'), {
      zones: ZONES,
      nodePools: [nodePool],
      nodeClasses: [nodeClass],
      daemonSets,
      pods: adhocPods({ kind: 'adhoc', pods: 1, ...pod }),
      catalogue,
      runs: 1,
    });
    const want = cheapestFit(pool, pod);
    expect(want).toBeDefined();
    expect(out.pending).toEqual([]);
    expect({ name: out.nodeClaims[0]!.instanceTypes[0]!.name, price: out.nodeClaims[0]!.instanceTypes[0]!.minPrice }).toEqual(want);
  });
});
