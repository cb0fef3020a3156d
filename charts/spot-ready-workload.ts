import { k8s } from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import type { NodePoolConfig } from '../config/karpenter-schema.js';
import { describeValue } from '../config/errors.js';
import { gracePeriodSeconds, workloadProblems, WORKLOAD_DEFAULTS, type CapacityType, type DisruptionBudget, type ReadinessProbeConfig } from '../config/workload-schema.js';
import { containerSecurityContext, podSecurityContext, podSecurityViolations, type PodSecurityLevel } from '../config/pod-security.js';
import type { EnvVarConfig } from '../config/pod-spec-schema.js';
import { SYNC_WAVE, syncWave } from './metadata.js';

/** Required node affinity: any node a Karpenter NodePool launched, never the system node group. */
export const KARPENTER_NODES_ONLY: k8s.Affinity = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'Exists' }] }],
    },
  },
};

export interface SpotReadyWorkloadProps {
  /** Name of the Deployment, its PodDisruptionBudget and its container; value of the `app.kubernetes.io/name` label. */
  readonly name: string;
  /**
   * Namespace of both objects. The caller emits the Namespace object if it is not built in.
   * @default "default"
   */
  readonly namespace?: string;
  /** Container image. */
  readonly image: string;
  /** @default the image's entrypoint */
  readonly command?: readonly string[];
  /** @default the image's arguments */
  readonly args?: readonly string[];
  /**
   * Kubernetes' `env` list, or a map of names to values.
   * @default none
   */
  readonly env?: Readonly<Record<string, string>> | readonly EnvVarConfig[];
  /**
   * Container port, named `http`; the default readiness probe targets it. `false` for a
   * container that serves nothing (then give a readinessProbe or `false`).
   * @default 8080
   */
  readonly port?: number | false;
  /**
   * More than one, so that losing a node is never losing the service.
   * @default 2
   */
  readonly replicas?: number;
  /**
   * Requests are what Karpenter sizes nodes by.
   * @default none
   */
  readonly resources?: { readonly requests?: Readonly<Record<string, string>>; readonly limits?: Readonly<Record<string, string>> };
  /**
   * The pod leaves Service endpoints while it is unready; the application fails it on SIGTERM.
   * `false` for none.
   * @default httpGet /ready on the `http` port, every 5 s, unready after 2 failures
   */
  readonly readinessProbe?: k8s.Probe | false;
  /**
   * preStop `sleep` (the native lifecycle action, Kubernetes 1.30+, no shell in the image
   * needed): endpoint and load-balancer deregistration reach clients before SIGTERM. 0: no hook.
   * @default 10
   */
  readonly preStopSleepSeconds?: number;
  /**
   * Time the application needs after SIGTERM to finish in-flight work and close its pools.
   * Only used to size the default grace period.
   * @default 30
   */
  readonly drainSeconds?: number;
  /**
   * Kubernetes counts the preStop hook inside it, then sends SIGKILL.
   * @default preStopSleepSeconds + drainSeconds + 5 (45)
   */
  readonly terminationGracePeriodSeconds?: number;
  /**
   * Exactly one of maxUnavailable or minAvailable; it must allow at least one eviction.
   * @default { maxUnavailable: 1 }
   */
  readonly disruptionBudget?: DisruptionBudget;
  /**
   * Spread across zones (hard) and capacity types (soft); see `spreadConstraints`.
   * @default true
   */
  readonly topologySpread?: boolean;
  /**
   * Pod annotation `karpenter.sh/do-not-disrupt: "true"`: Karpenter will not consolidate
   * or drift nodes running these pods. A Spot reclaim still takes them.
   * @default false
   */
  readonly doNotDisrupt?: boolean;
  /**
   * The NodePool (as configured, preset not yet applied) to schedule onto: nodeSelector
   * `karpenter.sh/nodepool` and a toleration for each of its taints.
   * @default any pool the pods tolerate
   */
  readonly nodePool?: NodePoolConfig;
  /**
   * nodeSelector `karpenter.sh/capacity-type`.
   * @default any the pool allows
   */
  readonly capacityType?: CapacityType;
  /** @default none */
  readonly podAnnotations?: Readonly<Record<string, string>>;
  /**
   * Extra pod labels. `app.kubernetes.io/name` is the selector: it stays `name`.
   * @default none
   */
  readonly podLabels?: Readonly<Record<string, string>>;
  /**
   * Merged with the `karpenter.sh/nodepool` and `karpenter.sh/capacity-type` entries that
   * `nodePool` and `capacityType` make.
   * @default none
   */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /**
   * As in a pod spec. With no `nodePool`, every required node selector term also gets
   * `karpenter.sh/nodepool Exists` (terms are ORed: one without it could reach the system node group).
   * @default with no nodePool, required `karpenter.sh/nodepool Exists`
   */
  readonly affinity?: k8s.Affinity;
  /**
   * Added after the default spread (see `topologySpread`); one with the same topologyKey as a
   * default replaces it. A constraint without labelSelector selects this workload's pods.
   * @default none
   */
  readonly topologySpreadConstraints?: readonly k8s.TopologySpreadConstraint[];
  /** @default none (the cluster's default priority) */
  readonly priorityClassName?: string;
  /** @default none (the namespace's `default` ServiceAccount) */
  readonly serviceAccountName?: string;
  /**
   * Pod securityContext, field by field over the defaults.
   * @default { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
   */
  readonly podSecurityContext?: k8s.PodSecurityContext;
  /**
   * Container securityContext, field by field over the defaults.
   * @default { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
   */
  readonly securityContext?: k8s.SecurityContext;
  /**
   * Pod Security Standard the merged security contexts must meet (checked at synth).
   * @default "restricted"
   */
  readonly podSecurity?: PodSecurityLevel;
}

const ZONE_KEY = 'topology.kubernetes.io/zone';
const CAPACITY_TYPE_KEY = 'karpenter.sh/capacity-type';
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';

/**
 * Zones are a hard spread: one AZ's Spot pools being reclaimed, or the AZ failing, takes
 * at most its share of the replicas, and Karpenter launches in the zone the constraint
 * asks for. Capacity types are soft (ScheduleAnyway): Karpenter first tries to put some
 * replicas on On-Demand, so a wave of Spot reclaims leaves them running, but relaxes the
 * preference when a pool (or the pin) allows one type only, so fallback still schedules.
 * No `matchLabelKeys: [pod-template-hash]`: Karpenter ignores it (kubernetes-sigs/karpenter#1569)
 * and would plan nodes against a different skew than the scheduler.
 */
export function spreadConstraints(selector: Record<string, string>, capacityPinned: boolean): k8s.TopologySpreadConstraint[] {
  const labelSelector = { matchLabels: selector };
  const zone = { maxSkew: 1, topologyKey: ZONE_KEY, whenUnsatisfiable: 'DoNotSchedule', labelSelector };
  const capacity = { maxSkew: 1, topologyKey: CAPACITY_TYPE_KEY, whenUnsatisfiable: 'ScheduleAnyway', labelSelector };
  return capacityPinned ? [zone] : [zone, capacity];
}

/** A probe as written in an environment file; a handler without a port targets the `http` port. */
export function toProbe(p: ReadinessProbeConfig): k8s.Probe {
  const target = (port?: number) => (port === undefined ? k8s.IntOrString.fromString('http') : k8s.IntOrString.fromNumber(port));
  return {
    httpGet: p.httpGet && { path: p.httpGet.path, port: target(p.httpGet.port) },
    tcpSocket: p.tcpSocket && { port: target(p.tcpSocket.port) },
    exec: p.exec && { command: p.exec.command },
    initialDelaySeconds: p.initialDelaySeconds,
    periodSeconds: p.periodSeconds,
    timeoutSeconds: p.timeoutSeconds,
    failureThreshold: p.failureThreshold,
    successThreshold: p.successThreshold,
  };
}

/**
 * The pod's affinity: the workload's, and with no pool named, `karpenter.sh/nodepool Exists`
 * in every required term, so that no term reaches the system node group.
 */
export function mergedAffinity(own: k8s.Affinity | undefined, karpenterOnly: boolean): k8s.Affinity | undefined {
  if (!karpenterOnly) return own;
  const only = KARPENTER_NODES_ONLY.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchExpressions!;
  const terms = own?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const required = terms
    ? { nodeSelectorTerms: terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), ...only.filter((o) => !(t.matchExpressions ?? []).some((e) => e.key === o.key))] })) }
    : KARPENTER_NODES_ONLY.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution;
  return { ...own, nodeAffinity: { ...own?.nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: required } };
}

/** The default spread, less any topologyKey the workload spreads on itself, then the workload's own. */
export function mergedSpread(defaults: readonly k8s.TopologySpreadConstraint[], own: readonly k8s.TopologySpreadConstraint[], selector: Record<string, string>): k8s.TopologySpreadConstraint[] {
  const keys = new Set(own.map((c) => c.topologyKey));
  return [...defaults.filter((d) => !keys.has(d.topologyKey)), ...own.map((c) => ({ ...c, labelSelector: c.labelSelector ?? { matchLabels: selector } }))];
}

/** `env` in Kubernetes' shape, from either form. */
function envVars(env: SpotReadyWorkloadProps['env']): k8s.EnvVar[] | undefined {
  // An empty list is dropped, as the API server drops it: written out, Argo CD would show it as drift.
  if (env === undefined || Object.keys(env).length === 0) return undefined;
  if (!Array.isArray(env)) return Object.entries(env).map(([name, value]) => ({ name, value }));
  return (env as readonly EnvVarConfig[]).map((e) => {
    const divisor = e.valueFrom?.resourceFieldRef?.divisor;
    return {
      ...e,
      valueFrom: e.valueFrom && {
        ...e.valueFrom,
        resourceFieldRef: e.valueFrom.resourceFieldRef && { ...e.valueFrom.resourceFieldRef, divisor: divisor === undefined ? undefined : k8s.Quantity.fromString(divisor) },
      },
    };
  });
}

const nonEmpty = <T>(list: T[]) => (list.length > 0 ? list : undefined);
const intOrString = (v: number | string) => (typeof v === 'number' ? k8s.IntOrString.fromNumber(v) : k8s.IntOrString.fromString(v));
const quantities = (list?: Readonly<Record<string, string>>) =>
  list && Object.fromEntries(Object.entries(list).map(([k, v]) => [k, k8s.Quantity.fromString(v)]));

/**
 * A Deployment made to survive Spot reclaim and Karpenter consolidation, and its
 * PodDisruptionBudget. Low-level `Kube*` classes: the output is exactly what is written
 * here, with no generated labels or hashes.
 */
export class SpotReadyWorkload extends Construct {
  public readonly deployment: k8s.KubeDeployment;
  public readonly budget: k8s.KubePodDisruptionBudget;

  constructor(scope: Construct, id: string, props: SpotReadyWorkloadProps) {
    super(scope, id);
    const namespace = props.namespace ?? WORKLOAD_DEFAULTS.namespace;
    const replicas = props.replicas ?? WORKLOAD_DEFAULTS.replicas;
    const port = props.port ?? WORKLOAD_DEFAULTS.port;
    const preStop = props.preStopSleepSeconds ?? WORKLOAD_DEFAULTS.preStopSleepSeconds;
    const grace = gracePeriodSeconds(props);
    const budget: DisruptionBudget = props.disruptionBudget ?? WORKLOAD_DEFAULTS.disruptionBudget;
    const readinessProbe =
      props.readinessProbe ??
      (port === false
        ? undefined
        : {
            httpGet: { path: WORKLOAD_DEFAULTS.readinessPath, port: k8s.IntOrString.fromString('http') },
            periodSeconds: WORKLOAD_DEFAULTS.readinessPeriodSeconds,
            failureThreshold: WORKLOAD_DEFAULTS.readinessFailureThreshold,
          });

    const podSecurity = podSecurityContext(props.podSecurityContext);
    const containerSecurity = containerSecurityContext(props.securityContext);
    this.node.addValidation({
      validate: () =>
        [...workloadProblems(props), ...podSecurityViolations(props.podSecurity ?? 'restricted', podSecurity, containerSecurity)].map(
          (p) => `${p.path.join('.')} ${p.message}, got ${describeValue(p.value)}`,
        ),
    });

    const selector = { 'app.kubernetes.io/name': props.name };
    const pool = props.nodePool;
    const nodeSelector = {
      ...props.nodeSelector,
      ...(pool && { 'karpenter.sh/nodepool': pool.name }),
      ...(props.capacityType && { [CAPACITY_TYPE_KEY]: props.capacityType }),
    };
    const capacityPinned = props.capacityType !== undefined || props.nodeSelector?.[CAPACITY_TYPE_KEY] !== undefined;
    const annotations = { ...props.podAnnotations, ...(props.doNotDisrupt && { [DO_NOT_DISRUPT]: 'true' }) };
    const metadata = { name: props.name, namespace, annotations: syncWave(SYNC_WAVE.workload) };

    this.deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata,
      spec: {
        replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: { ...props.podLabels, ...selector }, annotations: Object.keys(annotations).length > 0 ? annotations : undefined },
          spec: {
            terminationGracePeriodSeconds: grace,
            nodeSelector: Object.keys(nodeSelector).length > 0 ? nodeSelector : undefined,
            // With no pool named, still keep off the fixed system node group (it has no taint):
            // only nodes Karpenter launched carry karpenter.sh/nodepool.
            affinity: mergedAffinity(props.affinity, pool === undefined),
            // A pool's taints keep other pods off it; pods sent there must tolerate them.
            tolerations: pool?.taints?.map((t) => ({ key: t.key, operator: t.value === undefined ? 'Exists' : 'Equal', value: t.value, effect: t.effect })),
            topologySpreadConstraints: nonEmpty(mergedSpread((props.topologySpread ?? true) ? spreadConstraints(selector, capacityPinned) : [], props.topologySpreadConstraints ?? [], selector)),
            priorityClassName: props.priorityClassName,
            serviceAccountName: props.serviceAccountName,
            securityContext: podSecurity,
            containers: [
              {
                name: props.name,
                image: props.image,
                command: props.command && [...props.command],
                args: props.args && [...props.args],
                env: envVars(props.env),
                ports: port === false ? undefined : [{ name: 'http', containerPort: port, protocol: 'TCP' }],
                readinessProbe: readinessProbe === false ? undefined : readinessProbe,
                lifecycle: preStop > 0 ? { preStop: { sleep: { seconds: preStop } } } : undefined,
                resources: props.resources && { requests: quantities(props.resources.requests), limits: quantities(props.resources.limits) },
                securityContext: containerSecurity,
              },
            ],
          },
        },
      },
    });

    this.budget = new k8s.KubePodDisruptionBudget(this, 'Budget', {
      metadata,
      spec: {
        maxUnavailable: budget.maxUnavailable === undefined ? undefined : intOrString(budget.maxUnavailable),
        minAvailable: budget.minAvailable === undefined ? undefined : intOrString(budget.minAvailable),
        selector: { matchLabels: selector },
        // Without this, one crash-looping pod counts against the budget and blocks every
        // drain (consolidation, drift, expiry) of the node it sits on, forever.
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    });
  }
}
