import type { Catalogue } from '../catalogue/catalogue.js';
import { KARPENTER_AWS_WELL_KNOWN_LABELS } from '../config/karpenter-schema.js';
import { GiB, MiB, parseQuantity } from './quantity.js';
import { labelRequirement, type Requirement } from '../config/node-requirements.js';

/**
 * The catalogue's instance types as Karpenter's scheduler sees them: each with the
 * requirement set the AWS provider builds for it (karpenter-provider-aws v1.13.1
 * `pkg/providers/instancetype/types.go` computeRequirements) and its resources.
 */

/**
 * Well-known keys every instance type defines (a type without the label has
 * `DoesNotExist` for it): Karpenter's AWS well-known labels, less those computeRequirements
 * does not set on a type (tenancy is set separately, the node class and placement group
 * labels come from the NodePool and EC2NodeClass). Capacity reservations: none in the
 * catalogue, so DoesNotExist on every type.
 */
const NOT_ON_TYPES = new Set(['karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/placement-group-id', 'karpenter.k8s.aws/placement-group-partition']);
export const TYPE_LABEL_KEYS: readonly string[] = KARPENTER_AWS_WELL_KNOWN_LABELS.filter((k) => !NOT_ON_TYPES.has(k));

/** Karpenter's default `--vm-memory-overhead-percent`: capacity memory is the EC2 figure less this. */
export const VM_MEMORY_OVERHEAD = 0.075;

export interface CatalogueType {
  readonly name: string;
  readonly family: string;
  readonly category: string;
  readonly generation: string;
  readonly size: string;
  readonly arch: string;
  readonly hypervisor: string;
  /** vCPUs and capacity memory (bytes), what NodePool limits are charged. */
  readonly vcpu: number;
  readonly capacityMemory: number;
  /** EC2's memory figure (instance-memory label), bytes. */
  readonly memory: number;
  readonly allocatable: { readonly cpu: number; readonly memory: number; readonly pods: number };
  readonly onDemandPrice: number | null;
  /** Lowest Spot price over the zones the catalogue has; null when it has none. */
  readonly spotPrice: number | null;
  readonly zones: readonly string[] | undefined;
  readonly capacityTypes: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
}

export interface ParsedCatalogue {
  readonly region: string;
  readonly origin: string;
  readonly pricesAsOf: string;
  readonly zones: readonly string[] | null;
  readonly types: readonly CatalogueType[];
}

const parsedCache = new WeakMap<Catalogue, ParsedCatalogue>();

/** Numbers parsed once per catalogue object (the analyzer runs per pool). */
export function parseCatalogue(catalogue: Catalogue): ParsedCatalogue {
  const cached = parsedCache.get(catalogue);
  if (cached) return cached;
  const types = Object.entries(catalogue.instanceTypes)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, t]): CatalogueType => {
      const l = t.labels;
      const memMiB = Number(l['karpenter.k8s.aws/instance-memory'] ?? 0);
      const spot = t.spotPrices ? Object.values(t.spotPrices) : [];
      return {
        name,
        family: l['karpenter.k8s.aws/instance-family'] ?? name.split('.')[0]!,
        category: l['karpenter.k8s.aws/instance-category'] ?? '',
        generation: l['karpenter.k8s.aws/instance-generation'] ?? '',
        size: l['karpenter.k8s.aws/instance-size'] ?? name.split('.')[1] ?? '',
        arch: l['kubernetes.io/arch'] ?? 'amd64',
        hypervisor: l['karpenter.k8s.aws/instance-hypervisor'] ?? '',
        vcpu: Number(l['karpenter.k8s.aws/instance-cpu'] ?? 0),
        capacityMemory: (memMiB - Math.ceil(memMiB * VM_MEMORY_OVERHEAD)) * MiB,
        memory: memMiB * MiB,
        allocatable: {
          cpu: parseQuantity(t.resources.cpu ?? '0'),
          memory: parseQuantity(t.resources.memory ?? '0'),
          pods: Number(t.resources.pods ?? 0),
        },
        onDemandPrice: t.onDemandPrice,
        spotPrice: spot.length > 0 ? Math.min(...spot) : null,
        zones: t.zones,
        // The vendored data does not say which usage classes a type supports: both assumed.
        // A refreshed catalogue with Spot prices tells: no Spot price, no Spot offering.
        capacityTypes: t.spotPrices && spot.length === 0 ? ['on-demand'] : ['on-demand', 'spot'],
        labels: l,
      };
    });
  const parsed = { region: catalogue.region, origin: catalogue.origin, pricesAsOf: catalogue.pricesAsOf, zones: catalogue.zones, types };
  parsedCache.set(catalogue, parsed);
  return parsed;
}

/** What the EC2NodeClass changes about every instance type: its AMI family's OS/arch and kubelet pod density. */
export interface NodeClassView {
  readonly amiFamily: string;
  readonly windows: boolean;
  readonly maxPods?: number;
  readonly podsPerCore?: number;
}

const TYPE_LABEL_KEY_SET: ReadonlySet<string> = new Set(TYPE_LABEL_KEYS);

/**
 * An instance type's requirement for one key under a node class, or undefined when the
 * provider defines no such key for it (then a pool's requirement on it is not compared).
 * Built per key, not per type: a pool names a handful of keys, the catalogue has 1,204
 * types. Windows AMIs are amd64 only: the provider's getOS gives an arm64 type no OS.
 */
export function typeRequirement(t: CatalogueType, key: string, region: string, zones: readonly string[] | undefined, nodeClass: NodeClassView, variant = variantOf(region, zones, nodeClass)): Requirement | undefined {
  // Every pool of every environment asks the same few keys of the same 1,204 types: memoize
  // per variant (the caller computes it once per pool), then per type, then per key.
  let byType = requirementCache.get(variant);
  if (!byType) requirementCache.set(variant, (byType = new WeakMap()));
  let byKey = byType.get(t);
  if (!byKey) byType.set(t, (byKey = new Map()));
  if (byKey.has(key)) return byKey.get(key);
  const r = computeTypeRequirement(t, key, region, zones, nodeClass);
  byKey.set(key, r);
  return r;
}

/** Keys `typeRequirement` answers for some type: a pool's requirement on any other key admits every type. */
export function describesTypes(key: string): boolean {
  return TYPE_LABEL_KEY_SET.has(key) || SPECIAL_KEYS.has(key);
}

const SPECIAL_KEYS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/windows-build',
  'karpenter.sh/capacity-type',
  'karpenter.k8s.aws/instance-tenancy',
]);

/** What, besides the type, a type's requirements depend on: the AMI family's OS and the zones in force. */
export const variantOf = (region: string, zones: readonly string[] | undefined, nodeClass: NodeClassView) => `${nodeClass.windows}|${region}|${zones?.join(',') ?? '*'}`;

const requirementCache = new Map<string, WeakMap<CatalogueType, Map<string, Requirement | undefined>>>();

function computeTypeRequirement(t: CatalogueType, key: string, region: string, zones: readonly string[] | undefined, nodeClass: NodeClassView): Requirement | undefined {
  const values = (v: readonly string[]): Requirement => ({ key, complement: false, values: new Set(v) });
  switch (key) {
    case 'node.kubernetes.io/instance-type':
      return values([t.name]);
    case 'kubernetes.io/arch':
      return values([t.arch]);
    case 'kubernetes.io/os':
      return values(nodeClass.windows ? (t.arch === 'amd64' ? ['windows'] : []) : ['linux']);
    case 'topology.kubernetes.io/zone':
      return zones ? values(zones) : undefined;
    case 'topology.kubernetes.io/region':
      return values([region]);
    case 'node.kubernetes.io/windows-build':
      return values([]);
    case 'karpenter.sh/capacity-type':
      return values(t.capacityTypes);
    case 'karpenter.k8s.aws/instance-tenancy':
      return values(['default', 'dedicated']);
    default:
      return TYPE_LABEL_KEY_SET.has(key) ? labelRequirement(key, t.labels[key]) : undefined;
  }
}

/**
 * Allocatable under the node class's kubelet: maxPods (or Windows' fixed 110) replaces the
 * ENI-limited pod count, and kube-reserved memory follows it (11 MiB per pod + 255 MiB in
 * the provider's kubeReservedResources), so allocatable memory moves by 11 MiB per pod.
 */
export function allocatableUnder(t: CatalogueType, nodeClass: NodeClassView): { cpu: number; memory: number; pods: number } {
  let pods = nodeClass.maxPods ?? (nodeClass.windows ? 110 : t.allocatable.pods);
  if (nodeClass.podsPerCore && nodeClass.podsPerCore > 0 && !nodeClass.windows) pods = Math.min(pods, nodeClass.podsPerCore * t.vcpu);
  return { cpu: t.allocatable.cpu, memory: t.allocatable.memory - 11 * MiB * (pods - t.allocatable.pods), pods };
}

/** Xen-era (pre-Nitro) types: AWS's previous generations, each with a Nitro successor of the same shape. */
export const isPreviousGeneration = (t: CatalogueType): boolean => t.hypervisor === 'xen';

export const memoryGiB = (t: CatalogueType): number => t.memory / GiB;
