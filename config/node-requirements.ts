/**
 * Karpenter's node requirement semantics, ported from sigs.k8s.io/karpenter v1.13.0
 * `pkg/scheduling/requirement.go` and `requirements.go`, so that a workload's
 * nodeSelector and node affinity are judged against each NodePool the way Karpenter's
 * scheduler judges them: a NodePool is the intersection of its requirements and labels
 * (plus karpenter.sh/nodepool and karpenter.k8s.aws/ec2nodeclass); a pod fits it when
 * every key both constrain intersects, and every key only the pod constrains is one
 * Karpenter knows (instance types define it) or is a NotIn/DoesNotExist.
 */

/** One key's allowed values: a set, or its complement, with optional inclusive integer bounds. */
export interface Requirement {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte?: number;
  readonly lte?: number;
}

export type Requirements = ReadonlyMap<string, Requirement>;

/** A requirement as written: a NodePool's, a NodeOverlay's or a pod's node selector term. */
export interface RequirementInput {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** Karpenter's NormalizedLabels: deprecated keys read as their stable names. */
const NORMALIZED_LABELS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
};

/** NewRequirement: Gt N becomes >= N+1 and Lt N becomes <= N-1, as Karpenter canonicalises them. */
export function toRequirement(r: RequirementInput): Requirement {
  const key = NORMALIZED_LABELS[r.key] ?? r.key;
  const values = r.values ?? [];
  const bound = Number.parseInt(values[0] ?? '', 10);
  switch (r.operator) {
    case 'In':
      return { key, complement: false, values: new Set(values) };
    case 'NotIn':
      return { key, complement: true, values: new Set(values) };
    case 'DoesNotExist':
      return { key, complement: false, values: new Set() };
    case 'Gt':
      return { key, complement: true, values: new Set(), gte: bound + 1 };
    case 'Lt':
      return { key, complement: true, values: new Set(), lte: bound - 1 };
    case 'Gte':
      return { key, complement: true, values: new Set(), gte: bound };
    case 'Lte':
      return { key, complement: true, values: new Set(), lte: bound };
    default: // Exists
      return { key, complement: true, values: new Set() };
  }
}

function withinBounds(value: string, gte?: number, lte?: number): boolean {
  if (gte === undefined && lte === undefined) return true;
  if (!/^[-+]?[0-9]+$/.test(value)) return false;
  const n = Number.parseInt(value, 10);
  return (gte === undefined || n >= gte) && (lte === undefined || n <= lte);
}

const maxOf = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const minOf = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** Requirement.Intersection. */
export function intersection(a: Requirement, b: Requirement): Requirement {
  const gte = maxOf(a.gte, b.gte);
  const lte = minOf(a.lte, b.lte);
  if (gte !== undefined && lte !== undefined && gte > lte) return { key: a.key, complement: false, values: new Set() };
  const complement = a.complement && b.complement;
  let values: string[];
  if (a.complement && b.complement) values = [...a.values, ...b.values];
  else if (a.complement) values = [...b.values].filter((v) => !a.values.has(v));
  else if (b.complement) values = [...a.values].filter((v) => !b.values.has(v));
  else values = [...a.values].filter((v) => b.values.has(v));
  values = values.filter((v) => withinBounds(v, gte, lte));
  return complement ? { key: a.key, complement, values: new Set(values), gte, lte } : { key: a.key, complement, values: new Set(values) };
}

/** Requirement.HasIntersection. */
export function hasIntersection(a: Requirement, b: Requirement): boolean {
  const gte = maxOf(a.gte, b.gte);
  const lte = minOf(a.lte, b.lte);
  if (gte !== undefined && lte !== undefined && gte > lte) return false;
  if (a.complement && b.complement) return true;
  if (a.complement) return [...b.values].some((v) => !a.values.has(v) && withinBounds(v, gte, lte));
  if (b.complement) return [...a.values].some((v) => !b.values.has(v) && withinBounds(v, gte, lte));
  return [...a.values].some((v) => b.values.has(v) && withinBounds(v, gte, lte));
}

/** Requirement.Has: whether a node labelled `value` satisfies it. */
export function allows(r: Requirement, value: string): boolean {
  return r.values.has(value) !== r.complement && withinBounds(value, r.gte, r.lte);
}

/** Requirement.Operator: what the set amounts to. */
export function operatorOf(r: Requirement): 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' {
  if (r.complement) return r.values.size > 0 ? 'NotIn' : 'Exists';
  return r.values.size > 0 ? 'In' : 'DoesNotExist';
}

/** Requirement.String, for messages: `kubernetes.io/arch In [amd64]`, `karpenter.k8s.aws/instance-generation Exists >=6`. */
export function describeRequirement(r: Requirement): string {
  const op = operatorOf(r);
  let s = op === 'Exists' || op === 'DoesNotExist' ? `${r.key} ${op}` : `${r.key} ${op} [${[...r.values].sort().join(' ')}]`;
  if (r.gte !== undefined) s += ` >=${r.gte}`;
  if (r.lte !== undefined) s += ` <=${r.lte}`;
  return s;
}

/** Requirements.Add over a list: entries for the same key intersect. */
export function requirementsOf(inputs: readonly RequirementInput[], labels: Readonly<Record<string, string>> = {}): Requirements {
  const out = new Map<string, Requirement>();
  const add = (r: Requirement) => {
    const existing = out.get(r.key);
    out.set(r.key, existing ? intersection(r, existing) : r);
  };
  inputs.forEach((i) => add(toRequirement(i)));
  Object.entries(labels).forEach(([key, value]) => add(toRequirement({ key, operator: 'In', values: [value] })));
  return out;
}

/**
 * Requirements.Compatible(pod, AllowUndefinedWellKnownLabels): why a pod with these
 * requirements cannot fit a node with `node`'s, or undefined when it can. `wellKnown`
 * are the keys instance types define (Karpenter's WellKnownLabels, core and AWS).
 */
export function incompatibility(node: Requirements, pod: Requirements, wellKnown: ReadonlySet<string>): string | undefined {
  for (const [key, req] of pod) {
    if (wellKnown.has(key) || node.has(key)) continue;
    const op = operatorOf(req);
    if (op === 'NotIn' || op === 'DoesNotExist') continue;
    return `label "${key}" does not have known values`;
  }
  for (const [key, incoming] of pod) {
    const existing = node.get(key);
    if (!existing || hasIntersection(existing, incoming)) continue;
    const negative = (r: Requirement) => ['NotIn', 'DoesNotExist'].includes(operatorOf(r));
    if (negative(incoming) && negative(existing)) continue;
    return `${describeRequirement(incoming)} not in ${describeRequirement(existing)}`;
  }
  return undefined;
}
