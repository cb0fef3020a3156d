/**
 * What Karpenter refuses or cannot use at run time although the CRDs' schema and CEL
 * accept it: the NodePool syncs green, then stays not ready or never launches a node.
 * Each rule names the Karpenter source it mirrors, at the pinned versions
 * (sigs.k8s.io/karpenter@v1.13.0, github.com/aws/karpenter-provider-aws@v1.13.1).
 * Pure functions over plain data; the zod schemas turn their answers into issues.
 */

import { intersection, type Requirement, type RequirementInput } from './node-requirements.js';
import { own } from './own.js';

/**
 * Values Karpenter knows for a key; an `In` that lists none of them is refused.
 * core pkg/apis/v1/labels.go WellKnownValuesForRequirements (capacity-type) and the AWS
 * provider's pkg/apis/v1/labels.go init (instance-tenancy); checked by
 * core pkg/apis/v1/nodeclaim_validation.go validateWellKnownValues.
 */
export const WELL_KNOWN_VALUES: Readonly<Record<string, readonly string[]>> = {
  'karpenter.sh/capacity-type': ['on-demand', 'spot', 'reserved'],
  'karpenter.k8s.aws/instance-tenancy': ['dedicated', 'default'],
};

/**
 * Values an AWS instance type can carry for a key, where Karpenter does not refuse others
 * but no instance type would ever match them: the AWS provider labels instance types with
 * `kubernetes.io/arch` from AWSToKubeArchitectures only (provider pkg/apis/v1/labels.go;
 * pkg/providers/instancetype/types.go computeRequirements), so `x86_64` matches nothing.
 */
export const OFFERED_VALUES: Readonly<Record<string, readonly string[]>> = {
  'kubernetes.io/arch': ['amd64', 'arm64'],
};

export type RequirementLike = RequirementInput;

/** Why an `In` requirement's values cannot work for a key with known values, if they cannot. */
export function knownValuesProblem(req: RequirementLike): string | undefined {
  const values = req.values ?? [];
  // An In without values is refused on its own (the CRD's rule); nothing to add.
  if (req.operator !== 'In' || values.length === 0) return undefined;
  const known = own(WELL_KNOWN_VALUES, req.key);
  if (known) {
    const valid = values.filter((v) => known.includes(v));
    if (valid.length === 0) return `must include one of ${known.join(', ')} for ${req.key} (Karpenter refuses the NodePool otherwise)`;
    if (req.minValues !== undefined && valid.length < req.minValues) {
      return `must include at least minValues (${req.minValues}) of ${known.join(', ')} for ${req.key}, has ${valid.length}`;
    }
  }
  const offered = own(OFFERED_VALUES, req.key);
  if (offered && !values.some((v) => offered.includes(v))) {
    return `must include ${offered.join(' or ')} for ${req.key}: no AWS instance type carries any other value${values.includes('x86_64') ? ' (x86_64 is EC2\'s name for amd64)' : ''}`;
  }
  return undefined;
}

/**
 * `NewRequirement` as the schema's own refinements need it: the values here are not
 * validated yet (a bad bound is refused with its own message), so a bound reads with
 * Number(): one that is not a number is NaN, which no value satisfies and no other bound
 * crosses, and adds no second, misleading error. Validated requirements go through
 * node-requirements.ts toRequirement, which reads bounds as Go's Atoi does.
 */
function toReq(r: RequirementLike): Requirement {
  const n = Number(r.values?.[0]);
  const req = (complement: boolean, values: readonly string[] = [], bounds: { gte?: number; lte?: number } = {}): Requirement => ({ key: r.key, complement, values: new Set(values), ...bounds });
  switch (r.operator) {
    case 'In':
      return req(false, r.values);
    case 'NotIn':
      return req(true, r.values);
    case 'Exists':
      return req(true);
    case 'Gt':
      return req(true, [], { gte: n + 1 });
    case 'Gte':
      return req(true, [], { gte: n });
    case 'Lt':
      return req(true, [], { lte: n - 1 });
    case 'Lte':
      return req(true, [], { lte: n });
    default: // DoesNotExist
      return req(false);
  }
}

/**
 * Keys whose requirements (and the pool's label on the key, which Karpenter adds as
 * `In [value]`) intersect to nothing: no node can satisfy them, so the pool never launches.
 * A key with only DoesNotExist entries is a real request (the label must be absent).
 */
export function emptyIntersections(requirements: readonly RequirementLike[], labels: Readonly<Record<string, string>> = {}): Array<{ key: string; entries: string[] }> {
  const describe = (r: RequirementLike) => `${r.operator}${r.values && r.values.length > 0 ? ` [${r.values.join(', ')}]` : ''}`;
  const entries = [
    ...requirements.map((r) => ({ req: r, text: describe(r) })),
    ...Object.entries(labels).map(([key, value]) => ({ req: { key, operator: 'In', values: [value] }, text: `label "${value}"` })),
  ];
  const out: Array<{ key: string; entries: string[] }> = [];
  for (const key of new Set(entries.map((e) => e.req.key))) {
    const own = entries.filter((e) => e.req.key === key);
    // An In without values is refused on its own; DoesNotExist alone asks for an absent label.
    if (own.some((e) => e.req.operator === 'In' && (e.req.values ?? []).length === 0)) continue;
    if (own.every((e) => e.req.operator === 'DoesNotExist')) continue;
    const result = own.map((e) => toReq(e.req)).reduce(intersection);
    if (!result.complement && result.values.size === 0) out.push({ key, entries: own.map((e) => e.text) });
  }
  return out;
}

export interface TaintLike {
  readonly key: string;
  readonly effect: string;
}

/**
 * Taints and startup taints sharing a key and effect: core
 * pkg/apis/v1/nodeclaim_validation.go validateTaintsField ("duplicate taint Key/Effect
 * pair"), one set across both lists. Returns the list and index of each repeat.
 */
export function duplicateTaints(taints: readonly TaintLike[], startupTaints: readonly TaintLike[]): Array<{ field: 'taints' | 'startupTaints'; index: number; first: string }> {
  const seen = new Map<string, string>();
  const out: Array<{ field: 'taints' | 'startupTaints'; index: number; first: string }> = [];
  for (const [field, list] of [['taints', taints], ['startupTaints', startupTaints]] as const) {
    list.forEach((t, index) => {
      const id = `${t.key}\u0000${t.effect}`;
      const first = seen.get(id);
      if (first !== undefined) out.push({ field, index, first });
      else seen.set(id, `${field}[${index}]`);
    });
  }
  return out;
}
