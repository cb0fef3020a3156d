import type { EnvironmentConfig } from '../../config/environment.js';
import { KARPENTER_SERVICE_ACCOUNT } from './names.js';

/**
 * The part of the Karpenter chart's values this project sets (names as in the chart's
 * values.yaml; test/charts/argocd checks every path against the vendored copy). They go
 * to `helm.valuesObject`, so a reviewer sees them in the Application, not in a string.
 */
export interface KarpenterChartValues {
  readonly settings: {
    readonly clusterName: string;
    readonly interruptionQueue: string;
    /** Set only when turning one on: the chart's own defaults stay authoritative otherwise. */
    readonly featureGates?: { readonly nodeOverlay: true };
  };
  readonly serviceAccount: { readonly name: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly replicas: number;
  /** Merged by Helm into the chart's default (`kubernetes.io/os: linux`). */
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly controller: {
    readonly resources: {
      readonly requests: { readonly cpu: string; readonly memory: string };
      readonly limits: { readonly cpu?: string; readonly memory: string };
    };
  };
}

/** The values that differ per cluster: literal values, or Go template expressions in fleet mode. */
export interface ClusterValues {
  readonly clusterName: string;
  /** The SQS queue NAME (not its URL or ARN): that is what settings.interruptionQueue takes. */
  readonly interruptionQueue: string;
  /** Set only in IRSA mode. */
  readonly controllerRoleArn?: string;
}

export const IRSA_ROLE_ANNOTATION = 'eks.amazonaws.com/role-arn';

export function karpenterChartValues(config: EnvironmentConfig, cluster: ClusterValues): KarpenterChartValues {
  const { karpenter } = config;
  if (config.cluster.identity === 'irsa' && cluster.controllerRoleArn === undefined) {
    throw new Error('IRSA mode needs the controller role ARN');
  }
  return {
    settings: {
      clusterName: cluster.clusterName,
      interruptionQueue: cluster.interruptionQueue,
      // NodeOverlay is alpha: the controller ignores overlays unless the gate is on, and only then.
      ...(config.nodeOverlays.length > 0 ? { featureGates: { nodeOverlay: true } as const } : {}),
    },
    serviceAccount: {
      name: KARPENTER_SERVICE_ACCOUNT,
      // With Pod Identity the association (kube-system/karpenter) grants the role; the annotation would be ignored noise.
      ...(config.cluster.identity === 'irsa' ? { annotations: { [IRSA_ROLE_ANNOTATION]: cluster.controllerRoleArn! } } : {}),
    },
    replicas: karpenter.replicas,
    // On the system node group, never on a node Karpenter made (the chart's affinity already
    // excludes those): a controller that consolidates its own node away is how clusters stall.
    nodeSelector: { ...config.cluster.systemNodeGroup.labels },
    controller: {
      resources: {
        requests: { cpu: karpenter.resources.requests.cpu, memory: karpenter.resources.requests.memory },
        limits: {
          ...(karpenter.resources.limits.cpu !== undefined ? { cpu: karpenter.resources.limits.cpu } : {}),
          memory: karpenter.resources.limits.memory,
        },
      },
    },
  };
}
