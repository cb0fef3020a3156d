/**
 * Karpenter's node-selector requirement algebra, ported from sigs.k8s.io/karpenter v1.13.0
 * `pkg/scheduling/requirement.go` and `requirements.go`, so the analyzer admits exactly
 * the instance types Karpenter's scheduler would. A requirement is a value set (or its
 * complement) plus optional inclusive integer bounds: `Gt N` is stored as `>= N+1`,
 * `Lt N` as `<= N-1`; `Exists` is the complement of the empty set; `DoesNotExist` the
 * empty set.
 */

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** One entry of a NodePool's `requirements` (or a pod's matchExpressions). */
export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values?: readonly string[];
  readonly minValues?: number;
}

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

/** `NewRequirementWithFlexibility`: bounds operators take their (prevalidated) first value. */
export function newRequirement(r: NodeSelectorRequirement): Requirement {
  const key = NORMALIZED_LABELS[r.key] ?? r.key;
  const values = r.values ?? [];
  const minValues = r.minValues;
  const bound = () => atoi(values[0] ?? '') ?? 0; // the CRD's CEL rules reject anything else
  switch (r.operator) {
    case 'In':
      return { key, complement: false, values: new Set(values), minValues };
    case 'DoesNotExist':
      return { key, complement: false, values: new Set(), minValues };
    case 'NotIn':
      return { key, complement: true, values: new Set(values), minValues };
    case 'Exists':
      return { key, complement: true, values: new Set(), minValues };
    case 'Gt':
      if (bound() >= Number.MAX_SAFE_INTEGER) return { key, complement: false, values: new Set(), minValues }; // Gt MaxInt matches nothing
      return { key, complement: true, values: new Set(), gte: bound() + 1, minValues };
    case 'Lt':
      return { key, complement: true, values: new Set(), lte: bound() - 1, minValues };
    case 'Gte':
      return { key, complement: true, values: new Set(), gte: bound(), minValues };
    case 'Lte':
      return { key, complement: true, values: new Set(), lte: bound(), minValues };
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
export function intersect(a: Requirement, b: Requirement): Requirement {
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

/** Set.some without copying (this runs for every type of the catalogue, per pool). */
function someValue(values: ReadonlySet<string>, test: (v: string) => boolean): boolean {
  for (const v of values) if (test(v)) return true;
  return false;
}

/** `Requirement.Operator`: bounds read as Exists, a complement with values as NotIn. */
export function operatorOf(r: Requirement): 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' {
  if (r.complement) return r.values.size > 0 ? 'NotIn' : 'Exists';
  return r.values.size > 0 ? 'In' : 'DoesNotExist';
}

/** `Requirement.Has`: whether the requirement allows this value. */
export function allows(r: Requirement, value: string): boolean {
  return (r.complement ? !r.values.has(value) : r.values.has(value)) && withinBounds(value, r.gte, r.lte);
}

/** `NewNodeSelectorRequirementsWithMinValues` + `Add`: entries on one key intersect. */
export function requirementsOf(list: readonly NodeSelectorRequirement[]): Map<string, Requirement> {
  const out = new Map<string, Requirement>();
  for (const r of list) add(out, newRequirement(r));
  return out;
}

/** `Requirements.Add`. */
export function add(into: Map<string, Requirement>, r: Requirement): void {
  const existing = into.get(r.key);
  into.set(r.key, existing ? intersect(existing, r) : r);
}

const NEGATIVE = new Set(['NotIn', 'DoesNotExist']);

/** One key of `Requirements.Intersects`: whether `existing` and `incoming` conflict. */
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

/** Requirement of an instance type's own label: `In [value]`, or `DoesNotExist` when it has none. */
export function labelRequirement(key: string, value: string | undefined): Requirement {
  return { key, complement: false, values: new Set(value === undefined ? [] : [value]) };
}

/** For messages: `karpenter.k8s.aws/instance-cpu >=5`. */
export function describe(r: Requirement): string {
  const op = operatorOf(r);
  let s = op === 'Exists' || op === 'DoesNotExist' ? `${r.key} ${op}` : `${r.key} ${op} [${[...r.values].sort().join(', ')}]`;
  if (r.gte !== undefined) s += ` >=${r.gte}`;
  if (r.lte !== undefined) s += ` <=${r.lte}`;
  if (r.minValues !== undefined) s += ` minValues ${r.minValues}`;
  return s;
}
