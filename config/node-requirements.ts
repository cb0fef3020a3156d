import { own } from './own.js';
/**
 * Karpenter's node-selector requirement algebra, ported from sigs.k8s.io/karpenter v1.13.0
 * `pkg/scheduling/requirement.go` and `requirements.go`: one port for every reader, so the
 * workload and overlay checks (config/), the analyzer (analyze/) and the drift review
 * (diff/) judge requirements exactly as Karpenter's scheduler does, and alike.
 *
 * A requirement is a value set (or its complement) plus optional inclusive integer bounds:
 * `Gt N` is stored as `>= N+1`, `Lt N` as `<= N-1`; `Exists` is the complement of the empty
 * set; `DoesNotExist` the empty set. A NodePool is the intersection of its requirements and
 * labels; a pod fits it when every key both constrain intersects, and every key only the
 * pod constrains is one Karpenter knows (instance types define it) or is a NotIn/DoesNotExist.
 */

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** A requirement as written: a NodePool's, a NodeOverlay's or a pod's node selector term. */
export interface RequirementInput {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
  readonly minValues?: number;
}

/** A requirement as a manifest types it (the analyzer reads NodePools and pods as written). */
export interface NodeSelectorRequirement extends RequirementInput {
  readonly operator: Operator;
}

/** One key's allowed values: a set, or its complement, with optional inclusive integer bounds. */
export interface Requirement {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte?: number;
  readonly lte?: number;
  readonly minValues?: number;
}

/** Requirements by key; several entries for one key are intersected, as Karpenter's Add does. */
export type Requirements = ReadonlyMap<string, Requirement>;

/** Deprecated keys Karpenter rewrites before anything else (`v1.NormalizedLabels`). */
export const NORMALIZED_LABELS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
};

/** Go's strconv.Atoi: optional sign, decimal digits, nothing else (no spaces, no "1.0", no "0x1"). */
export function atoi(value: string): number | undefined {
  return /^[+-]?\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * `NewRequirementWithFlexibility`: bounds operators take their (prevalidated) first value;
 * any other operator falls through to the complement of the empty set (Exists), as in Go.
 */
export function toRequirement(r: RequirementInput): Requirement {
  const key = own(NORMALIZED_LABELS, r.key) ?? r.key;
  const values = r.values ?? [];
  const minValues = r.minValues;
  const bound = () => atoi(values[0] ?? '') ?? 0; // the schemas and the CRD's CEL rules reject anything else
  switch (r.operator) {
    case 'In':
      return { key, complement: false, values: new Set(values), minValues };
    case 'DoesNotExist':
      return { key, complement: false, values: new Set(), minValues };
    case 'NotIn':
      return { key, complement: true, values: new Set(values), minValues };
    case 'Gt':
      if (bound() >= Number.MAX_SAFE_INTEGER) return { key, complement: false, values: new Set(), minValues }; // Gt MaxInt matches nothing
      return { key, complement: true, values: new Set(), gte: bound() + 1, minValues };
    case 'Lt':
      return { key, complement: true, values: new Set(), lte: bound() - 1, minValues };
    case 'Gte':
      return { key, complement: true, values: new Set(), gte: bound(), minValues };
    case 'Lte':
      return { key, complement: true, values: new Set(), lte: bound(), minValues };
    default: // Exists
      return { key, complement: true, values: new Set(), minValues };
  }
}

/** Non-integer values never satisfy a bound. */
function withinBounds(value: string, gte: number | undefined, lte: number | undefined): boolean {
  if (gte === undefined && lte === undefined) return true;
  const n = atoi(value);
  if (n === undefined) return false;
  return (gte === undefined || n >= gte) && (lte === undefined || n <= lte);
}

const maxOf = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const minOf = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** `Requirement.Intersection`. */
export function intersection(a: Requirement, b: Requirement): Requirement {
  const complement = a.complement && b.complement;
  let gte = maxOf(a.gte, b.gte);
  let lte = minOf(a.lte, b.lte);
  const minValues = maxOf(a.minValues, b.minValues);
  if (gte !== undefined && lte !== undefined && gte > lte) return { key: a.key, complement: false, values: new Set(), minValues };
  let values: Set<string>;
  if (a.complement && b.complement) values = new Set([...a.values, ...b.values]);
  else if (a.complement) values = new Set([...b.values].filter((v) => !a.values.has(v)));
  else if (b.complement) values = new Set([...a.values].filter((v) => !b.values.has(v)));
  else values = new Set([...a.values].filter((v) => b.values.has(v)));
  for (const v of values) if (!withinBounds(v, gte, lte)) values.delete(v);
  if (!complement) gte = lte = undefined; // a concrete set carries no bounds
  return { key: a.key, complement, values, gte, lte, minValues };
}

/** `Requirement.HasIntersection`. */
export function hasIntersection(a: Requirement, b: Requirement): boolean {
  const gte = maxOf(a.gte, b.gte);
  const lte = minOf(a.lte, b.lte);
  if (gte !== undefined && lte !== undefined && gte > lte) return false;
  if (a.complement && b.complement) return true;
  if (a.complement) return someValue(b.values, (v) => !a.values.has(v) && withinBounds(v, gte, lte));
  if (b.complement) return someValue(a.values, (v) => !b.values.has(v) && withinBounds(v, gte, lte));
  return someValue(a.values, (v) => b.values.has(v) && withinBounds(v, gte, lte));
}

/** Set.some without copying (the analyzer runs this for every type of the catalogue, per pool). */
function someValue(values: ReadonlySet<string>, test: (v: string) => boolean): boolean {
  for (const v of values) if (test(v)) return true;
  return false;
}

/** `Requirement.Operator`: bounds read as Exists, a complement with values as NotIn. */
export function operatorOf(r: Requirement): 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' {
  if (r.complement) return r.values.size > 0 ? 'NotIn' : 'Exists';
  return r.values.size > 0 ? 'In' : 'DoesNotExist';
}

/** `Requirement.Has`: whether a node labelled `value` satisfies it. */
export function allows(r: Requirement, value: string): boolean {
  return (r.complement ? !r.values.has(value) : r.values.has(value)) && withinBounds(value, r.gte, r.lte);
}

/** `Requirements.Add`: entries on one key intersect. */
function add(into: Map<string, Requirement>, r: Requirement): void {
  const existing = into.get(r.key);
  into.set(r.key, existing ? intersection(existing, r) : r);
}

/**
 * `NewNodeSelectorRequirementsWithMinValues` + `Add` over a list, then each label as
 * `In [value]` (as `NewNodeClaimTemplate` adds a NodePool's template labels).
 */
export function requirementsOf(inputs: readonly RequirementInput[], labels: Readonly<Record<string, string>> = {}): Map<string, Requirement> {
  const out = new Map<string, Requirement>();
  for (const r of inputs) add(out, toRequirement(r));
  for (const [key, value] of Object.entries(labels)) add(out, toRequirement({ key, operator: 'In', values: [value] }));
  return out;
}

const NEGATIVE = new Set(['NotIn', 'DoesNotExist']);

/** One key of `Requirements.Intersects`: whether `existing` and `incoming` conflict; two negative requirements never do. */
export function conflicts(existing: Requirement, incoming: Requirement): boolean {
  if (hasIntersection(existing, incoming)) return false;
  return !(NEGATIVE.has(operatorOf(incoming)) && NEGATIVE.has(operatorOf(existing)));
}

/**
 * `Requirements.Intersects`: the first key on which `existing` (an instance type's
 * requirements) and `incoming` (a pool's or pod's) share no value; undefined when
 * compatible. Keys only one side defines are not compared. Where both sides are
 * negative (NotIn/DoesNotExist), a missing label satisfies them: `NotIn [x]` admits a
 * type that lacks the label.
 */
export function firstConflict(existing: Requirements, incoming: Requirements): string | undefined {
  const [small, large] = existing.size <= incoming.size ? [existing, incoming] : [incoming, existing];
  for (const key of small.keys()) {
    if (!large.has(key)) continue;
    if (conflicts(existing.get(key)!, incoming.get(key)!)) return key;
  }
  return undefined;
}

/**
 * `Requirements.Compatible(pod, AllowUndefinedWellKnownLabels)`: why a pod with these
 * requirements cannot fit a node with `node`'s, or undefined when it can. `wellKnown`
 * are the keys instance types define (Karpenter's WellKnownLabels, core and AWS).
 */
export function incompatibility(node: Requirements, pod: Requirements, wellKnown: ReadonlySet<string>): string | undefined {
  for (const [key, req] of pod) {
    if (wellKnown.has(key) || node.has(key) || NEGATIVE.has(operatorOf(req))) continue;
    return `label "${key}" does not have known values`;
  }
  for (const [key, incoming] of pod) {
    const existing = node.get(key);
    if (existing && conflicts(existing, incoming)) return `${describeRequirement(incoming)} not in ${describeRequirement(existing)}`;
  }
  return undefined;
}

/** Requirement of an instance type's own label: `In [value]`, or `DoesNotExist` when it has none. */
export function labelRequirement(key: string, value: string | undefined): Requirement {
  return { key, complement: false, values: new Set(value === undefined ? [] : [value]) };
}

/**
 * `Requirement.String`, for messages: `kubernetes.io/arch In [amd64]`,
 * `karpenter.k8s.aws/instance-generation Exists >=6`. Unlike Go's, it leaves minValues
 * out: these messages are about which nodes fit, which minValues does not decide.
 */
export function describeRequirement(r: Requirement): string {
  const op = operatorOf(r);
  let s = op === 'Exists' || op === 'DoesNotExist' ? `${r.key} ${op}` : `${r.key} ${op} [${[...r.values].sort().join(' ')}]`;
  if (r.gte !== undefined) s += ` >=${r.gte}`;
  if (r.lte !== undefined) s += ` <=${r.lte}`;
  return s;
}
