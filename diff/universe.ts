import type { Catalogue } from '../catalogue/catalogue.js';
import { admits, normalizeKey, type Requirement } from './requirements.js';

/**
 * What nodes can exist, from the catalogue: the label values each key takes, and which
 * instance types a pool's requirements admit. A requirement change drifts only nodes that
 * existed, so a value excluded on one key is reported only if some type the old
 * requirements admitted (on every key) carries it: with `instance-category In [c]`, a
 * family list that drops `m5` drifts nothing.
 */
export interface LabelUniverse {
  /** Every value the key takes (instance type labels, the catalogue's zones, the capacity types). */
  values(key: string): readonly string[];
  /** For the old requirements: could a node with this label value (undefined: without it) have existed? */
  reachable(before: readonly Requirement[]): (key: string, value: string | undefined) => boolean;
}

const universes = new WeakMap<Catalogue, LabelUniverse>();

/** The universe of a catalogue, built once per catalogue object: every environment of a region shares it. */
export function catalogueUniverse(catalogue: Catalogue): LabelUniverse {
  let universe = universes.get(catalogue);
  if (!universe) universes.set(catalogue, (universe = buildUniverse(catalogue)));
  return universe;
}

function buildUniverse(catalogue: Catalogue): LabelUniverse {
  const types = Object.values(catalogue.instanceTypes).map((t) => t.labels);
  const byKey = new Map<string, Set<string>>();
  for (const labels of types) for (const [k, v] of Object.entries(labels)) (byKey.get(k) ?? byKey.set(k, new Set()).get(k)!).add(v);
  const typeKeys = new Set(byKey.keys());
  const extra = new Map<string, readonly string[]>([
    ['karpenter.sh/capacity-type', ['spot', 'on-demand', 'reserved']],
    ['topology.kubernetes.io/zone', catalogue.zones ?? []],
  ]);
  return {
    values: (key) => [...(byKey.get(key) ?? extra.get(key) ?? [])],
    reachable(before) {
      const onTypes = before.map((r) => ({ ...r, key: normalizeKey(r.key) })).filter((r) => typeKeys.has(r.key));
      const admitted = types.filter((labels) => onTypes.every((r) => admits(r, labels[r.key])));
      return (key, value) => !typeKeys.has(key) || admitted.some((labels) => labels[key] === value);
    },
  };
}
