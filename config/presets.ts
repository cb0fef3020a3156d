import type { NodePoolConfig } from './karpenter-schema.js';

/**
 * NodePool presets: the shapes the two source articles recommend, plus a cheap dev pool.
 * An environment picks one with `preset:` and overrides any field; requirements are
 * merged by key (see mergeRequirements), everything else is replaced field by field.
 */
export type PresetName = NonNullable<NodePoolConfig['preset']>;
type PresetFields = Pick<NodePoolConfig, 'requirements' | 'expireAfter' | 'limits' | 'disruption'>;

/** Budgets of article 1: at most 10% of nodes at a time; none during weekday business hours. */
const BUSINESS_HOURS_BUDGETS = [
  { nodes: '10%' },
  { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' },
];

export const PRESETS: Record<PresetName, PresetFields> = {
  /** Article 1: Spot first, On-Demand when Spot has no capacity; x86 c/m/r from generation 6. */
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
  /** Article 2: Spot only, diversified across x86 and Graviton families, no tiny sizes. */
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
  /** Dev: Spot only, small and medium burstable or general purpose, a hard cap of 16 vCPU. */
  'spot-small': {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 't'] },
      { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['4'] },
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
