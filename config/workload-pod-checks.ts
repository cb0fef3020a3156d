import type { NodePoolConfig } from './karpenter-schema.js';
import { KARPENTER_AWS_WELL_KNOWN_LABELS } from './karpenter-schema.js';
import { allows, incompatibility, requirementsOf, type RequirementInput, type Requirements } from './node-requirements.js';
import { containerSecurityContext, podSecurityContext, podSecurityViolations } from './pod-security.js';
import { resolveNodePool } from './presets.js';
import { allowedCapacityTypes, untainted, WORKLOAD_DEFAULTS, type WorkloadConfig, type WorkloadProblem } from './workload-schema.js';

/**
 * Checks of a workload's Kubernetes pod fields against the rest of the environment:
 * whether any NodePool can launch a node its nodeSelector and node affinity accept
 * (Karpenter's own requirement semantics, config/node-requirements.ts), whether its
 * security contexts meet its Pod Security level, and labels that would break the selector.
 */

const NODEPOOL_KEY = 'karpenter.sh/nodepool';
const CAPACITY_TYPE_KEY = 'karpenter.sh/capacity-type';
const SELECTOR_KEY = 'app.kubernetes.io/name';

/**
 * Labels instance types define, so a pool need not (Karpenter's WellKnownLabels with the
 * AWS provider's additions, karpenter-provider-aws v1.13.1 pkg/apis/v1/labels.go).
 */
export const WELL_KNOWN_LABELS: ReadonlySet<string> = new Set([
  NODEPOOL_KEY,
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  CAPACITY_TYPE_KEY,
  'node.kubernetes.io/windows-build',
  'topology.k8s.aws/zone-id',
  ...KARPENTER_AWS_WELL_KNOWN_LABELS.filter((k) => k !== 'karpenter.k8s.aws/ec2nodeclass'),
]);

/**
 * What a NodePool's nodes can be, as Karpenter's NodeClaimTemplate sees it: its requirements
 * (preset applied) and labels, its name and node class; with no capacity-type requirement,
 * the capacity types allowedCapacityTypes grants it.
 */
export function poolRequirements(pool: NodePoolConfig): Requirements {
  const p = resolveNodePool(pool);
  const reqs: RequirementInput[] = [...(p.requirements ?? [])];
  if (!reqs.some((r) => r.key === CAPACITY_TYPE_KEY)) reqs.push({ key: CAPACITY_TYPE_KEY, operator: 'In', values: allowedCapacityTypes(pool) });
  return requirementsOf(reqs, { ...p.labels, [NODEPOOL_KEY]: p.name, 'karpenter.k8s.aws/ec2nodeclass': p.nodeClass });
}

/** The pools a workload's pods may use before its selectors: the one it names, or every pool whose taints it tolerates (none). */
function candidatePools(pools: readonly NodePoolConfig[], w: WorkloadConfig): NodePoolConfig[] {
  return w.nodePool === undefined ? pools.filter(untainted) : pools.filter((p) => p.name === w.nodePool);
}

/** nodeSelector as the pod will carry it: the workload's, with nodePool and capacityType. */
function selectorRequirements(w: WorkloadConfig): RequirementInput[] {
  const selector = { ...w.nodeSelector, ...(w.nodePool && { [NODEPOOL_KEY]: w.nodePool }), ...(w.capacityType && { [CAPACITY_TYPE_KEY]: w.capacityType }) };
  return Object.entries(selector).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
}

function requiredTerms(w: WorkloadConfig): RequirementInput[][] {
  const terms = w.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return terms ? terms.map((t) => t.matchExpressions) : [[]];
}

/** Why no pool fits `extra` with any required term, pool by pool; empty when one does. */
function unsatisfiedBy(pools: readonly NodePoolConfig[], w: WorkloadConfig, extra: readonly RequirementInput[], terms = requiredTerms(w)): string[] {
  const reasons: string[] = [];
  for (const pool of pools) {
    const node = poolRequirements(pool);
    const why = terms.map((term) => incompatibility(node, requirementsOf([...selectorRequirements(w), ...term, ...extra]), WELL_KNOWN_LABELS));
    if (why.some((r) => r === undefined)) return [];
    reasons.push(`NodePool "${pool.name}": ${why.length === 1 ? why[0] : why.map((r, i) => `term ${i}: ${r}`).join(', ')}`);
  }
  return reasons;
}

/** Pools whose nodes the pods' required selectors accept. */
export function reachablePools(pools: readonly NodePoolConfig[], w: WorkloadConfig): NodePoolConfig[] {
  return candidatePools(pools, w).filter((p) => unsatisfiedBy([p], w, []).length === 0);
}

/** Errors: selectors no pool can satisfy, a selector key that contradicts nodePool/capacityType, the selector label, Pod Security. */
export function checkPodFields(pools: readonly NodePoolConfig[], w: WorkloadConfig): WorkloadProblem[] {
  const out: WorkloadProblem[] = [];
  const pinned: Array<[string, string | undefined, string]> = [
    [NODEPOOL_KEY, w.nodePool, 'nodePool'],
    [CAPACITY_TYPE_KEY, w.capacityType, 'capacityType'],
  ];
  for (const [key, value, field] of pinned) {
    const own = w.nodeSelector?.[key];
    if (own !== undefined && value !== undefined && own !== value) {
      out.push({ path: ['nodeSelector', key], message: `must not contradict ${field} "${value}": no node has both`, value: own });
    }
  }
  if (w.podLabels?.[SELECTOR_KEY] !== undefined) {
    out.push({ path: ['podLabels', SELECTOR_KEY], message: `must not be set: it is the Deployment's selector, always the workload's name ("${w.name}")`, value: w.podLabels[SELECTOR_KEY] });
  }
  const level = w.podSecurity ?? 'restricted';
  out.push(...podSecurityViolations(level, podSecurityContext(w.podSecurityContext), containerSecurityContext(w.securityContext)));

  const pools0 = candidatePools(pools, w);
  if (pools0.length === 0 || out.some((p) => p.path[0] === 'nodeSelector')) return out;
  const plain = unsatisfiedBy(pools0, w, [], [[]]);
  if (plain.length > 0) {
    // Without a nodeSelector of its own, nodePool or capacityType is the culprit, and their checks say so.
    if (Object.keys(w.nodeSelector ?? {}).length > 0) {
      out.push({ path: ['nodeSelector'], message: `must match nodes some NodePool can launch; none can: ${plain.join('; ')}`, value: w.nodeSelector });
    }
    return out;
  }
  const required = unsatisfiedBy(pools0, w, []);
  if (required.length > 0) {
    out.push({
      path: ['affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution'],
      message: `must match nodes some NodePool can launch; none can: ${required.join('; ')}`,
      value: w.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
    });
  }
  return out;
}

/** Warnings: preferred node affinity no pool can satisfy (it never applies). */
export function podFieldWarnings(pools: readonly NodePoolConfig[], w: WorkloadConfig): string[] {
  const pools0 = candidatePools(pools, w);
  const preferred = w.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  if (pools0.length === 0) return [];
  return preferred.flatMap((p, i) => {
    const why = unsatisfiedBy(pools0, w, p.preference.matchExpressions);
    return why.length === 0
      ? []
      : [`affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}]: no NodePool it may use can launch such a node, so the preference never applies: ${why.join('; ')}`];
  });
}

/** The pools the pods reach that may put them on Spot (their own capacity-type pin considered). */
export function spotPoolsFor(pools: readonly NodePoolConfig[], w: WorkloadConfig): NodePoolConfig[] {
  if ((w.capacityType ?? w.nodeSelector?.[CAPACITY_TYPE_KEY] ?? 'spot') !== 'spot') return [];
  return reachablePools(pools, w).filter((p) => allows(poolRequirements(p).get(CAPACITY_TYPE_KEY)!, 'spot'));
}

/** The replicas: 1 warning, saying what can actually take the node away given the pools the pods reach. */
export function replicasOneWarning(pools: readonly NodePoolConfig[], w: WorkloadConfig): string | undefined {
  if ((w.replicas ?? WORKLOAD_DEFAULTS.replicas) !== 1) return undefined;
  return spotPoolsFor(pools, w).length > 0
    ? 'replicas 1: every Spot reclaim, consolidation or drift of its node is an outage; run 2 or more'
    : 'replicas 1: every consolidation, drift or expiry of its node is an outage; run 2 or more';
}
