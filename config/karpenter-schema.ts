import { isIPv6 } from 'node:net';
import { z } from 'zod';
import {
  NodePoolSpecDisruptionBudgetsReasons,
  NodePoolSpecDisruptionConsolidationPolicy,
  NodePoolSpecTemplateSpecRequirementsOperator,
  NodePoolSpecTemplateSpecTaintsEffect,
} from '../imports/nodepool-karpenter.sh.js';
import {
  Ec2NodeClassSpecAmiFamily,
  Ec2NodeClassSpecBlockDeviceMappingsEbsVolumeType,
  Ec2NodeClassSpecCapacityReservationSelectorTermsInstanceMatchCriteria,
  Ec2NodeClassSpecCpuOptionsNestedVirtualization,
  Ec2NodeClassSpecInstanceStorePolicy,
  Ec2NodeClassSpecMetadataOptionsHttpEndpoint,
  Ec2NodeClassSpecMetadataOptionsHttpProtocolIPv6,
  Ec2NodeClassSpecMetadataOptionsHttpTokens,
  Ec2NodeClassSpecNetworkInterfacesInterfaceType,
} from '../imports/ec2nodeclass-karpenter.k8s.aws.js';
import { NodeOverlaySpecRequirementsOperator } from '../imports/nodeoverlay-karpenter.sh.js';
import { PRESETS, resolveNodePool } from './presets.js';
import { DEFAULT_AMI_ALIAS } from './defaults.js';
import { cronProblem } from './cron.js';
import { budgetDuration, duration, durationOrNever, enumOf, labelKey, labelValue, nonNegativeQuantity, objectName, qualifiedName, quantity, strict } from './schema-kit.js';
import { duplicateTaints, emptyIntersections, knownValuesProblem, OFFERED_VALUES, WELL_KNOWN_VALUES } from './karpenter-runtime.js';
import { own } from './own.js';

/**
 * The NodePool and EC2NodeClass parts of an environment file. Field names and shapes
 * are Karpenter's own (what a user would write in the CRD by hand), flattened one level
 * for NodePools (`template.spec.*` and `template.metadata.*` sit on the pool itself).
 * Enumerations come from the types imported from the CRDs, so a Karpenter upgrade
 * that changes them shows up as a type error here.
 */


// ---------------------------------------------------------------- restricted labels

/** Label keys Karpenter lets NodePools use in karpenter.k8s.aws (from the CRD's CEL rules). */
export const KARPENTER_AWS_WELL_KNOWN_LABELS = [
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/ec2nodeclass',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
] as const;

/**
 * Why Karpenter would refuse this key on a NodePool label or requirement, if it would.
 * These are the CRD's own CEL rules on labels and requirement keys (crds/karpenter/
 * karpenter.sh_nodepools.yaml), checked here first so the message names the environment
 * field; Karpenter's runtime check is the same set (core pkg/apis/v1/labels.go
 * IsRestrictedLabel: RestrictedLabelDomains = karpenter.sh, plus karpenter.k8s.aws from the
 * AWS provider's pkg/apis/v1/labels.go init, and RestrictedLabels = kubernetes.io/hostname).
 *
 * The kubernetes.io and k8s.io domains are NOT restricted on NodePools: the AWS provider
 * only leaves them out of the kubelet's --node-labels (pkg/providers/amifamily/resolver.go
 * RejectForbiddenLabels, because the NodeRestriction admission plugin would refuse them
 * there) and Karpenter's controller puts them on the Node itself, so
 * `node-role.kubernetes.io/spot: ""` works.
 */
export function restrictedLabelProblem(key: string): string | undefined {
  if (key === 'kubernetes.io/hostname') return 'label "kubernetes.io/hostname" is restricted: Karpenter sets it per node';
  if (key === 'karpenter.sh/nodepool') return 'label "karpenter.sh/nodepool" is restricted: Karpenter sets it to the NodePool name';
  const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
  // endsWith without a dot, as the CRD's CEL rule does (stricter than IsRestrictedLabel).
  if (domain.endsWith('karpenter.sh') && key !== 'karpenter.sh/capacity-type') {
    return 'label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type may be used)';
  }
  if (domain.endsWith('karpenter.k8s.aws') && !(KARPENTER_AWS_WELL_KNOWN_LABELS as readonly string[]).includes(key)) {
    return 'label domain "karpenter.k8s.aws" is restricted to its well-known labels (instance-category, instance-family, instance-generation, instance-size, ...)';
  }
  return undefined;
}

/** A key for a NodePool label or requirement: a qualified name outside the restricted set. */
const nodeLabelKey = labelKey.superRefine((key, ctx) => {
  const problem = restrictedLabelProblem(key);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: key });
});

// ---------------------------------------------------------------- NodePool

const NUMERIC_OPERATORS: readonly string[] = ['Gt', 'Lt', 'Gte', 'Lte'];

export const requirementSchema = strict({
  key: nodeLabelKey.refine((k) => k.length <= 316, { error: 'must be at most 316 characters (the CRD\'s maxLength for requirement keys)' }),
  operator: enumOf(NodePoolSpecTemplateSpecRequirementsOperator),
  values: z.array(labelValue).optional(),
  minValues: z.number().int().min(1, { error: 'must be an integer from 1 to 50' }).max(50, { error: 'must be an integer from 1 to 50' }).optional(),
}).superRefine((req, ctx) => {
  const values = req.values ?? [];
  if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must list at least one value for operator ${req.operator}`, input: req.values });
  }
  // The contract of the embedded corev1.NodeSelectorRequirement (k8s.io/api core/v1 types.go:
  // "If the operator is Exists or DoesNotExist, the values array must be empty"); Karpenter
  // would ignore them silently (pkg/scheduling/requirement.go NewRequirementWithFlexibility).
  if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must be empty for operator ${req.operator}`, input: req.values });
  }
  if (NUMERIC_OPERATORS.includes(req.operator) && (values.length !== 1 || !/^[0-9]+$/.test(values[0]!))) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must be a single non-negative integer for operator ${req.operator}`, input: req.values });
  }
  if (req.minValues !== undefined && req.operator === 'In' && values.length < req.minValues) {
    ctx.addIssue({
      code: 'custom',
      path: ['minValues'],
      message: `must not exceed the number of values (${values.length}) of this requirement`,
      input: req.minValues,
    });
  }
  const known = knownValuesProblem(req);
  if (known) ctx.addIssue({ code: 'custom', path: ['values'], message: known, input: req.values });
});
export type Requirement = z.infer<typeof requirementSchema>;

const taintSchema = strict({
  key: labelKey,
  // Karpenter checks a non-empty value as a qualified name, 63 characters after any "/"
  // (core pkg/apis/v1/nodeclaim_validation.go validateTaintsField); the CRD has the pattern only.
  value: qualifiedName('a taint value').optional(),
  effect: enumOf(NodePoolSpecTemplateSpecTaintsEffect),
});

export const budgetSchema = strict({
  nodes: z
    .union([z.string(), z.number()], { error: 'must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%)' })
    .transform((v) => String(v))
    .pipe(z.string().regex(/^((100|[0-9]{1,2})%|[0-9]+)$/, { error: 'must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%)' })),
  schedule: z
    .string({ error: 'must be a cron schedule' })
    .superRefine((s, ctx) => {
      const problem = cronProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: `must be a cron schedule such as "0 9 * * mon-fri" or @daily (${problem})`, input: s });
    })
    .optional(),
  duration: budgetDuration.optional(),
  reasons: z.array(enumOf(NodePoolSpecDisruptionBudgetsReasons)).max(50).optional(),
}).superRefine((b, ctx) => {
  if ((b.schedule === undefined) !== (b.duration === undefined)) {
    const missing = b.schedule === undefined ? 'schedule' : 'duration';
    ctx.addIssue({
      code: 'custom',
      path: [missing],
      message: `is required when ${missing === 'schedule' ? 'duration' : 'schedule'} is set (a budget window needs both a start and a length)`,
      input: undefined,
    });
  }
});
export type Budget = z.infer<typeof budgetSchema>;

export const disruptionSchema = strict({
  consolidationPolicy: enumOf(NodePoolSpecDisruptionConsolidationPolicy).optional(),
  consolidateAfter: durationOrNever.optional(),
  budgets: z.array(budgetSchema).max(50).optional(),
});

/**
 * Resource names a NodePool limit can cap without a domain: Karpenter's WellKnownResources
 * (core pkg/apis/v1/labels.go), plus `nodes` (the node count, core pkg/apis/v1/nodepool.go
 * Limits). A misspelt key (`cpus`, `memroy`) is accepted by the CRD and by Karpenter, and
 * the cap silently does not exist; names with a domain (nvidia.com/gpu, vpc.amazonaws.com/efa,
 * resources of a NodeOverlay) are left free.
 */
const UNQUALIFIED_LIMITS = ['cpu', 'memory', 'ephemeral-storage', 'pods', 'nodes'] as const;
const limitName = z.string().refine((k) => k.includes('/') ? labelKey.safeParse(k).success : (UNQUALIFIED_LIMITS as readonly string[]).includes(k), {
  error: `must be a resource name: ${UNQUALIFIED_LIMITS.join(', ')}, or an extended resource with its domain such as nvidia.com/gpu`,
});

/** Presets: article 1 (prod), article 2, and a cheap dev pool. See config/presets.ts. */
export const NODE_POOL_PRESETS = ['spot-with-on-demand-fallback', 'spot-multi-arch', 'spot-small'] as const;

/**
 * NodePool and EC2NodeClass names become label values on every node (karpenter.sh/nodepool,
 * karpenter.k8s.aws/ec2nodeclass; sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/labels.go
 * NodePoolLabelKey), and a label value is at most 63 characters (k8s.io/apimachinery
 * pkg/util/validation/validation.go IsValidLabelValue): a longer name makes every node fail
 * to register. The CRDs allow 253.
 */
const poolOrClassName = objectName.max(63, { error: 'must be at most 63 characters: it becomes a label value on every node' });

export const nodePoolSchema = strict({
  name: poolOrClassName,
  /** Starting point for requirements, limits, expiry and disruption; explicit fields win. */
  preset: z.enum(NODE_POOL_PRESETS, { error: `must be one of ${NODE_POOL_PRESETS.join(', ')}` }).optional(),
  /** Name of an entry of `nodeClasses`. */
  nodeClass: poolOrClassName.default('default'),
  /** Merged by key over the preset's requirements: a key the pool sets replaces all the preset's entries for it. Several entries per key intersect (e.g. Gte 2 and Lte 8). */
  requirements: z.array(requirementSchema).max(100).optional(),
  /** The NodePool object's own labels and annotations (not the nodes'). */
  metadata: z.lazy(() => objectMetadataSchema).optional(),
  labels: z.record(nodeLabelKey, labelValue).optional(),
  annotations: z.record(labelKey, z.string()).optional(),
  taints: z.array(taintSchema).optional(),
  startupTaints: z.array(taintSchema).optional(),
  expireAfter: durationOrNever.optional(),
  terminationGracePeriod: duration.optional(),
  limits: z.record(limitName, nonNegativeQuantity).optional(),
  weight: z.number().int().min(1, { error: 'must be an integer from 1 to 100' }).max(100, { error: 'must be an integer from 1 to 100' }).optional(),
  /** Static NodePool (fixed node count); incompatible with weight and with limits other than nodes. */
  replicas: z.number().int().min(0).optional(),
  disruption: disruptionSchema.optional(),
}).superRefine((p, ctx) => {
  for (const d of duplicateTaints(p.taints ?? [], p.startupTaints ?? [])) {
    const t = (d.field === 'taints' ? p.taints : p.startupTaints)![d.index]!;
    ctx.addIssue({
      code: 'custom',
      path: [d.field, d.index],
      message: `must not repeat the key and effect of ${d.first} (${t.key}:${t.effect}): Karpenter refuses duplicate taint key/effect pairs across taints and startupTaints`,
      input: t,
    });
  }
  // A label is also a requirement In [value] for scheduling (core
  // pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go NewNodeClaimTemplate adds
  // scheduling.NewLabelRequirements(labels)): the same known values apply.
  for (const [key, value] of Object.entries(p.labels ?? {})) {
    const known = own(WELL_KNOWN_VALUES, key) ?? own(OFFERED_VALUES, key);
    if (known && !known.includes(value)) {
      ctx.addIssue({ code: 'custom', path: ['labels', key], message: `must be one of ${known.join(', ')}: the label is also a requirement, and no instance or offering has another value`, input: value });
    }
  }
  const resolved = resolveNodePool(p);
  for (const e of emptyIntersections(resolved.requirements ?? [], p.labels)) {
    const own = (p.requirements ?? []).map((r) => r.key).lastIndexOf(e.key);
    ctx.addIssue({
      code: 'custom',
      path: own >= 0 ? ['requirements', own] : ['labels', e.key],
      message: `must leave at least one value for ${e.key}: ${e.entries.join(' and ')} admit none (Karpenter intersects them), so the NodePool can never launch a node`,
      input: undefined,
    });
  }
  if (p.replicas !== undefined && p.weight !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['weight'], message: 'must not be set on a static NodePool (replicas is set)', input: p.weight });
  }
  // The preset's limits count too: they are what the NodePool will carry.
  if (p.replicas !== undefined) {
    const own = p.limits && Object.keys(p.limits).some((k) => k !== 'nodes');
    const fromPreset = !p.limits && p.preset ? PRESETS[p.preset].limits : undefined;
    if (own) {
      ctx.addIssue({ code: 'custom', path: ['limits'], message: 'may only set "nodes" on a static NodePool (replicas is set)', input: p.limits });
    } else if (fromPreset && Object.keys(fromPreset).some((k) => k !== 'nodes')) {
      ctx.addIssue({
        code: 'custom',
        path: ['replicas'],
        message: `makes this a static NodePool, which takes only limits.nodes, but preset ${p.preset} sets limits ${Object.keys(fromPreset).join(', ')}: add limits: {nodes: N}`,
        input: p.replicas,
      });
    }
  }
});
export type NodePoolConfig = z.infer<typeof nodePoolSchema>;

// ---------------------------------------------------------------- EC2NodeClass

/** An IPv4 (leading zeros allowed, as Go's ParseIPSloppy allows them) or IPv6 address. */
function isIpAddress(text: string): boolean {
  if (/^([0-9]{1,3})(\.[0-9]{1,3}){3}$/.test(text)) return text.split('.').every((o) => Number(o) <= 255);
  return isIPv6(text);
}

const tagMap = z.record(z.string(), z.string());
const selectorTags = tagMap.refine((t) => Object.entries(t).every(([k, v]) => k !== '' && v !== ''), {
  error: 'must not contain empty tag keys or values',
});

// Ids are anchored here (the CRD's ami-/sg-/subnet- patterns are not): EC2 resource ids
// are the prefix, "-", then hex (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html).
const amiSelectorTermSchema = strict({
  alias: z
    .string()
    .max(30)
    .regex(/^(al2|al2023|bottlerocket|windows2019|windows2022|windows2025)@(latest|v[0-9]+(\.[0-9]+)*|[0-9][0-9.]*)$/, {
      error: 'must be <family>@<version>: family al2, al2023, bottlerocket or windows20xx; version latest or a pinned one such as v20250505',
    })
    .optional(),
  id: z.string().regex(/^ami-[0-9a-z]+$/, { error: 'must be an AMI id (ami-...)' }).optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
  tags: selectorTags.optional(),
}).superRefine((t, ctx) => {
  const set = Object.keys(t).filter((k) => t[k as keyof typeof t] !== undefined);
  if (set.length === 0) ctx.addIssue({ code: 'custom', message: 'must set one of alias, id, name, ssmParameter or tags', input: t });
  if (t.alias !== undefined && set.length > 1) ctx.addIssue({ code: 'custom', path: ['alias'], message: 'must be the only field of its term', input: t.alias });
  if (t.id !== undefined && t.alias === undefined && set.length > 1) ctx.addIssue({ code: 'custom', path: ['id'], message: 'must be the only field of its term', input: t.id });
});

const subnetTermSchema = strict({
  id: z.string().regex(/^subnet-[0-9a-z]+$/, { error: 'must be a subnet id (subnet-...)' }).optional(),
  tags: selectorTags.optional(),
}).refine((t) => (t.id === undefined) !== (t.tags === undefined), { error: 'must set exactly one of id or tags' });

const securityGroupTermSchema = strict({
  id: z.string().regex(/^sg-[0-9a-z]+$/, { error: 'must be a security group id (sg-...)' }).optional(),
  name: z.string().optional(),
  tags: selectorTags.optional(),
}).refine((t) => [t.id, t.name, t.tags].filter((v) => v !== undefined).length === 1, { error: 'must set exactly one of id, name or tags' });

const capacityReservationTermSchema = strict({
  id: z.string().regex(/^cr-[0-9a-z]+$/, { error: 'must be a capacity reservation id (cr-...)' }).optional(),
  ownerID: z.string().regex(/^[0-9]{12}$/, { error: 'must be a 12-digit account id' }).optional(),
  instanceMatchCriteria: enumOf(Ec2NodeClassSpecCapacityReservationSelectorTermsInstanceMatchCriteria).optional(),
  tags: selectorTags.optional(),
});

// partialRecord: any subset of the keys (zod 4's z.record with an enum key demands all of them).
const kubeletResources = z.partialRecord(z.enum(['cpu', 'memory', 'ephemeral-storage', 'pid'], { error: 'must be cpu, memory, ephemeral-storage or pid' }), quantity);
const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;
const evictionSignal = z.enum(EVICTION_SIGNALS, { error: `must be one of ${EVICTION_SIGNALS.join(', ')}` });

/**
 * A non-negative Go duration, as the kubelet parses evictionSoftGracePeriod (metav1.Duration,
 * go/src/time/format.go ParseDuration: "0", fractions such as ".5m", units ns to h).
 */
const goDuration = z
  .string({ error: 'must be a duration string' })
  .regex(/^(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$/, { error: 'must be a Go duration such as 90s, 1m30s, 1.5m or 500ms' });

const kubeletSchema = strict({
  // The kubelet drops an entry that is not an IP address, with only a log line (kubernetes@v1.36.5
  // pkg/kubelet/kubelet.go NewMainKubelet, netutils.ParseIPSloppy): pods then get no DNS server.
  clusterDNS: z.array(z.string().refine(isIpAddress, { error: 'must be an IP address such as 10.100.0.10 or fd00::a' })).optional(),
  maxPods: z.number().int().min(0).optional(),
  podsPerCore: z.number().int().min(0).optional(),
  systemReserved: kubeletResources.optional(),
  kubeReserved: kubeletResources.optional(),
  evictionHard: z.partialRecord(evictionSignal, z.string()).optional(),
  evictionSoft: z.partialRecord(evictionSignal, z.string()).optional(),
  // Parsed by Karpenter as Go durations: 1m30s, 1.5m, 500ms are all fine.
  evictionSoftGracePeriod: z.partialRecord(evictionSignal, goDuration).optional(),
  evictionMaxPodGracePeriod: z.number().int().optional(),
  imageGCHighThresholdPercent: z.number().int().min(0).max(100).optional(),
  imageGCLowThresholdPercent: z.number().int().min(0).max(100).optional(),
  cpuCFSQuota: z.boolean().optional(),
}).superRefine((k, ctx) => {
  if (k.imageGCHighThresholdPercent !== undefined && k.imageGCLowThresholdPercent !== undefined && k.imageGCHighThresholdPercent <= k.imageGCLowThresholdPercent) {
    ctx.addIssue({ code: 'custom', path: ['imageGCHighThresholdPercent'], message: 'must be greater than imageGCLowThresholdPercent', input: k.imageGCHighThresholdPercent });
  }
  const soft = Object.keys(k.evictionSoft ?? {});
  const grace = Object.keys(k.evictionSoftGracePeriod ?? {});
  for (const s of soft.filter((s) => !grace.includes(s))) {
    ctx.addIssue({ code: 'custom', path: ['evictionSoftGracePeriod'], message: `must have an entry for evictionSoft signal "${s}"`, input: k.evictionSoftGracePeriod });
  }
  for (const s of grace.filter((s) => !soft.includes(s))) {
    ctx.addIssue({ code: 'custom', path: ['evictionSoft'], message: `must have an entry for evictionSoftGracePeriod signal "${s}"`, input: k.evictionSoft });
  }
});

/**
 * IOPS and throughput (MiB/s) each EBS volume type takes, from the AWS documentation page
 * "Amazon EBS volume types" (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html,
 * gp3 raised to 80,000 IOPS and 2,000 MiB/s in 2025; the CRD's description still says
 * 16,000 and 1,000). EC2 refuses the launch template outside these, so no node launches.
 * Volume types not listed take neither field.
 */
const EBS_RANGES: Readonly<Record<string, { iops?: readonly [number, number]; throughput?: readonly [number, number] }>> = {
  gp3: { iops: [3000, 80000], throughput: [125, 2000] },
  io1: { iops: [100, 64000] },
  io2: { iops: [100, 256000] },
  gp2: {},
  st1: {},
  sc1: {},
  standard: {},
};

const blockDeviceMappingSchema = strict({
  deviceName: z.string().optional(),
  rootVolume: z.boolean().optional(),
  ebs: strict({
    deleteOnTermination: z.boolean().optional(),
    encrypted: z.boolean().optional(),
    iops: z.number().int().min(0).optional(),
    kmsKeyID: z.string().optional(),
    snapshotID: z.string().optional(),
    throughput: z.number().int().min(0).optional(),
    volumeInitializationRate: z.number().int().min(100).max(300).optional(),
    volumeSize: z
      .string()
      .regex(/^[0-9]+(Gi|G|Ti|T)$/, { error: 'must be a size in Gi, G, Ti or T such as 100Gi' })
      .optional(),
    volumeType: enumOf(Ec2NodeClassSpecBlockDeviceMappingsEbsVolumeType).optional(),
  })
    .refine((e) => e.snapshotID !== undefined || e.volumeSize !== undefined, { error: 'must set snapshotID or volumeSize' })
    .superRefine((e, ctx) => {
      for (const field of ['iops', 'throughput'] as const) {
        const value = e[field];
        if (value === undefined || e.volumeType === undefined) continue;
        const range = EBS_RANGES[e.volumeType]?.[field];
        if (!range) {
          const types = Object.keys(EBS_RANGES).filter((t) => EBS_RANGES[t]![field]);
          ctx.addIssue({ code: 'custom', path: [field], message: `can only be set for volumeType ${types.join(', ')}, not ${e.volumeType} (AWS EBS volume types)`, input: value });
        } else if (value < range[0] || value > range[1]) {
          ctx.addIssue({ code: 'custom', path: [field], message: `must be from ${range[0]} to ${range[1]} for volumeType ${e.volumeType} (AWS EBS volume types)`, input: value });
        }
      }
    })
    .optional(),
});

export const nodeClassSchema = strict({
  name: poolOrClassName,
  /** The EC2NodeClass object's own labels and annotations. */
  metadata: z.lazy(() => objectMetadataSchema).optional(),
  /** Defaults to [{alias: al2023@latest}]; production should pin a version. */
  amiSelectorTerms: z.array(amiSelectorTermSchema).min(1).max(30).optional(),
  amiFamily: enumOf(Ec2NodeClassSpecAmiFamily).optional(),
  /** Defaults to the node role from the infra outputs. Mutually exclusive with instanceProfile. */
  role: z.string().min(1).optional(),
  instanceProfile: z.string().min(1).optional(),
  /** Default: tag karpenter.sh/discovery=<cluster name>. */
  subnetSelectorTerms: z.array(subnetTermSchema).min(1).max(30).optional(),
  /** Default: tag karpenter.sh/discovery=<cluster name>. */
  securityGroupSelectorTerms: z.array(securityGroupTermSchema).min(1).max(30).optional(),
  capacityReservationSelectorTerms: z.array(capacityReservationTermSchema).max(30).optional(),
  placementGroupSelector: strict({ id: z.string().regex(/^pg-[0-9a-z]+$/).optional(), name: z.string().optional() })
    .refine((p) => (p.id === undefined) !== (p.name === undefined), { error: 'must set exactly one of id or name' })
    .optional(),
  associatePublicIPAddress: z.boolean().optional(),
  detailedMonitoring: z.boolean().optional(),
  instanceStorePolicy: enumOf(Ec2NodeClassSpecInstanceStorePolicy).optional(),
  ipPrefixCount: z.number().int().min(0).optional(),
  context: z.string().optional(),
  cpuOptions: strict({ nestedVirtualization: enumOf(Ec2NodeClassSpecCpuOptionsNestedVirtualization).optional() }).optional(),
  connectionTracking: strict({
    tcpEstablishedTimeout: z.number().int().min(60).max(432000).optional(),
    udpStreamTimeout: z.number().int().min(60).max(180).optional(),
    udpTimeout: z.number().int().min(30).max(60).optional(),
  }).optional(),
  kubelet: kubeletSchema.optional(),
  blockDeviceMappings: z.array(blockDeviceMappingSchema).max(50).optional(),
  metadataOptions: strict({
    httpEndpoint: enumOf(Ec2NodeClassSpecMetadataOptionsHttpEndpoint).optional(),
    httpProtocolIPv6: enumOf(Ec2NodeClassSpecMetadataOptionsHttpProtocolIPv6).optional(),
    httpPutResponseHopLimit: z.number().int().min(1).max(64).optional(),
    httpTokens: enumOf(Ec2NodeClassSpecMetadataOptionsHttpTokens).optional(),
  }).optional(),
  networkInterfaces: z
    .array(strict({ deviceIndex: z.number().int().min(0), networkCardIndex: z.number().int().min(0), interfaceType: enumOf(Ec2NodeClassSpecNetworkInterfacesInterfaceType) }))
    .max(150)
    .optional(),
  tags: tagMap
    .superRefine((tags, ctx) => {
      // EC2 tag restrictions (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html#tag-restrictions):
      // Karpenter copies these to instances, volumes and launch templates, and EC2 refuses the launch.
      for (const [key, value] of Object.entries(tags)) {
        if ([...key].length > 128) ctx.addIssue({ code: 'custom', path: [key], message: `key must be at most 128 characters (EC2 tag restrictions), has ${[...key].length}`, input: key });
        if ([...value].length > 256) ctx.addIssue({ code: 'custom', path: [key], message: `must be at most 256 characters (EC2 tag restrictions), has ${[...value].length}`, input: value });
        if (key.toLowerCase().startsWith('aws:')) ctx.addIssue({ code: 'custom', path: [key], message: 'key must not start with "aws:", which AWS reserves (EC2 tag restrictions)', input: key });
      }
      for (const key of Object.keys(tags)) {
        if (key === '' || key === 'eks:eks-cluster-name' || key.startsWith('kubernetes.io/cluster') || ['karpenter.sh/nodepool', 'karpenter.sh/nodeclaim', 'karpenter.k8s.aws/ec2nodeclass'].includes(key)) {
          ctx.addIssue({ code: 'custom', path: [key], message: 'is a tag key Karpenter sets itself and refuses here', input: key });
        }
      }
    })
    .optional(),
  userData: z.string().optional(),
}).superRefine((c, ctx) => {
  if (c.role !== undefined && c.instanceProfile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['instanceProfile'], message: 'must not be set together with role (Karpenter takes one or the other)', input: c.instanceProfile });
  }
  // Karpenter needs the AMI family to build user data: from the alias, or said explicitly.
  const terms = c.amiSelectorTerms ?? [{ alias: DEFAULT_AMI_ALIAS }];
  const alias = terms.find((t) => t.alias !== undefined)?.alias;
  if (alias !== undefined && terms.length > 1) {
    ctx.addIssue({ code: 'custom', path: ['amiSelectorTerms'], message: 'must hold only the alias term when one term is an alias', input: c.amiSelectorTerms });
  }
  if (alias === undefined && c.amiFamily === undefined) {
    ctx.addIssue({ code: 'custom', path: ['amiFamily'], message: 'is required when amiSelectorTerms has no alias (Karpenter needs it to build user data)', input: undefined });
  }
  const aliasFamily = alias?.split('@')[0];
  if (aliasFamily !== undefined && c.amiFamily !== undefined && c.amiFamily !== 'Custom' && c.amiFamily.toLowerCase() !== aliasFamily) {
    ctx.addIssue({ code: 'custom', path: ['amiFamily'], message: `must be Custom or the family of alias "${alias}"`, input: c.amiFamily });
  }
  if ((c.blockDeviceMappings ?? []).filter((b) => b.rootVolume).length > 1) {
    ctx.addIssue({ code: 'custom', path: ['blockDeviceMappings'], message: 'must mark at most one mapping as rootVolume', input: undefined });
  }
});
export type NodeClassConfig = z.infer<typeof nodeClassSchema>;

/**
 * EKS publishes no Amazon Linux 2 AMIs for Kubernetes 1.33 and newer (AWS documentation,
 * "Amazon EKS AL2 AMI deprecation FAQs",
 * https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html): Karpenter
 * resolves `al2@...` through the SSM parameters of that version, finds none, and the node
 * class never becomes ready.
 */
export const LAST_AL2_KUBERNETES_MINOR = 32;

/** Issues of node classes that depend on the cluster (its Kubernetes version). */
export function checkNodeClassesForCluster(env: { cluster: { kubernetesVersion: string }; nodeClasses: readonly NodeClassConfig[] }, ctx: z.core.$RefinementCtx<unknown>): void {
  const minor = Number(env.cluster.kubernetesVersion.split('.')[1]);
  if (!(minor > LAST_AL2_KUBERNETES_MINOR)) return;
  env.nodeClasses.forEach((nc, i) => {
    (nc.amiSelectorTerms ?? []).forEach((term, j) => {
      if (term.alias?.startsWith('al2@')) {
        ctx.addIssue({
          code: 'custom',
          path: ['nodeClasses', i, 'amiSelectorTerms', j, 'alias'],
          message: `must not be an al2 alias on Kubernetes ${env.cluster.kubernetesVersion}: EKS publishes AL2 AMIs up to 1.${LAST_AL2_KUBERNETES_MINOR} only; use al2023@... or bottlerocket@...`,
          input: term.alias,
        });
      }
    });
  });
}

// ---------------------------------------------------------------- object metadata (issue 13)

/** Keys the toolchain sets on every object it writes (charts/metadata.ts): an environment may not change them. */
const MANAGED_LABELS = ['app.kubernetes.io/managed-by', 'karpenter-gitops/environment'];
const MANAGED_ANNOTATIONS = ['argocd.argoproj.io/sync-wave'];

/**
 * `metadata:` of the NodePool, EC2NodeClass or NodeOverlay object itself (not of the nodes:
 * a pool's `labels`/`annotations` are its node template's, and land on every node).
 */
export const objectMetadataSchema = strict({
  labels: z.record(labelKey, labelValue).optional(),
  annotations: z.record(labelKey, z.string()).optional(),
}).superRefine((m, ctx) => {
  for (const [field, managed] of [['labels', MANAGED_LABELS], ['annotations', MANAGED_ANNOTATIONS]] as const) {
    for (const key of Object.keys(m[field] ?? {}).filter((k) => managed.includes(k))) {
      ctx.addIssue({ code: 'custom', path: [field, key], message: 'must not be set: the toolchain sets it on every object it writes', input: m[field]![key] });
    }
  }
});
export type ObjectMetadataConfig = z.infer<typeof objectMetadataSchema>;

/** Annotation names that describe an object rather than configure nodes (kubernetes.io/description and the like). */
const DESCRIPTIVE_ANNOTATION = /(^|\/)(description|owner|owning-team|cost-?cent(er|re))$/i;

/**
 * A pool's `annotations:` go to `spec.template.metadata.annotations`, i.e. onto every
 * node; a description or owner written there was almost certainly meant for the pool.
 */
export function nodeTemplateMetadataWarnings(file: string, pools: readonly NodePoolConfig[]): string[] {
  return pools.flatMap((pool, i) =>
    Object.keys(pool.annotations ?? {})
      .filter((key) => DESCRIPTIVE_ANNOTATION.test(key))
      .map(
        (key) =>
          `${file}: nodePools[${i}].annotations["${key}"]: annotations: is the node template's (spec.template.metadata.annotations), so this lands on every node "${pool.name}" launches, not on the NodePool; ` +
          `to describe the NodePool itself, write it under metadata: {annotations: {${key}: ...}}`,
      ),
  );
}

// ---------------------------------------------------------------- NodeOverlay (issue 13)

/** Label keys a NodeOverlay requirement may use in karpenter.sh and karpenter.k8s.aws (the CRD's CEL rules). */
const OVERLAY_KARPENTER_KEYS: ReadonlySet<string> = new Set(['karpenter.sh/capacity-type', 'karpenter.sh/nodepool', ...KARPENTER_AWS_WELL_KNOWN_LABELS]);
const OVERLAY_AWS_EXCLUDED = new Set(['karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/capacity-reservation-type', 'karpenter.k8s.aws/capacity-reservation-id', 'karpenter.k8s.aws/capacity-reservation-interruptible', 'karpenter.k8s.aws/placement-group-id', 'karpenter.k8s.aws/placement-group-partition']);

const overlayRequirementSchema = strict({
  key: labelKey.superRefine((key, ctx) => {
    const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    if (key === 'kubernetes.io/hostname') ctx.addIssue({ code: 'custom', message: 'label "kubernetes.io/hostname" is restricted', input: key });
    else if (domain.endsWith('karpenter.sh') && !OVERLAY_KARPENTER_KEYS.has(key)) {
      ctx.addIssue({ code: 'custom', message: 'label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type and karpenter.sh/nodepool may be used)', input: key });
    } else if (domain.endsWith('karpenter.k8s.aws') && (!OVERLAY_KARPENTER_KEYS.has(key) || OVERLAY_AWS_EXCLUDED.has(key))) {
      ctx.addIssue({ code: 'custom', message: 'label domain "karpenter.k8s.aws" is restricted to its instance labels (instance-category, instance-family, instance-size, ...)', input: key });
    }
  }),
  operator: enumOf(NodeOverlaySpecRequirementsOperator),
  values: z.array(labelValue).optional(),
}).superRefine((req, ctx) => {
  const values = req.values ?? [];
  if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must list at least one value for operator ${req.operator}`, input: req.values });
  }
  if (NUMERIC_OPERATORS.includes(req.operator) && (values.length !== 1 || !/^[0-9]+$/.test(values[0]!))) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must be a single non-negative integer for operator ${req.operator}`, input: req.values });
  }
});

const STANDARD_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pods'];

/**
 * One NodeOverlay (Karpenter v1.13, alpha; needs the nodeOverlay feature gate, which the
 * Helm values turn on when an environment has one). `spec.*` sits on the overlay itself,
 * as the node template's fields sit on a pool.
 */
export const nodeOverlaySchema = strict({
  name: objectName,
  metadata: objectMetadataSchema.optional(),
  /** Instance types (and pools, by karpenter.sh/nodepool or a pool label) the overlay applies to. */
  requirements: z.array(overlayRequirementSchema).max(100, { error: 'must have at most 100 requirements' }),
  /** The price Karpenter assumes for matching instance types, e.g. "0.0236". */
  price: z.string().regex(/^\d+(\.\d+)?$/, { error: 'must be a price such as "0.0236" (a decimal number as a string)' }).optional(),
  /** A change of the price: "-0.01", "+0.5", "-15%" (at most -100%) or "+10%". */
  priceAdjustment: z
    .string()
    .regex(/^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$/, { error: 'must be a signed amount such as "-0.01" or a percentage from "-100%" such as "-15%" or "+10%"' })
    .optional(),
  /** Extended resources added to matching instance types (e.g. hugepages-2Mi, smarter-devices/fuse). */
  capacity: z
    .record(z.string().regex(/^[a-zA-Z0-9.\-/]+$/, { error: 'must be a resource name such as hugepages-2Mi or example.com/device' }), quantity)
    .superRefine((c, ctx) => {
      for (const key of Object.keys(c).filter((k) => STANDARD_RESOURCES.includes(k))) {
        ctx.addIssue({ code: 'custom', path: [key], message: `must not be ${STANDARD_RESOURCES.join(', ')}: an overlay only adds extended resources`, input: key });
      }
    })
    .optional(),
  /** Higher wins when overlays overlap. */
  weight: z.number().int().min(1, { error: 'must be an integer from 1 to 10000' }).max(10000, { error: 'must be an integer from 1 to 10000' }).optional(),
}).superRefine((o, ctx) => {
  if (o.price !== undefined && o.priceAdjustment !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['priceAdjustment'], message: 'must not be set together with price', input: o.priceAdjustment });
  }
  if (o.price === undefined && o.priceAdjustment === undefined && o.capacity === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must set price, priceAdjustment or capacity: an overlay without one changes nothing', input: o });
  }
});
export type NodeOverlayConfig = z.infer<typeof nodeOverlaySchema>;
