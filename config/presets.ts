import type { NodePoolConfig } from './karpenter-schema.js';

/**
 * NodePool presets: the shapes the two source articles recommend, plus a cheap dev pool.
 * An environment picks one with `preset:` and overrides any field; requirements are
 * merged by key (see mergeRequirements), everything else is replaced field by field.
 *
 * Every preset admits only Nitro types (no Xen-era c1-c4, m1-m4, t1-t2) and no size below
 * 2 GiB (nano, micro, small): Karpenter packs pods onto the cheapest type that fits, and
 * a t3.nano holds 4 pods and almost no memory once the EKS DaemonSets run. Each stays
 * wide enough for Spot: AWS asks for flexibility across at least 10 types and several
 * families. The numbers below are from catalogue/us-east-1.json (Karpenter v1.13.1's
 * 1,204 types); test/config/presets.test.ts recomputes them from the raw catalogue.
 */
export type PresetName = NonNullable<NodePoolConfig['preset']>;
type PresetFields = Pick<NodePoolConfig, 'requirements' | 'expireAfter' | 'limits' | 'disruption'>;

/** Budgets of article 1: at most 10% of nodes at a time; none during weekday business hours. */
const BUSINESS_HOURS_BUDGETS = [
  { nodes: '10%' },
  { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' },
];

export const PRESETS: Record<PresetName, PresetFields> = {
  /**
   * Article 1 (prod): Spot first, On-Demand when Spot has no capacity; x86 c/m/r from
   * generation 6, all Nitro. Admits 406 types in 38 families (c6a...r8id), 1-384 vCPU,
   * 2 GiB-3 TiB; nothing older or smaller to exclude.
   */
  'spot-with-on-demand-fallback': {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
    ],
    expireAfter: '720h',
    limits: { cpu: '100' },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: BUSINESS_HOURS_BUDGETS },
  },
  /**
   * Article 2 (staging): Spot only, diversified across x86 and Graviton. Admits 54 types
   * in 6 families (27 amd64, 27 arm64), 1-96 vCPU, 2-768 GiB: all Nitro, none below 2 GiB.
   */
  'spot-multi-arch': {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'c6g', 'm5', 'm6g', 'r5', 'r6g'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['nano', 'micro', 'small'] },
    ],
    expireAfter: '720h',
    limits: { cpu: '1000', memory: '1000Gi' },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '10%' }] },
  },
  /**
   * Dev: Spot only, up to 4 vCPU per node, a hard cap of 16 vCPU. Admits 144 types in 59
   * families (c5...c8in, m5...m8id, t3, t3a, t4g; 87 amd64, 57 arm64), 2-16 GiB. Before,
   * it admitted 176 types in 68 families, 23 of them Xen (t1.micro, m1.small, m2.2xlarge,
   * c3.large, ...) and 11 below 2 GiB (t2.nano, t3.nano, ...).
   */
  'spot-small': {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 't'] },
      { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['4'] },
      { key: 'karpenter.k8s.aws/instance-hypervisor', operator: 'NotIn', values: ['xen'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['nano', 'micro', 'small'] },
    ],
    expireAfter: '168h',
    limits: { cpu: '16', memory: '64Gi' },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets: [{ nodes: '20%' }] },
  },
};

type Requirement = NonNullable<NodePoolConfig['requirements']>[number];

/**
 * Preset requirements with the pool's own merged in: a key the pool sets replaces every
 * preset entry for that key (at the first one's place); keys the preset lacks append.
 * Several entries for one key are kept: Karpenter intersects them (Gte 2 and Lte 8).
 */
export function mergeRequirements(base: readonly Requirement[], own: readonly Requirement[]): Requirement[] {
  const ownKeys = new Set(own.map((o) => o.key));
  const merged: Requirement[] = [];
  const placed = new Set<string>();
  for (const r of base) {
    if (!ownKeys.has(r.key)) merged.push(r);
    else if (!placed.has(r.key)) {
      merged.push(...own.filter((o) => o.key === r.key));
      placed.add(r.key);
    }
  }
  return [...merged, ...own.filter((o) => !base.some((b) => b.key === o.key))];
}

/** The pool with its preset applied; fields the pool sets win. */
export function resolveNodePool(pool: NodePoolConfig): NodePoolConfig {
  const preset: PresetFields = pool.preset ? PRESETS[pool.preset] : {};
  return {
    ...pool,
    requirements: mergeRequirements(preset.requirements ?? [], pool.requirements ?? []),
    expireAfter: pool.expireAfter ?? preset.expireAfter,
    limits: pool.limits ?? preset.limits,
    disruption: { ...preset.disruption, ...pool.disruption },
  };
}
