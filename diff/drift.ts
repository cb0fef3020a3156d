import { formatPath } from '../config/errors.js';
import { describeRequirement, narrowing, type KeyNarrowing, type Requirement } from './requirements.js';
import type { LabelUniverse } from './universe.js';

/**
 * Which field changes make Karpenter v1.13 drift and replace nodes: a pure function of the
 * object before and after, read from Karpenter's own code (cited per rule below).
 *
 * Static drift compares hashes made by hashstructure v2 with `SlicesAsSets`,
 * `IgnoreZeroValue`, `ZeroNil` over:
 * - NodePool: `spec.template` minus `requirements` (`NodePool.Hash()`,
 *   sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/nodepool.go; `hash:"ignore"` on Requirements);
 * - EC2NodeClass: `spec` minus the `hash:"ignore"` fields (subnet, security group, capacity
 *   reservation and AMI selector terms, amiFamily, ipPrefixCount), plus the resolved AMI
 *   family (`EC2NodeClass.Hash()`, github.com/aws/karpenter-provider-aws@v1.13.1
 *   pkg/apis/v1/ec2nodeclass.go). `tags` carry no ignore tag: a tag change drifts.
 * Dynamic drift (that provider's pkg/cloudprovider/drift.go) re-resolves AMIs, subnets,
 * security groups and capacity reservations and compares them with each instance.
 */

export const CORE = 'sigs.k8s.io/karpenter@v1.13.0';
export const AWS = 'github.com/aws/karpenter-provider-aws@v1.13.1';

/** replaces: every node of the affected pools; replaces-some: the nodes the text names; scales: a static pool's node count. */
export type Effect = 'replaces' | 'replaces-some' | 'none' | 'scales';

export interface FieldChange {
  /** Field path in the manifest, e.g. `spec.template.spec.taints`. */
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly effect: Effect;
  /** Why, in one sentence, with Karpenter's drift reason where there is one. */
  readonly why: string;
  /** Where Karpenter decides it. */
  readonly cite: string;
  /** Requirement changes only: what each key now excludes. */
  readonly narrowing?: readonly KeyNarrowing[];
}

type Json = unknown;

/**
 * Go fields that are plain values, not pointers: hashstructure's IgnoreZeroValue skips them
 * when "", 0 or false, so writing them so equals leaving them out. Pointer fields (most of
 * the API) are hashed even when they point at a zero value.
 */
const PLAIN_FIELDS = [
  /^spec\.template\.spec\.(startupTaints|taints)\[\]\.(key|value|effect)$/,
  /^spec\.template\.spec\.nodeClassRef\.(group|kind|name)$/,
  /^spec\.role$/,
  /^spec\.blockDeviceMappings\[\]\.rootVolume$/,
  /^spec\.networkInterfaces\[\]\.(networkCardIndex|deviceIndex|interfaceType)$/,
];

/** Durations are hashed as time.Duration: 720h and 43200m are the same value. */
const DURATION_FIELDS = [/^spec\.template\.spec\.(expireAfter|terminationGracePeriod)$/, /^spec\.kubelet\.evictionSoftGracePeriod\.[^.]+$/];

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration, in nanoseconds; undefined when it does not parse (then compared as text). */
export function goDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const [, num, unit] of text.replace(/^[+-]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(num) * UNITS[unit!]!;
  return m[1] === '-' ? -total : total;
}

const isZero = (v: Json) => v === '' || v === 0 || v === false;

/**
 * The value as the hash sees it: nulls gone, plain zero fields gone, durations as
 * nanoseconds, lists as sets. Two elements that are equal cancel out, because the hash
 * XORs set members: `[a, a]` hashes like `[]`; we keep that quirk rather than hide it.
 */
export function hashView(value: Json, pattern = ''): Json {
  if (Array.isArray(value)) {
    const counts = new Map<string, { n: number; v: Json }>();
    for (const item of value) {
      const v = hashView(item, `${pattern}[]`);
      const key = JSON.stringify(v);
      const c = counts.get(key);
      counts.set(key, { n: (c?.n ?? 0) + 1, v });
    }
    return [...counts.entries()]
      .filter(([, c]) => c.n % 2 === 1)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c.v);
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, Json> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, Json>)[k];
      const p = pattern === '' ? k : `${pattern}.${k}`;
      if (v === null || v === undefined) continue;
      if (isZero(v) && PLAIN_FIELDS.some((re) => re.test(p))) continue;
      out[k] = hashView(v, p);
    }
    return out;
  }
  if (typeof value === 'string' && DURATION_FIELDS.some((re) => re.test(pattern))) {
    const ns = goDuration(value);
    return ns === undefined ? value : { duration: ns };
  }
  return value;
}

export interface Difference {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/**
 * Field paths where two objects differ, leaf by leaf through maps; a list that differs is
 * one difference (order never is one: lists are compared as the hash compares them, as sets).
 */
export function differences(before: Json, after: Json, path: PropertyKey[] = [], pattern = ''): Difference[] {
  const bothMaps = isMap(before) && isMap(after);
  if (bothMaps) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) =>
      differences(before[k], after[k], [...path, k], pattern === '' ? k : `${pattern}.${k}`),
    );
  }
  if (JSON.stringify(hashView(before, pattern)) === JSON.stringify(hashView(after, pattern))) return [];
  // A plain zero written out equals absence (see PLAIN_FIELDS).
  const gone = (v: Json) => v === undefined || v === null || (isZero(v) && PLAIN_FIELDS.some((re) => re.test(pattern)));
  if (gone(before) && gone(after)) return [];
  return [{ path: formatPath(path), before, after }];
}

const isMap = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

const at = (obj: Json, ...keys: string[]): Json => keys.reduce<Json>((o, k) => (isMap(o) ? o[k] : undefined), obj);

// ---------------------------------------------------------------- NodePool

const NODEPOOL_HASH = `${CORE} pkg/apis/v1/nodepool.go \`NodePool.Hash()\` (hashes \`spec.template\`) and pkg/controllers/nodeclaim/disruption/drift.go \`areStaticFieldsDrifted\``;
const REQUIREMENTS = `${CORE} pkg/controllers/nodeclaim/disruption/drift.go \`areRequirementsDrifted\` (requirements carry \`hash:"ignore"\` in pkg/apis/v1/nodepool.go)`;
const BEHAVIOURAL = `${CORE} pkg/apis/v1/nodepool.go: \`NodePool.Hash()\` hashes only \`spec.template\`; docs "Behavioral Fields": weight, limits, disruption`;

/**
 * The CRD defaults the API server fills in on hashed fields (crds/karpenter/*.yaml), so
 * writing a default out, or leaving it to the server, is no change: Karpenter hashes the
 * stored object.
 */
export function withDefaults(kind: 'NodePool' | 'EC2NodeClass', obj: Json): Json {
  if (!isMap(obj) || !isMap(obj.spec)) return obj;
  if (kind === 'NodePool') {
    const template = isMap(obj.spec.template) ? obj.spec.template : {};
    const spec = isMap(template.spec) ? template.spec : {};
    return { ...obj, spec: { ...obj.spec, template: { ...template, spec: { expireAfter: '720h', ...spec } } } };
  }
  const given = isMap(obj.spec.metadataOptions) ? obj.spec.metadataOptions : {};
  const metadataOptions = { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required', ...given };
  return { ...obj, spec: { ...obj.spec, metadataOptions } };
}

/** What a NodePool change does to its nodes, one entry per changed field. */
export function nodePoolChanges(rawBefore: Json, rawAfter: Json, universe?: LabelUniverse): FieldChange[] {
  const before = withDefaults('NodePool', rawBefore);
  const after = withDefaults('NodePool', rawAfter);
  const out: FieldChange[] = [];
  const reqBefore = (at(before, 'spec', 'template', 'spec', 'requirements') ?? []) as Requirement[];
  const reqAfter = (at(after, 'spec', 'template', 'spec', 'requirements') ?? []) as Requirement[];
  const strip = (o: Json): Json => {
    if (!isMap(o)) return o;
    const spec = { ...(at(o, 'spec') as Record<string, Json>) };
    const template = { ...(spec.template as Record<string, Json>) };
    template.spec = { ...(template.spec as Record<string, Json>), requirements: undefined };
    spec.template = template;
    return { ...o, spec };
  };
  for (const d of differences(strip(before), strip(after))) {
    if (d.path.startsWith('spec.template.')) {
      out.push({ ...d, effect: 'replaces', why: `hashed field: the NodePool's hash changes, so every node of the pool drifts (NodePoolDrifted)`, cite: NODEPOOL_HASH });
    } else if (/^spec\.(disruption|limits|weight)(\.|$|\[)/.test(d.path)) {
      out.push({ ...d, effect: 'none', why: 'behavioural field: not hashed, never drifts', cite: BEHAVIOURAL });
    } else if (d.path === 'spec.replicas') {
      out.push({ ...d, effect: 'scales', why: 'static pool: Karpenter adds or removes nodes to match replicas; no drift', cite: `${CORE} pkg/apis/v1/nodepool.go (replicas is outside spec.template)` });
    } else {
      out.push({ ...d, effect: 'none', why: 'outside `spec.template`: not hashed, no drift', cite: NODEPOOL_HASH });
    }
  }
  const reqChanged = JSON.stringify(hashView(reqBefore.map(withoutMinValues))) !== JSON.stringify(hashView(reqAfter.map(withoutMinValues)));
  const minChanged = !reqChanged && JSON.stringify(hashView(reqBefore)) !== JSON.stringify(hashView(reqAfter));
  if (reqChanged) {
    const narrowed = narrowing(reqBefore, reqAfter, universe?.values, universe?.reachable(reqBefore));
    out.push({
      path: 'spec.template.spec.requirements',
      before: reqBefore.map(describeRequirement),
      after: reqAfter.map(describeRequirement),
      effect: narrowed.length > 0 ? 'replaces-some' : 'none',
      why:
        narrowed.length > 0
          ? `nodes whose labels no longer satisfy the requirements drift (RequirementsDrifted): ${narrowed.map(describeNarrowing).join('; ')}`
          : 'only widens what the pool admits: every existing node still satisfies the requirements, none drifts',
      cite: REQUIREMENTS,
      narrowing: narrowed,
    });
  } else if (minChanged) {
    out.push({
      path: 'spec.template.spec.requirements',
      before: reqBefore.map(describeRequirement),
      after: reqAfter.map(describeRequirement),
      effect: 'none',
      why: 'only `minValues` changed: it shapes new launches and is not part of the compatibility check, no drift',
      cite: REQUIREMENTS,
    });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const withoutMinValues = (r: Requirement): Requirement => ({ key: r.key, operator: r.operator, values: r.values });

export function describeNarrowing(n: KeyNarrowing): string {
  const vals = n.excluded.map((v) => (v === undefined ? 'without the label' : `\`${v}\``));
  if (n.excludesOtherValues) vals.push('any other value');
  return `\`${n.key}\`: ${vals.join(', ')}`;
}

// ---------------------------------------------------------------- EC2NodeClass

const NODECLASS_HASH = `${AWS} pkg/apis/v1/ec2nodeclass.go \`EC2NodeClass.Hash()\` and pkg/cloudprovider/drift.go \`areStaticFieldsDrifted\``;
const DYNAMIC = `${AWS} pkg/cloudprovider/drift.go`;

const DYNAMIC_FIELDS: ReadonlyArray<{ field: string; why: string; fn: string }> = [
  { field: 'amiSelectorTerms', fn: 'isAMIDrifted', why: "not hashed, but Karpenter re-resolves the AMIs: each node whose image is not among the AMIs the new terms select for its instance type drifts (AMIDrift); with an alias, that is every node unless the new alias resolves to the image it runs" },
  { field: 'subnetSelectorTerms', fn: 'isSubnetDrifted', why: 'not hashed, but nodes in a subnet the new terms do not select drift (SubnetDrift)' },
  { field: 'securityGroupSelectorTerms', fn: 'areSecurityGroupsDrifted', why: 'not hashed, but nodes whose security groups differ from the set the new terms select drift (SecurityGroupDrift)' },
  { field: 'capacityReservationSelectorTerms', fn: 'isCapacityReservationDrifted', why: 'not hashed, but nodes in a capacity reservation the new terms do not select drift (CapacityReservationDrift)' },
];

/** `AMIFamily()`: amiFamily if set, else the alias's family, else Custom (pkg/apis/v1/ec2nodeclass.go). */
export function amiFamily(nodeClass: Json): string {
  const explicit = at(nodeClass, 'spec', 'amiFamily');
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const terms = (at(nodeClass, 'spec', 'amiSelectorTerms') ?? []) as Array<{ alias?: string }>;
  const alias = terms.find((t) => typeof t.alias === 'string' && t.alias !== '')?.alias;
  if (alias === undefined) return 'Custom';
  const family = alias.split('@')[0]!;
  const known = ['AL2', 'AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Windows2025'];
  return known.find((k) => k.toLowerCase() === family) ?? family;
}

/** What an EC2NodeClass change does to the nodes of the pools that use it. */
export function nodeClassChanges(rawBefore: Json, rawAfter: Json): FieldChange[] {
  const before = withDefaults('EC2NodeClass', rawBefore);
  const after = withDefaults('EC2NodeClass', rawAfter);
  const out: FieldChange[] = [];
  for (const d of differences(before, after)) {
    const field = /^spec\.([A-Za-z]+)/.exec(d.path)?.[1];
    const dynamic = DYNAMIC_FIELDS.find((f) => f.field === field);
    if (field === undefined) {
      out.push({ ...d, effect: 'none', why: 'outside `spec`: not hashed, no drift', cite: NODECLASS_HASH });
    } else if (dynamic) {
      out.push({ ...d, effect: 'replaces-some', why: dynamic.why, cite: `${DYNAMIC} \`${dynamic.fn}\`` });
    } else if (field === 'amiFamily') {
      out.push({ ...d, effect: 'none', why: '`hash:"ignore"`; only the resolved AMI family is hashed (see below when it changes)', cite: NODECLASS_HASH });
    } else if (field === 'ipPrefixCount') {
      out.push({ ...d, effect: 'none', why: '`hash:"ignore"` and no dynamic check: applies to new nodes only, no drift', cite: NODECLASS_HASH });
    } else {
      const extra = field === 'tags' ? ' (tags have no `hash:"ignore"`: a tag change replaces the nodes)' : '';
      out.push({ ...d, effect: 'replaces', why: `hashed field: the node class's hash changes, so every node launched from it drifts (NodeClassDrift)${extra}`, cite: NODECLASS_HASH });
    }
  }
  const familyBefore = amiFamily(before);
  const familyAfter = amiFamily(after);
  if (familyBefore !== familyAfter) {
    out.push({
      path: 'AMIFamily()',
      before: familyBefore,
      after: familyAfter,
      effect: 'replaces',
      why: 'the resolved AMI family is hashed: every node of the class drifts (NodeClassDrift)',
      cite: `${AWS} pkg/apis/v1/ec2nodeclass.go \`EC2NodeClass.Hash()\` (hashes \`in.AMIFamily()\`)`,
    });
  }
  return out;
}

/** The strongest effect of a list: one that replaces all nodes beats one that replaces some. */
export function strongest(changes: readonly FieldChange[]): Effect {
  const order: Effect[] = ['replaces', 'replaces-some', 'scales', 'none'];
  return order.find((e) => changes.some((c) => c.effect === e)) ?? 'none';
}


