import { z } from 'zod';
import { resolveNodePool } from './presets.js';
import type { NodePoolConfig } from './karpenter-schema.js';
import { compareQuantities, labelKey, labelValue, nonEmpty, nonNegativeQuantity, strict } from './schema-kit.js';
import { affinitySchema, envSchema, podSecurityContextSchema, securityContextSchema, topologySpreadConstraintSchema } from './pod-spec-schema.js';
import { POD_SECURITY_LEVELS } from './pod-security.js';
import { checkPodFields, podFieldWarnings, replicasOneWarning, spotPoolsFor } from './workload-pod-checks.js';
import { own } from './own.js';

/**
 * Workloads of an environment file (`workloads:`): Deployments made to survive Spot
 * reclaim and consolidation by charts/spot-ready-workload.ts. The shutdown arithmetic
 * and the budget rule live here, as pure functions, because both the YAML checks and
 * the construct use them and config/ must not load cdk8s.
 */

/** EC2 reclaims a Spot instance this long after the interruption notice, drained or not. */
export const SPOT_INTERRUPTION_NOTICE_SECONDS = 120;

/** Defaults of a Spot-ready workload; the construct's @default tags name these. */
export const WORKLOAD_DEFAULTS = {
  namespace: 'default',
  replicas: 2,
  port: 8080,
  readinessPath: '/ready',
  readinessPeriodSeconds: 5,
  readinessFailureThreshold: 2,
  /** Time for endpoint and load-balancer deregistration to reach every client before SIGTERM. */
  preStopSleepSeconds: 10,
  /** Time the application needs after SIGTERM to finish in-flight requests and close pools. */
  drainSeconds: 30,
  /** Process exit and kubelet bookkeeping after the drain. */
  exitSlackSeconds: 5,
  disruptionBudget: { maxUnavailable: 1 } as DisruptionBudget,
} as const;

/** Capacity types Karpenter v1 knows; a NodePool without the requirement gets on-demand only. */
export const CAPACITY_TYPES = ['on-demand', 'spot', 'reserved'] as const;
export type CapacityType = (typeof CAPACITY_TYPES)[number];
const CAPACITY_TYPE_KEY = 'karpenter.sh/capacity-type';

/**
 * terminationGracePeriodSeconds of a workload. Kubernetes counts the preStop hook inside
 * the grace period, so the default is preStop + drain + slack (10 + 30 + 5 = 45 s).
 */
export function gracePeriodSeconds(w: { preStopSleepSeconds?: number; drainSeconds?: number; terminationGracePeriodSeconds?: number }): number {
  return (
    w.terminationGracePeriodSeconds ??
    (w.preStopSleepSeconds ?? WORKLOAD_DEFAULTS.preStopSleepSeconds) + (w.drainSeconds ?? WORKLOAD_DEFAULTS.drainSeconds) + WORKLOAD_DEFAULTS.exitSlackSeconds
  );
}

export type PodCountOrPercent = number | string;
export interface DisruptionBudget {
  readonly maxUnavailable?: PodCountOrPercent;
  readonly minAvailable?: PodCountOrPercent;
}

/** A problem with a budget, located by its field (`maxUnavailable` or `minAvailable`). */
export interface BudgetProblem {
  readonly field: 'maxUnavailable' | 'minAvailable';
  readonly message: string;
}

/** Pods a value stands for at `replicas`; percentages round up, as the disruption controller does. */
function podsFor(value: PodCountOrPercent, replicas: number): number {
  return typeof value === 'number' ? value : Math.ceil((Number.parseInt(value, 10) * replicas) / 100);
}

/**
 * Why this budget can never allow an eviction at `replicas`, if it cannot. Such a budget
 * makes every node running the pods undrainable: consolidation, drift and expiry wait
 * on it forever. Zero replicas (inflate) evict nothing, so any budget is fine.
 */
export function disruptionBudgetProblem(budget: DisruptionBudget, replicas: number): BudgetProblem | undefined {
  if (replicas === 0) return undefined;
  const field = budget.minAvailable !== undefined ? 'minAvailable' : 'maxUnavailable';
  const value = budget[field]!;
  const pods = podsFor(value, replicas);
  const evictable = field === 'minAvailable' ? replicas - pods : pods;
  if (evictable > 0) return undefined;
  const rounding = typeof value === 'string' ? ` (${value} of ${replicas} rounds up to ${pods})` : '';
  return {
    field,
    message:
      `must allow at least one of the ${replicas} replicas to be evicted${rounding}: a budget that allows no eviction ` +
      `blocks Karpenter's consolidation, drift and expiry of every node running these pods, forever`,
  };
}

/** The parts of a workload the shutdown and budget rules look at (YAML config and construct props alike). */
export interface WorkloadShape {
  readonly replicas?: number;
  readonly port?: number | false;
  readonly readinessProbe?: unknown;
  readonly preStopSleepSeconds?: number;
  readonly drainSeconds?: number;
  readonly terminationGracePeriodSeconds?: number;
  readonly disruptionBudget?: DisruptionBudget;
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
}

/** One problem, located by a field path relative to the workload; `value` is what was given. */
export interface WorkloadProblem {
  readonly path: readonly string[];
  readonly message: string;
  readonly value: unknown;
}

/**
 * Everything wrong with a workload on its own: a budget that allows no eviction, a
 * preStop longer than the grace period (the API server refuses it), no probe target.
 */
export function workloadProblems(w: WorkloadShape): WorkloadProblem[] {
  const out: WorkloadProblem[] = [];
  const budget: DisruptionBudget = w.disruptionBudget ?? WORKLOAD_DEFAULTS.disruptionBudget;
  if ((budget.maxUnavailable === undefined) === (budget.minAvailable === undefined)) {
    out.push({ path: ['disruptionBudget'], message: 'must set exactly one of maxUnavailable or minAvailable', value: budget });
  } else {
    const problem = disruptionBudgetProblem(budget, w.replicas ?? WORKLOAD_DEFAULTS.replicas);
    if (problem) out.push({ path: ['disruptionBudget', problem.field], message: problem.message, value: budget[problem.field] });
  }
  const preStop = w.preStopSleepSeconds ?? WORKLOAD_DEFAULTS.preStopSleepSeconds;
  const grace = gracePeriodSeconds(w);
  if (preStop > grace) {
    out.push({ path: ['terminationGracePeriodSeconds'], message: `must be at least preStopSleepSeconds (${preStop}): the preStop hook runs inside the grace period`, value: grace });
  }
  if (w.port === false && w.readinessProbe === undefined) {
    out.push({ path: ['readinessProbe'], message: 'must be set (or false) when port is false: the default probe targets the port', value: undefined });
  }
  if (w.resources) out.push(...resourceProblems(w.resources));
  return out;
}

/** Capacity types a NodePool (after its preset) lets Karpenter launch. */
export function allowedCapacityTypes(pool: NodePoolConfig): CapacityType[] {
  const req = (resolveNodePool(pool).requirements ?? []).find((r) => r.key === CAPACITY_TYPE_KEY);
  if (!req) return ['on-demand'];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return CAPACITY_TYPES.filter((c) => values.includes(c));
    case 'NotIn':
      return CAPACITY_TYPES.filter((c) => !values.includes(c));
    case 'Exists':
      return [...CAPACITY_TYPES];
    default:
      return [];
  }
}

/** Pools a pod that tolerates nothing may land on: no NoSchedule/NoExecute taint. */
export function untainted(pool: NodePoolConfig): boolean {
  return !(pool.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule');
}

// ---------------------------------------------------------------- schema

/**
 * The workload name is also its container's name and the namespace a Namespace's name,
 * both DNS-1123 labels (kubernetes@v1.36.5 pkg/apis/core/validation/validation.go
 * validateContainers and ValidateNamespaceName, IsDNS1123Label).
 */
const dnsLabel = z
  .string({ error: 'must be a name' })
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { error: 'must be a lowercase RFC 1123 label (a-z, 0-9 and "-", at most 63 characters)' });
const dnsSubdomain = z
  .string({ error: 'must be a name' })
  .max(253, { error: 'must be at most 253 characters' })
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, { error: 'must be a lowercase RFC 1123 subdomain (a-z, 0-9, "-" and ".")' });
/**
 * Whole seconds up to the API field's own range: int32 for probe timings (k8s.io/api core/v1
 * Probe), int64 for terminationGracePeriodSeconds and the preStop sleep (the API server
 * checks only that they are not negative: kubernetes@v1.36.5 pkg/apis/core/validation/
 * validation.go ValidateNonnegativeField); past 2^53 JavaScript cannot hold them exactly.
 */
const INT32_MAX = 2147483647;
const seconds = (max: number) =>
  z
    .number({ error: `must be a whole number of seconds from 0 to ${max}` })
    .int({ error: `must be a whole number of seconds from 0 to ${max}` })
    .min(0, { error: `must be a whole number of seconds from 0 to ${max}` })
    .max(max, { error: `must be a whole number of seconds from 0 to ${max}` });
const port = z.number({ error: 'must be a port number from 1 to 65535' }).int().min(1, { error: 'must be a port number from 1 to 65535' }).max(65535, { error: 'must be a port number from 1 to 65535' });
const podCountOrPercent = z
  .union([z.number(), z.string()], { error: 'must be a whole number of pods (e.g. 1) or a percentage from 0% to 100% (e.g. 25%)' })
  .refine((v) => (typeof v === 'number' ? Number.isInteger(v) && v >= 0 : /^(100|[1-9]?[0-9])%$/.test(v)), {
    error: 'must be a whole number of pods (e.g. 1) or a percentage from 0% to 100% (e.g. 25%)',
  });
// 0 is allowed: the API server defaults it (period 10 s, timeout 1 s, thresholds 3 and 1;
// kubernetes@v1.36.5 pkg/apis/core/v1/defaults.go SetDefaults_Probe).
const probeTiming = {
  initialDelaySeconds: seconds(INT32_MAX).optional(),
  periodSeconds: seconds(INT32_MAX).optional(),
  timeoutSeconds: seconds(INT32_MAX).optional(),
  failureThreshold: z.number().int().min(0, { error: 'must be 0 (the default, 3) or more' }).max(INT32_MAX).optional(),
  successThreshold: z.number().int().min(0, { error: 'must be 0 (the default, 1) or more' }).max(INT32_MAX).optional(),
};

/** A readiness probe in Kubernetes' own shape: exactly one of httpGet, tcpSocket or exec. */
export const readinessProbeSchema = strict({
  httpGet: strict({ path: z.string().startsWith('/', { error: 'must be an absolute path such as /ready' }), port: port.optional() }).optional(),
  tcpSocket: strict({ port: port.optional() }).optional(),
  exec: strict({ command: z.array(z.string()).min(1, { error: 'must list the command and its arguments' }) }).optional(),
  ...probeTiming,
}).refine((p) => [p.httpGet, p.tcpSocket, p.exec].filter((h) => h !== undefined).length === 1, { error: 'must set exactly one of httpGet, tcpSocket or exec' });
export type ReadinessProbeConfig = z.infer<typeof readinessProbeSchema>;

/**
 * Container resource names the API server accepts (kubernetes@v1.36.5
 * pkg/apis/core/validation/validation.go validateContainerResourceName): cpu, memory,
 * ephemeral-storage, hugepages-<size>, or an extended resource with a domain outside
 * kubernetes.io (nvidia.com/gpu). `cpus` is refused there, after synth, at sync time.
 */
const containerResourceName = z.string().refine(
  (k) => (k.includes('/') ? labelKey.safeParse(k).success && !/^([^/]*\.)?kubernetes\.io\//.test(k) && !k.startsWith('requests.') : /^(cpu|memory|ephemeral-storage|hugepages-.+)$/.test(k)),
  { error: 'must be a container resource: cpu, memory, ephemeral-storage, hugepages-<size>, or an extended resource with its domain such as nvidia.com/gpu' },
);
const resourceList = z.record(containerResourceName, nonNegativeQuantity);

/** Names the API server lets a request exceed or undercut its limit (helper.IsOvercommitAllowed): the native ones. */
const OVERCOMMIT = /^(cpu|memory|ephemeral-storage)$/;

/**
 * Requests against limits, as the API server checks them (validation.go
 * validateResourceRequirements): a request above its limit is refused; an extended
 * resource (nvidia.com/gpu, hugepages) must have a limit, equal to any request.
 */
export function resourceProblems(resources: { requests?: Record<string, string>; limits?: Record<string, string> }): WorkloadProblem[] {
  const out: WorkloadProblem[] = [];
  const limits = resources.limits ?? {};
  for (const [name, request] of Object.entries(resources.requests ?? {})) {
    const limit = own(limits, name);
    const path = ['resources', 'requests', name];
    if (limit === undefined) {
      if (!OVERCOMMIT.test(name)) out.push({ path, message: `needs a limit too (resources.limits["${name}"], equal to the request): ${name} cannot be overcommitted`, value: request });
    } else if (!OVERCOMMIT.test(name) && compareQuantities(request, limit) !== 0) {
      out.push({ path, message: `must equal its limit ${limit}: ${name} cannot be overcommitted`, value: request });
    } else if (compareQuantities(request, limit) > 0) {
      out.push({ path, message: `must be at most its limit ${limit}`, value: request });
    }
  }
  return out;
}

export const workloadSchema = strict({
  /** Deployment, PodDisruptionBudget and container name; also the `app.kubernetes.io/name` label. */
  name: dnsLabel,
  /** Namespace; one that is not built in is emitted as a Namespace object. Default `default`. */
  namespace: dnsLabel.optional(),
  image: nonEmpty('a container image reference'),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  /** Kubernetes' list of {name, value | valueFrom}, or a map of names to values. */
  env: envSchema.optional(),
  /** Container port named `http`, the default readiness probe's target. `false`: no port. Default 8080. */
  port: z.union([port, z.literal(false)], { error: 'must be a port number from 1 to 65535, or false' }).optional(),
  /** Default 2: one replica is an outage on every reclaim. */
  replicas: z.number({ error: 'must be a whole number of replicas' }).int({ error: 'must be a whole number of replicas' }).min(0, { error: 'must be 0 or more' }).optional(),
  resources: strict({ requests: resourceList.optional(), limits: resourceList.optional() }).optional(),
  /** Default: httpGet /ready on the container port every 5 s, unready after 2 failures. `false`: none. */
  readinessProbe: z.union([readinessProbeSchema, z.literal(false)], { error: 'must be a probe (httpGet, tcpSocket or exec) or false' }).optional(),
  /** preStop `sleep` so endpoints and load balancers stop sending before SIGTERM. 0: no hook. Default 10. */
  preStopSleepSeconds: seconds(Number.MAX_SAFE_INTEGER).optional(),
  /** Time the application needs after SIGTERM to drain and exit. Default 30. */
  drainSeconds: seconds(Number.MAX_SAFE_INTEGER).optional(),
  /** Default preStopSleepSeconds + drainSeconds + 5 (45 s). The preStop hook runs inside it. */
  terminationGracePeriodSeconds: seconds(Number.MAX_SAFE_INTEGER).optional(),
  /** Exactly one of maxUnavailable or minAvailable. Default maxUnavailable 1. */
  disruptionBudget: strict({ maxUnavailable: podCountOrPercent.optional(), minAvailable: podCountOrPercent.optional() }).optional(),
  /** Spread over zones and capacity types. Default true. */
  topologySpread: z.boolean().optional(),
  /** Pod annotation karpenter.sh/do-not-disrupt: "true": no voluntary disruption (Spot reclaim still happens). */
  doNotDisrupt: z.boolean().optional(),
  /** Name of an entry of `nodePools`: pods get its nodeSelector and tolerate its taints. Default: any pool. */
  nodePool: dnsLabel.optional(),
  /** Pin a capacity type the pool allows (nodeSelector karpenter.sh/capacity-type). */
  capacityType: z.enum(CAPACITY_TYPES, { error: `must be one of ${CAPACITY_TYPES.join(', ')}` }).optional(),
  /** Extra pod annotations. */
  podAnnotations: z.record(labelKey, z.string()).optional(),
  // ---- Pod fields in Kubernetes' names and shapes; README "Workloads" says how each merges with the defaults.
  /** Extra pod labels; `app.kubernetes.io/name` is the selector and stays the workload's name. */
  podLabels: z.record(labelKey, labelValue).optional(),
  /** Merged with the nodeSelector that nodePool and capacityType make. */
  nodeSelector: z.record(labelKey, labelValue).optional(),
  /** With no nodePool, each required node selector term also gets `karpenter.sh/nodepool Exists`. */
  affinity: affinitySchema.optional(),
  /** Added to the default zone and capacity-type spread; one with the same topologyKey replaces the default. */
  topologySpreadConstraints: z.array(topologySpreadConstraintSchema).optional(),
  priorityClassName: dnsSubdomain.optional(),
  serviceAccountName: dnsSubdomain.optional(),
  /** Pod `securityContext`, field by field over runAsNonRoot: true, seccompProfile RuntimeDefault. */
  podSecurityContext: podSecurityContextSchema.optional(),
  /** Container `securityContext`, field by field over allowPrivilegeEscalation: false, capabilities.drop [ALL]. */
  securityContext: securityContextSchema.optional(),
  /** Pod Security Standard the workload must meet; its Namespace enforces the loosest of its workloads'. Default restricted. */
  podSecurity: z.enum(POD_SECURITY_LEVELS, { error: `must be one of ${POD_SECURITY_LEVELS.join(', ')}` }).optional(),
});
export type WorkloadConfig = z.infer<typeof workloadSchema>;

/** The built-in test Deployment's name: a workload may not take it (they share a file name). */
export const RESERVED_WORKLOAD_NAMES = ['inflate'] as const;

export const workloadsSchema = z.array(workloadSchema).default([]);

/**
 * Checks that need the rest of the environment, run from the environment schema:
 * unique names, pools that exist and allow the capacity type, budgets that allow an
 * eviction, a preStop that fits in the grace period.
 */
export function checkWorkloads(env: { nodePools: readonly NodePoolConfig[]; workloads: readonly WorkloadConfig[] }, ctx: z.core.$RefinementCtx<unknown>): void {
  const pools = env.nodePools.map((p) => p.name);
  const seen = new Map<string, number>();
  env.workloads.forEach((w, i) => {
    const at = (...path: PropertyKey[]) => ['workloads', i, ...path];
    const first = seen.get(w.name);
    if ((RESERVED_WORKLOAD_NAMES as readonly string[]).includes(w.name)) {
      ctx.addIssue({ code: 'custom', path: at('name'), message: 'must not be "inflate": every environment already gets the inflate test Deployment', input: w.name });
    } else if (first !== undefined) {
      // File names are <Kind>.<name>, whatever the namespace, so names must be unique.
      ctx.addIssue({ code: 'custom', path: at('name'), message: `must be unique among workloads; "${w.name}" is already used at workloads[${first}]`, input: w.name });
    } else seen.set(w.name, i);
    const pool = env.nodePools.find((p) => p.name === w.nodePool);
    if (w.nodePool !== undefined && !pool) {
      ctx.addIssue({ code: 'custom', path: at('nodePool'), message: `must name one of the nodePools (${pools.join(', ')})`, input: w.nodePool });
    }
    if (pool && w.capacityType !== undefined) {
      const allowed = allowedCapacityTypes(pool);
      if (!allowed.includes(w.capacityType)) {
        ctx.addIssue({
          code: 'custom',
          path: at('capacityType'),
          message: `must be a capacity type NodePool "${pool.name}" can launch (${allowed.join(', ') || 'none'}), or pods never schedule`,
          input: w.capacityType,
        });
      }
    }
    if (!pool && w.nodePool === undefined && w.capacityType !== undefined) {
      // The pod tolerates no taint (charts/spot-ready-workload.ts), so only untainted pools count.
      const usable = env.nodePools.filter((p) => untainted(p) && allowedCapacityTypes(p).includes(w.capacityType!));
      if (usable.length === 0) {
        const described = env.nodePools.map((p) => `"${p.name}" (${untainted(p) ? allowedCapacityTypes(p).join(', ') || 'none' : 'tainted'})`).join(', ');
        ctx.addIssue({
          code: 'custom',
          path: at('capacityType'),
          message: `must be a capacity type an untainted NodePool can launch, or pods never schedule; NodePools: ${described}`,
          input: w.capacityType,
        });
      }
    }
    const handler = w.readinessProbe ? (w.readinessProbe.httpGet ?? w.readinessProbe.tcpSocket) : undefined;
    if (w.port === false && handler && handler.port === undefined) {
      ctx.addIssue({ code: 'custom', path: at('readinessProbe'), message: 'must name a port when port is false: there is no http port to default to', input: w.readinessProbe });
    }
    for (const p of workloadProblems(w)) ctx.addIssue({ code: 'custom', path: at(...p.path), message: p.message, input: p.value });
    for (const p of checkPodFields(env.nodePools, w)) ctx.addIssue({ code: 'custom', path: at(...p.path), message: p.message, input: p.value });
  });
}

/**
 * Warnings about workloads: allowed, but probably not what was meant. `file` prefixes
 * each line, as the other environment warnings do.
 */
export function workloadWarnings(file: string, env: { nodePools: readonly NodePoolConfig[]; workloads: readonly WorkloadConfig[] }): string[] {
  const out: string[] = [];
  env.workloads.forEach((w, i) => {
    const where = `${file}: workloads[${i}] "${w.name}"`;
    // Only the pools its nodeSelector and required affinity let it reach, and only if they can launch Spot.
    const spotPools = spotPoolsFor(env.nodePools, w);
    const grace = gracePeriodSeconds(w);
    if (spotPools.length > 0 && grace > SPOT_INTERRUPTION_NOTICE_SECONDS) {
      const poolNames = `NodePool${spotPools.length > 1 ? 's' : ''} ${spotPools.map((p) => `"${p.name}"`).join(', ')}`;
      out.push(
        `${where}: terminationGracePeriodSeconds ${grace} s (preStop included) is longer than the ${SPOT_INTERRUPTION_NOTICE_SECONDS} s Spot interruption notice, ` +
          `and ${poolNames} can launch Spot: EC2 reclaims the instance ${SPOT_INTERRUPTION_NOTICE_SECONDS} s after the notice whether or not the pod has finished, ` +
          `so the end of its drain never happens; keep terminationGracePeriodSeconds (default preStopSleepSeconds + drainSeconds + ${WORKLOAD_DEFAULTS.exitSlackSeconds}) at most ${SPOT_INTERRUPTION_NOTICE_SECONDS} s, or set capacityType: on-demand`,
      );
    }
    const single = replicasOneWarning(env.nodePools, w);
    if (single) out.push(`${where}: ${single}`);
    out.push(...podFieldWarnings(env.nodePools, w).map((m) => `${where}: ${m}`));
  });
  return out;
}
