/**
 * Requirement drift, as Karpenter v1.13 decides it: a node drifts (`RequirementsDrifted`)
 * when its labels are no longer compatible with its NodePool's requirements
 * (sigs.k8s.io/karpenter@v1.13.0 pkg/controllers/nodeclaim/disruption/drift.go,
 * `areRequirementsDrifted`: `NewLabelRequirements(nodeClaim.Labels).Compatible(nodePoolRequirements)`).
 * Requirements are not in the NodePool hash (`hash:"ignore"` in pkg/apis/v1/nodepool.go), so
 * a change drifts only the nodes it excludes: widening drifts nothing, narrowing drifts the
 * nodes whose label values fell out. `minValues` is not part of compatibility, so it never drifts.
 */

import { NORMALIZED_LABELS, atoi, type RequirementInput } from '../config/node-requirements.js';
import { own } from '../config/own.js';

/**
 * Drift compares requirements as written, entry by entry (an entry's own operator and
 * values are what a reviewer reads), so this is the input shape, not the intersected set.
 */
export type Requirement = RequirementInput;

export const normalizeKey = (key: string): string => own(NORMALIZED_LABELS, key) ?? key;

/** Whether a node whose label `key` is `value` (undefined: no such label) satisfies one requirement. */
export function admits(req: Requirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  const bound = values[0] === undefined ? undefined : atoi(values[0]);
  const n = value === undefined ? undefined : atoi(value);
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return n !== undefined && bound !== undefined && n > bound;
    case 'Lt':
      return n !== undefined && bound !== undefined && n < bound;
    case 'Gte':
      return n !== undefined && bound !== undefined && n >= bound;
    case 'Lte':
      return n !== undefined && bound !== undefined && n <= bound;
    default:
      throw new Error(`requirement ${req.key}: operator must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got "${req.operator}"`);
  }
}

/** Requirements on one key are intersected, as Karpenter does. */
const admitsAll = (reqs: readonly Requirement[], value: string | undefined) => reqs.every((r) => admits(r, value));

export interface KeyNarrowing {
  readonly key: string;
  /** Label values (undefined: the label is absent) admitted before and not after. */
  readonly excluded: ReadonlyArray<string | undefined>;
  /** Whether values named nowhere (neither in the requirements nor in the catalogue) are excluded too. */
  readonly excludesOtherValues: boolean;
}

/** Stands for "a value neither side names": admitted by NotIn/Exists alike, so it tests open sets. */
const OTHER = '\u0000other';

/**
 * Per key, the node label values that the old requirements admitted and the new ones do not.
 * The candidates are every value either side names, the integers around every bound, the
 * catalogue's values for the key (`knownValues`), absence, and one value named nowhere: a
 * finite set that decides the question exactly, because each operator's answer only changes
 * at a named value or bound.
 */
export function narrowing(
  before: readonly Requirement[],
  after: readonly Requirement[],
  knownValues: (key: string) => readonly string[] = () => [],
  reachable: (key: string, value: string | undefined) => boolean = () => true,
): KeyNarrowing[] {
  const group = (reqs: readonly Requirement[]) => {
    const m = new Map<string, Requirement[]>();
    for (const r of reqs) {
      const key = normalizeKey(r.key);
      m.set(key, [...(m.get(key) ?? []), { ...r, key }]);
    }
    return m;
  };
  const old = group(before);
  const next = group(after);
  const out: KeyNarrowing[] = [];
  for (const key of [...new Set([...old.keys(), ...next.keys()])].sort()) {
    const o = old.get(key) ?? [];
    const n = next.get(key) ?? [];
    const named = [...o, ...n].flatMap((r) => r.values ?? []);
    const around = named.flatMap((v) => {
      const i = atoi(v);
      return i === undefined ? [] : [String(i - 1), String(i), String(i + 1)];
    });
    const candidates = [...new Set([...named, ...around, ...knownValues(key)])].sort(compareValues);
    const excluded = [undefined, ...candidates].filter((v) => admitsAll(o, v) && !admitsAll(n, v) && reachable(key, v));
    const excludesOtherValues = admitsAll(o, OTHER) && !admitsAll(n, OTHER) && reachable(key, OTHER);
    if (excluded.length > 0 || excludesOtherValues) out.push({ key, excluded, excludesOtherValues });
  }
  return out;
}

/** Numbers in numeric order, then strings: "instance-generation 6, 7, 10", not "10, 6, 7". */
function compareValues(a: string, b: string): number {
  const x = atoi(a);
  const y = atoi(b);
  if (x !== undefined && y !== undefined) return x - y;
  if (x !== undefined) return -1;
  if (y !== undefined) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One line per requirement, as a reviewer reads it: `karpenter.k8s.aws/instance-category In [c, m, r]`. */
export function describeRequirement(r: Requirement): string {
  const values = r.values && r.values.length > 0 ? ` [${r.values.join(', ')}]` : '';
  const min = r.minValues !== undefined ? ` (minValues ${r.minValues})` : '';
  return `${r.key} ${r.operator}${values}${min}`;
}
