import type { Catalogue } from '../catalogue/catalogue.js';
import type { LoadedEnvironment } from '../config/environment.js';
import { DEFAULT_AMI_ALIAS } from '../config/defaults.js';
import { daemonSetsFor } from '../config/daemonset-overhead.js';
import { allows, conflicts, firstConflict, requirementsOf, type NodeSelectorRequirement, type Requirement } from '../config/node-requirements.js';
import type { Manifest } from '../charts/render.js';
import { INFLATE } from '../charts/inflate.js';
import { allocatableUnder, describesTypes, isPreviousGeneration, parseCatalogue, typeRequirement, variantOf, type CatalogueType, type NodeClassView } from './instance-types.js';
import { GiB, formatMemory, parseQuantity } from './quantity.js';
import { own } from '../config/own.js';
import { memo } from './memo.js';

/**
 * `npm run analyze` and `reports/<env>.md`: what each NodePool of an environment admits
 * from the instance catalogue, what its limits may cost, where each workload fits, and
 * findings with a severity. A pure function of the environment, its synthesized objects
 * (what Argo CD will apply, presets resolved) and the catalogue.
 */

export type Severity = 'error' | 'warning' | 'info';

export interface Finding {
  readonly severity: Severity;
  /** Stable identifier, e.g. `admits-nothing`. */
  readonly code: string;
  /** Field path in the environment file, e.g. `nodePools[1]`. */
  readonly path: string;
  /** One sentence, without the file name. */
  readonly message: string;
}

export interface AdmittedType {
  readonly name: string;
  readonly family: string;
  readonly generation: string;
  readonly arch: string;
  readonly size: string;
  readonly vcpu: number;
  /** EC2 memory, bytes. */
  readonly memory: number;
  readonly allocatable: { readonly cpu: number; readonly memory: number; readonly pods: number };
  readonly onDemandPrice: number | null;
  readonly spotPrice: number | null;
  readonly previousGeneration: boolean;
}

export interface CeilingEnd {
  readonly type: string;
  /** Nodes of this type the tightest limit holds (fractional: mixed sizes fill the rest). */
  readonly nodes: number;
  readonly perHour: number;
  readonly perVcpuHour: number;
}

export interface CostCeiling {
  /** The limits as given (`cpu: "100"`), or null: a pool without limits has no ceiling. */
  readonly limits: { readonly cpu?: string; readonly memory?: string } | null;
  readonly onDemand: { readonly low: CeilingEnd; readonly high: CeilingEnd } | null;
  /** Null when the catalogue has no Spot prices (the vendored one has none). */
  readonly spot: { readonly low: CeilingEnd; readonly high: CeilingEnd } | null;
}

// Shared results (analyze/memo.ts): selections per catalogue and key, then what pools of one
// selection ask alike (the same limits, the same pod) per admitted list.
const selectionsOf = new WeakMap<object, Map<string, TypeSelection>>();
const ceilings = new WeakMap<object, Map<string, CostCeiling>>();
const cheapestFits = new WeakMap<object, Map<string, CheapestFit | undefined>>();
const oldAndSmall = new WeakMap<object, Map<string, { readonly old: readonly string[]; readonly small: readonly string[] }>>();

/** The types a pool admits and what the report lists about them; shared by pools that select alike. */
type TypeSelection = Pick<PoolAnalysis, 'admitted' | 'families' | 'generations' | 'architectures' | 'sizes'> & { readonly admittedTypes: readonly CatalogueType[] };

export interface PoolAnalysis {
  readonly name: string;
  readonly path: string;
  readonly nodeClass: string;
  readonly amiFamily: string;
  readonly weight: number;
  readonly requirements: readonly string[];
  readonly capacityTypes: readonly string[];
  readonly zones: readonly string[] | null;
  readonly admitted: readonly AdmittedType[];
  readonly families: readonly string[];
  readonly generations: readonly string[];
  readonly architectures: readonly string[];
  readonly sizes: readonly string[];
  readonly ceiling: CostCeiling;
  readonly taints: readonly string[];
}

export interface WorkloadFit {
  /** `checkout-api` or `inflate x10`. */
  readonly workload: string;
  readonly replicas: number;
  readonly requests: { readonly cpu: number; readonly memory: number };
  /** Pools whose taints and node selection the pod accepts, highest weight first. */
  readonly pools: readonly string[];
  /**
   * In the highest-weight pool where one pod fits: the admitted type that holds all
   * replicas most cheaply (On-Demand prices) within the pool's limits, or failing that the
   * one that leaves the fewest pods pending; null: fits nowhere.
   */
  readonly fit: {
    readonly pool: string;
    readonly type: string;
    readonly podsPerNode: number;
    readonly nodes: number;
    readonly onDemandPerHour: number | null;
    /** Nodes the pool's limits allow of that type; fewer than `nodes` leaves pods pending. */
    readonly nodesWithinLimits: number | null;
  } | null;
}

export interface EnvironmentAnalysis {
  readonly environment: string;
  readonly file: string;
  readonly catalogue: { readonly region: string; readonly origin: string; readonly pricesAsOf: string; readonly file: string; readonly types: number };
  readonly zones: { readonly list: readonly string[] | null; readonly source: string };
  readonly daemonSets: { readonly names: readonly string[]; readonly source: string; readonly cpu: number; readonly memory: number; readonly pods: number };
  readonly memoryFloor: number;
  readonly pools: readonly PoolAnalysis[];
  readonly workloads: readonly WorkloadFit[];
  readonly findings: readonly Finding[];
}

/** The `inflate` replica counts every report shows (SPEC: the way to try Karpenter). */
export const INFLATE_REPLICAS = [1, 10, 100] as const;

const CAPACITY_TYPES = ['on-demand', 'spot'] as const;

interface PodSpecLike {
  containers?: Array<{ resources?: { requests?: Record<string, string> } }>;
  initContainers?: Array<{ resources?: { requests?: Record<string, string> } }>;
  nodeSelector?: Record<string, string>;
  tolerations?: Array<{ key?: string; operator?: string; value?: string; effect?: string }>;
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Array<{ matchExpressions?: NodeSelectorRequirement[] }> } } };
}
interface Taint {
  key: string;
  value?: string;
  effect: string;
}
interface NodePoolSpec {
  weight?: number;
  limits?: Record<string, string>;
  disruption?: { budgets?: Array<Record<string, unknown>> };
  template: { metadata?: { labels?: Record<string, string> }; spec: { requirements?: NodeSelectorRequirement[]; taints?: Taint[]; nodeClassRef: { name: string } } };
}
interface NodeClassSpec {
  amiSelectorTerms?: Array<{ alias?: string }>;
  amiFamily?: string;
  kubelet?: { maxPods?: number; podsPerCore?: number };
}

const specOf = <T>(o: Manifest) => (o as unknown as { spec: T }).spec;

/** The EC2NodeClass's AMI family: from its alias (`bottlerocket@latest`), else `amiFamily`. */
export function nodeClassView(spec: NodeClassSpec | undefined): NodeClassView {
  const alias = spec?.amiSelectorTerms?.find((t) => t.alias !== undefined)?.alias ?? (spec?.amiFamily ? undefined : DEFAULT_AMI_ALIAS);
  const amiFamily = alias ? alias.split('@')[0]! : spec!.amiFamily!.toLowerCase();
  return { amiFamily, windows: amiFamily.startsWith('windows'), maxPods: spec?.kubelet?.maxPods, podsPerCore: spec?.kubelet?.podsPerCore };
}

export interface AnalyzeOptions {
  /** Shown in the report, e.g. `catalogue/us-east-1.json`. */
  readonly catalogueFile?: string;
}

/** Analyzes one environment. Pure: same inputs, same result, nothing read or written. */
export function analyzeEnvironment(env: LoadedEnvironment, objects: readonly Manifest[], catalogue: Catalogue, opts: AnalyzeOptions = {}): EnvironmentAnalysis {
  const cat = parseCatalogue(catalogue);
  const review = env.config.review;
  const envZones = env.config.cluster.availabilityZones;
  const zones = envZones
    ? { list: [...envZones].sort(), source: 'cluster.availabilityZones' }
    : cat.zones
      ? { list: [...cat.zones].sort(), source: `every zone the catalogue knows (cluster.availabilityZones is not set)` }
      : { list: null, source: `cluster.availabilityZones is not set and the catalogue has no zone data: every zone of ${cat.region} assumed` };
  const { daemonSets: ds, source: daemonSetSource } = daemonSetsFor(env.config);
  const daemonSets = {
    names: ds.map((d) => d.name),
    source: daemonSetSource,
    cpu: ds.reduce((s, d) => s + parseQuantity(d.requests.cpu ?? '0'), 0),
    memory: ds.reduce((s, d) => s + parseQuantity(d.requests.memory ?? '0'), 0),
    pods: ds.length,
  };
  const memoryFloor = parseQuantity(review.memoryFloor);

  const nodeClasses = new Map(objects.filter((o) => o.kind === 'EC2NodeClass').map((o) => [o.metadata.name, specOf<NodeClassSpec>(o)]));
  const poolObjects = objects.filter((o) => o.kind === 'NodePool');
  const findings: Finding[] = [];
  const poolIndexes = new Map(env.config.nodePools.map((p, i) => [p.name, i]));
  const poolIndex = (name: string) => poolIndexes.get(name) ?? -1;

  const pools = poolObjects.map((o) => {
    const spec = specOf<NodePoolSpec>(o);
    const path = `nodePools[${poolIndex(o.metadata.name)}]`;
    const view = nodeClassView(nodeClasses.get(spec.template.spec.nodeClassRef.name));
    const reqs = poolRequirements(o.metadata.name, spec);
    const typeZones = (t: CatalogueType) => (t.zones && zones.list ? t.zones.filter((z) => zones.list!.includes(z)) : (t.zones ?? zones.list ?? undefined));
    // Types with their own zone list (a refreshed catalogue) vary by type; cache by the environment's zones otherwise.
    const variant = variantOf(cat.region, zones.list ?? undefined, view);
    const selectionKey = `${variant}|${view.maxPods}|${view.podsPerCore}|${[...reqs.values()]
      .filter((r) => describesTypes(r.key))
      .map((r) => `${r.key}${r.complement ? '!' : '='}${[...r.values].sort().join(',')}|${r.gte}|${r.lte}`)
      .sort()
      .join(';')}`;
    // Pools that ask the same of instance types (a preset used many times, in one environment
    // or in 300) share one selection: a pure function of the catalogue and the key above.
    const selection = memo(selectionsOf, cat, selectionKey, (): TypeSelection => {
      const admittedTypes = cat.types.filter((t) => {
        if (view.windows && t.arch !== 'amd64') return false; // no Windows AMI for arm64
        for (const [key, incoming] of reqs) {
          const existing = typeRequirement(t, key, cat.region, typeZones(t), view, t.zones ? `${variant}|${t.zones.join(',')}` : variant);
          if (existing && conflicts(existing, incoming)) return false;
        }
        return true;
      });
      const admitted = admittedTypes.map((t): AdmittedType => ({
        name: t.name,
        family: t.family,
        generation: t.generation,
        arch: t.arch,
        size: t.size,
        vcpu: t.vcpu,
        memory: t.memory,
        allocatable: allocatableUnder(t, view),
        onDemandPrice: t.onDemandPrice,
        spotPrice: t.spotPrice,
        previousGeneration: isPreviousGeneration(t),
      }));
      return {
        admittedTypes,
        admitted,
        families: uniqueSorted(admitted.map((t) => t.family)),
        generations: uniqueSorted(admitted.map((t) => t.generation), (a, b) => Number(a) - Number(b)),
        architectures: uniqueSorted(admitted.map((t) => t.arch)),
        // nano, micro, ..., large, xlarge, 2xlarge, ..., metal: by the fewest vCPUs a size has here.
        sizes: uniqueSorted(admitted.map((t) => t.size), (a, b) => minVcpu(admitted, a) - minVcpu(admitted, b) || (a < b ? -1 : 1)),
      };
    });
    const { admittedTypes, ...listed } = selection;
    const capacity = reqs.get('karpenter.sh/capacity-type');
    const capacityTypes = CAPACITY_TYPES.filter((c) => (!capacity || allows(capacity, c)) && admittedTypes.some((t) => t.capacityTypes.includes(c)));
    const zoneReq = reqs.get('topology.kubernetes.io/zone');
    const poolZones = zones.list ? zones.list.filter((z) => !zoneReq || allows(zoneReq, z)) : null;
    const pool: PoolAnalysis = {
      name: o.metadata.name,
      path,
      nodeClass: spec.template.spec.nodeClassRef.name,
      amiFamily: view.amiFamily,
      weight: spec.weight ?? 0,
      requirements: (spec.template.spec.requirements ?? []).map(describeRaw),
      capacityTypes,
      zones: poolZones,
      ...listed,
      ceiling: memo(ceilings, admittedTypes, `${spec.limits?.cpu}|${spec.limits?.memory}|${capacityTypes.join(',')}`, () => costCeiling(spec.limits, admittedTypes, capacityTypes)),
      taints: (spec.template.spec.taints ?? []).map((t) => `${t.key}${t.value !== undefined ? `=${t.value}` : ''}:${t.effect}`),
    };
    findings.push(...poolFindings(pool, admittedTypes, spec, reqs, review, memoryFloor));
    return { pool, spec, reqs, view, admittedTypes };
  });

  // Quadratic in pools of equal weight: a loop, not push(...), which overflows the stack at 10,000 pools.
  for (const f of overlapFindings(pools.map((p) => p.pool))) findings.push(f);
  findings.push(...amiFindings(env));

  const workloads: WorkloadFit[] = [];
  for (const o of objects.filter((x) => x.kind === 'Deployment')) {
    const podSpec = (o as unknown as { spec: { replicas?: number; template: { spec: PodSpecLike } } }).spec;
    const counts = o.metadata.name === INFLATE.name ? INFLATE_REPLICAS : [podSpec.replicas ?? 1];
    for (const replicas of counts) {
      const label = o.metadata.name === INFLATE.name ? `${o.metadata.name} x${replicas}` : o.metadata.name;
      workloads.push(fitWorkload(label, replicas, podSpec.template.spec, pools, daemonSets));
    }
  }
  const reported = new Set<string>();
  for (const w of workloads) {
    const name = w.workload.split(' ')[0]!;
    if (w.fit || reported.has(name)) continue;
    reported.add(name);
    findings.push(fitFinding(env, name, w, pools));
  }

  const order: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  findings.sort((a, b) => order[a.severity] - order[b.severity]);
  return {
    environment: env.name,
    file: env.file,
    catalogue: { region: cat.region, origin: cat.origin, pricesAsOf: cat.pricesAsOf, file: opts.catalogueFile ?? `catalogue/${cat.region}.json`, types: cat.types.length },
    zones,
    daemonSets,
    memoryFloor,
    pools: pools.map((p) => p.pool),
    workloads,
    findings,
  };
}

/** A requirement as written: `karpenter.k8s.aws/instance-generation Gt [5]`. */
function describeRaw(r: NodeSelectorRequirement): string {
  const values = r.operator === 'Exists' || r.operator === 'DoesNotExist' ? '' : ` [${(r.values ?? []).join(', ')}]`;
  return `${r.key} ${r.operator}${values}${r.minValues !== undefined ? ` minValues ${r.minValues}` : ''}`;
}

/** `NewNodeClaimTemplate`: the pool's requirements, its template labels (In [value]) and karpenter.sh/nodepool. */
function poolRequirements(name: string, spec: NodePoolSpec): Map<string, Requirement> {
  return requirementsOf(spec.template.spec.requirements ?? [], { ...spec.template.metadata?.labels, 'karpenter.sh/nodepool': name });
}

const minVcpu = (types: readonly AdmittedType[], size: string) => Math.min(...types.filter((t) => t.size === size).map((t) => t.vcpu));

function uniqueSorted(values: readonly string[], compare?: (a: string, b: string) => number): string[] {
  return [...new Set(values)].sort(compare ?? ((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The hourly cost if the pool fills its limits with one type: per type, how many nodes of
 * its capacity (vCPUs; EC2 memory less Karpenter's 7.5% VM overhead, what Karpenter
 * charges against limits) the tightest limit holds, times its price; the cheapest and the
 * most expensive such fill.
 */
export function costCeiling(limits: Record<string, string> | undefined, types: readonly CatalogueType[], capacityTypes: readonly string[]): CostCeiling {
  const cpu = limits?.cpu;
  const memory = limits?.memory;
  if (cpu === undefined && memory === undefined) return { limits: null, onDemand: null, spot: null };
  // Fractional: mixed sizes can fill a limit almost exactly; a type larger than a limit never launches.
  const cpuLimit = cpu !== undefined ? parseQuantity(cpu) : Infinity;
  const memoryLimit = memory !== undefined ? parseQuantity(memory) : Infinity;
  const nodesOf = (t: CatalogueType) => Math.min(cpuLimit / t.vcpu, memoryLimit / t.capacityMemory);
  // The cheapest and dearest end, ties by type name, in one pass (a pool admits hundreds of types).
  const range = (price: (t: CatalogueType) => number | null) => {
    let low: CatalogueType | undefined;
    let high: CatalogueType | undefined;
    let lowPerHour = Infinity;
    let highPerHour = -Infinity;
    for (const t of types) {
      const p = price(t);
      if (p === null || nodesOf(t) < 1) continue;
      const perHour = round(nodesOf(t) * p, 2);
      if (perHour < lowPerHour || (perHour === lowPerHour && t.name < low!.name)) [low, lowPerHour] = [t, perHour];
      if (perHour > highPerHour || (perHour === highPerHour && t.name > high!.name)) [high, highPerHour] = [t, perHour];
    }
    const end = (t: CatalogueType, perHour: number): CeilingEnd => ({ type: t.name, nodes: round(nodesOf(t), 1), perHour, perVcpuHour: round(price(t)! / t.vcpu, 5) });
    return low && high ? { low: end(low, lowPerHour), high: end(high, highPerHour) } : null;
  };
  return {
    limits: { ...(cpu !== undefined ? { cpu } : {}), ...(memory !== undefined ? { memory } : {}) },
    onDemand: capacityTypes.includes('on-demand') || capacityTypes.includes('spot') ? range((t) => t.onDemandPrice) : null,
    spot: capacityTypes.includes('spot') ? range((t) => t.spotPrice) : null,
  };
}

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;

const listSome = (names: readonly string[], n = 5) => (names.length > n ? `${names.slice(0, n).join(', ')} and ${names.length - n} more` : names.join(', '));

function poolFindings(pool: PoolAnalysis, admittedTypes: readonly CatalogueType[], spec: NodePoolSpec, reqs: ReadonlyMap<string, Requirement>, review: LoadedEnvironment['config']['review'], memoryFloor: number): Finding[] {
  const out: Finding[] = [];
  const at = (severity: Severity, code: string, message: string, path = pool.path) => out.push({ severity, code, path, message });
  if (pool.admitted.length === 0) {
    at('error', 'admits-nothing', `NodePool "${pool.name}" admits no instance type of the catalogue (requirements: ${pool.requirements.join('; ')}; AMI family ${pool.amiFamily}): Karpenter can never launch a node for it`);
    return out;
  }
  for (const r of reqs.values()) {
    if (r.minValues === undefined) continue;
    const values = new Set(admittedTypes.flatMap((t) => typeValues(t, r.key)));
    if (values.size < r.minValues) {
      const i = (spec.template.spec.requirements ?? []).findIndex((x) => x.key === r.key && x.minValues !== undefined);
      at(
        'error',
        'min-values-unsatisfiable',
        `minValues ${r.minValues} on ${r.key} cannot be met: the ${pool.admitted.length} admitted types have only ${values.size} value(s) (${[...values].sort().join(', ') || 'none'}), so Karpenter launches nothing for this pool`,
        `${pool.path}.requirements[${i}].minValues`,
      );
    }
  }
  if (pool.capacityTypes.includes('spot') && (pool.families.length < review.spotMinFamilies || pool.admitted.length < review.spotMinTypes)) {
    at(
      'warning',
      'spot-too-narrow',
      `Spot pool "${pool.name}" admits ${pool.admitted.length} types in ${pool.families.length} families (${listSome(pool.families)}), fewer than ${review.spotMinTypes} types or ${review.spotMinFamilies} families: AWS's Spot best practices ask for flexibility across many instance types and families, so one reclaimed capacity pool does not stop scaling (thresholds: review.spotMinTypes, review.spotMinFamilies)`,
    );
  }
  if (pool.ceiling.limits === null) {
    at('warning', 'no-limits', `NodePool "${pool.name}" has no cpu or memory limits: nothing caps how many nodes, and how much cost, Karpenter may add`);
  }
  const { old, small } = memo(oldAndSmall, pool.admitted, String(memoryFloor), () => ({
    old: pool.admitted.filter((t) => t.previousGeneration).map((t) => t.name),
    small: pool.admitted.filter((t) => t.memory < memoryFloor).map((t) => t.name),
  }));
  if (old.length > 0 || small.length > 0) {
    const parts = [
      ...(old.length > 0 ? [`${old.length} previous-generation Xen type(s) (${listSome(old)})`] : []),
      ...(small.length > 0 ? [`${small.length} type(s) with less than ${formatMemory(memoryFloor)} of memory (${listSome(small)})`] : []),
    ];
    at(
      'warning',
      'old-or-tiny-types',
      `NodePool "${pool.name}" admits ${parts.join(' and ')}: Karpenter picks the cheapest type that fits, and these hold few pods once the DaemonSets run, have lower network and ENI limits, and each counts against the limits like a modern node (exclude them with instance-hypervisor NotIn [xen] and instance-size NotIn [nano, micro, small]; floor: review.memoryFloor)`,
    );
  }
  const budgets = spec.disruption?.budgets ?? [];
  if (budgets.length === 0 || (budgets.length === 1 && budgets[0]!.nodes === '10%' && Object.keys(budgets[0]!).length === 1)) {
    at('info', 'no-budgets', `NodePool "${pool.name}" has only Karpenter's default disruption budget (10% of its nodes at a time, at any hour): consolidation and drift may replace nodes during business hours`);
  }
  return out;
}

/** The values a type's own requirement has for a key, which is what minValues counts (`SatisfiesMinValues`). */
function typeValues(t: CatalogueType, key: string): readonly string[] {
  if (key === 'karpenter.sh/capacity-type') return t.capacityTypes;
  if (key === 'topology.kubernetes.io/zone') return t.zones ?? [];
  const value = own(t.labels, key);
  return value === undefined ? [] : [value];
}

function overlapFindings(pools: readonly PoolAnalysis[]): Finding[] {
  // One finding per pool, against the first earlier pool it overlaps: every pair would be
  // quadratic in findings (10,000 pools of 100 weights made half a million).
  // Earlier pools are looked up by weight, and pools that share one admitted list (the
  // same selection) share its name set: 10,000 pools are then linear, not quadratic.
  const out: Finding[] = [];
  const names = new Map<readonly AdmittedType[], ReadonlySet<string>>();
  const namesOf = (p: PoolAnalysis) => names.get(p.admitted) ?? names.set(p.admitted, new Set(p.admitted.map((t) => t.name))).get(p.admitted)!;
  const earlier = new Map<number, PoolAnalysis[]>();
  for (const b of pools) {
    const sameWeight = earlier.get(b.weight) ?? earlier.set(b.weight, []).get(b.weight)!;
    for (const a of sameWeight) {
      const inA = namesOf(a);
      const shared = b.admitted.filter((t) => inA.has(t.name)).length;
      if (shared === 0 || !a.capacityTypes.some((c) => b.capacityTypes.includes(c))) continue;
      out.push({
        severity: 'info',
        code: 'overlapping-equal-weight',
        path: b.path,
        message: `NodePools "${a.name}" and "${b.name}" both admit ${shared} of the same types with equal weight ${a.weight}: for a pod both accept, which one Karpenter picks is not obvious (set weight, or taints, to make it explicit)`,
      });
      break;
    }
    sameWeight.push(b);
  }
  return out;
}

/** The one place that warns about `@latest` AMIs in production (moved here from config/environment.ts). */
function amiFindings(env: LoadedEnvironment): Finding[] {
  if (!env.config.production) return [];
  return env.config.nodeClasses.flatMap((nc, i) =>
    (nc.amiSelectorTerms ?? [{ alias: DEFAULT_AMI_ALIAS }]).flatMap((term, j): Finding[] =>
      term.alias?.endsWith('@latest')
        ? [
            {
              severity: 'warning',
              code: 'ami-latest-in-production',
              path: nc.amiSelectorTerms ? `nodeClasses[${i}].amiSelectorTerms[${j}].alias` : `nodeClasses[${i}].amiSelectorTerms (default)`,
              message: `"${term.alias}" in a production environment: every new AMI release rolls all nodes of this class (drift); pin a version such as al2023@v20261115`,
            },
          ]
        : [],
    ),
  );
}

interface PoolContext {
  readonly pool: PoolAnalysis;
  readonly spec: NodePoolSpec;
  readonly reqs: ReadonlyMap<string, Requirement>;
  readonly view: NodeClassView;
  readonly admittedTypes: readonly CatalogueType[];
}

function podRequests(pod: PodSpecLike): { cpu: number; memory: number } {
  const sum = (list: PodSpecLike['containers'], key: string) => (list ?? []).reduce((s, c) => s + parseQuantity(c.resources?.requests?.[key] ?? '0'), 0);
  const max = (list: PodSpecLike['containers'], key: string) => Math.max(0, ...(list ?? []).map((c) => parseQuantity(c.resources?.requests?.[key] ?? '0')));
  return {
    cpu: Math.max(sum(pod.containers, 'cpu'), max(pod.initContainers, 'cpu')),
    memory: Math.max(sum(pod.containers, 'memory'), max(pod.initContainers, 'memory')),
  };
}

function tolerates(pod: PodSpecLike, taint: Taint): boolean {
  if (taint.effect === 'PreferNoSchedule') return true;
  return (pod.tolerations ?? []).some(
    (t) =>
      (t.effect === undefined || t.effect === '' || t.effect === taint.effect) &&
      (t.key === undefined || t.key === '' ? t.operator === 'Exists' : t.key === taint.key && (t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? ''))),
  );
}

/** The pod's node selection as requirement sets, one per nodeSelectorTerm (terms are ORed). */
function podRequirementTerms(pod: PodSpecLike): Array<Map<string, Requirement>> {
  const selector: NodeSelectorRequirement[] = Object.entries(pod.nodeSelector ?? {}).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [{}];
  return terms.map((t) => requirementsOf([...selector, ...(t.matchExpressions ?? [])]));
}

/**
 * Where one pod of a workload lands: Karpenter tries pools by weight, highest first, and
 * within a pool the cheapest type that fits the pod plus every DaemonSet.
 */
function fitWorkload(label: string, replicas: number, pod: PodSpecLike, pools: readonly PoolContext[], ds: EnvironmentAnalysis['daemonSets']): WorkloadFit {
  const requests = podRequests(pod);
  const terms = podRequirementTerms(pod);
  const candidates = pools
    .filter((p) => (p.spec.template.spec.taints ?? []).every((t) => tolerates(pod, t)))
    .filter((p) => terms.some((t) => firstConflict(p.reqs, t) === undefined))
    .sort((a, b) => b.pool.weight - a.pool.weight);
  for (const p of candidates) {
    const limits = p.spec.limits;
    const key = `${limits?.cpu}|${limits?.memory}|${replicas}|${requests.cpu}|${requests.memory}|${ds.cpu}|${ds.memory}|${ds.pods}`;
    const best = memo(cheapestFits, p.pool.admitted, key, () => cheapestFit(p, replicas, requests, ds));
    if (!best) continue;
    return {
      workload: label,
      replicas,
      requests,
      pools: candidates.map((c) => c.pool.name),
      fit: {
        pool: p.pool.name,
        type: best.t.name,
        podsPerNode: best.podsPerNode,
        nodes: best.nodes,
        onDemandPerHour: best.t.onDemandPrice === null ? null : round(best.nodes * best.t.onDemandPrice),
        nodesWithinLimits: best.nodesWithinLimits,
      },
    };
  }
  return { workload: label, replicas, requests, pools: candidates.map((c) => c.pool.name), fit: null };
}

interface CheapestFit {
  readonly t: AdmittedType;
  readonly podsPerNode: number;
  readonly nodes: number;
  readonly nodesWithinLimits: number | null;
}

/**
 * Karpenter packs pending pods onto the type that is cheapest for all of them: one type
 * for every node is the estimate (mixed sizes would only be cheaper). A type the pool's
 * limits cut short ranks after one that runs every replica. Undefined: no type holds a pod.
 */
function cheapestFit(p: PoolContext, replicas: number, requests: WorkloadFit['requests'], ds: EnvironmentAnalysis['daemonSets']): CheapestFit | undefined {
  const per = (free: number, need: number) => (need > 0 ? Math.floor(free / need) : Infinity);
  const limits = p.spec.limits;
  const cpuLimit = limits?.cpu !== undefined ? parseQuantity(limits.cpu) : Infinity;
  const memoryLimit = limits?.memory !== undefined ? parseQuantity(limits.memory) : Infinity;
  // The first in (pending, cost, name) order; one pass, not a sort of every option.
  let best: (CheapestFit & { readonly pending: number; readonly cost: number }) | undefined;
  p.pool.admitted.forEach((t, i) => {
    if (t.allocatable.cpu < requests.cpu + ds.cpu || t.allocatable.memory < requests.memory + ds.memory || t.allocatable.pods < ds.pods + 1) return;
    const capacity = p.admittedTypes[i]!;
    const podsPerNode = Math.min(per(t.allocatable.cpu - ds.cpu, requests.cpu), per(t.allocatable.memory - ds.memory, requests.memory), t.allocatable.pods - ds.pods);
    const nodes = Math.ceil(replicas / podsPerNode);
    const nodesWithinLimits = cpuLimit === Infinity && memoryLimit === Infinity ? null : Math.min(Math.floor(cpuLimit / capacity.vcpu), Math.floor(memoryLimit / capacity.capacityMemory));
    const pending = nodesWithinLimits === null ? 0 : Math.max(0, replicas - nodesWithinLimits * podsPerNode);
    const o = { t, podsPerNode, nodes, nodesWithinLimits, pending, cost: t.onDemandPrice === null ? Infinity : nodes * t.onDemandPrice };
    if (best === undefined || (o.pending - best.pending || o.cost - best.cost || (o.t.name < best.t.name ? -1 : 1)) < 0) best = o;
  });
  return best;
}

function fitFinding(env: LoadedEnvironment, name: string, w: WorkloadFit, pools: readonly PoolContext[]): Finding {
  const index = env.config.workloads.findIndex((x) => x.name === name);
  const path = index >= 0 ? `workloads[${index}]` : name === INFLATE.name ? 'inflate' : name;
  const need = `${w.requests.cpu} CPU and ${formatMemory(w.requests.memory)} plus the DaemonSets`;
  if (w.pools.length === 0) {
    return { severity: 'error', code: 'workload-fits-nowhere', path, message: `workload "${name}" (${need}) is accepted by no NodePool (taints, node selector or affinity exclude every pool): its pods stay pending` };
  }
  const largest = pools
    .filter((p) => w.pools.includes(p.pool.name))
    .flatMap((p) => p.pool.admitted)
    .sort((a, b) => b.allocatable.cpu - a.allocatable.cpu || b.allocatable.memory - a.allocatable.memory)[0];
  const largestText = largest ? `the largest admitted type, ${largest.name}, has ${largest.allocatable.cpu} CPU and ${formatMemory(largest.allocatable.memory)} allocatable` : 'its pools admit no type';
  return { severity: 'error', code: 'workload-fits-nowhere', path, message: `workload "${name}" needs ${need} per pod, which fits no type its NodePools (${w.pools.join(', ')}) admit: ${largestText}` };
}

/** Memory in GiB, for charts and tables. */
export const toGiB = (bytes: number) => bytes / GiB;
