import { loadEnvironment, type LoadedEnvironment } from '../config/environment.js';
import { INTERRUPTION_RULES } from './policies.js';

/**
 * What an environment wants to exist in AWS, derived from environments/<env>.yaml alone.
 * Every name here is knowable before apply, so the plan can show it.
 */
export interface DesiredState {
  readonly env: string;
  readonly clusterName: string;
  readonly region: string;
  readonly kubernetesVersion: string;
  readonly vpcId: string;
  readonly privateSubnetIds: readonly string[];
  readonly publicAccessCidrs: readonly string[];
  readonly identity: 'podIdentity' | 'irsa';
  readonly chartVersion: string;
  /** Namespace and service account of the Karpenter controller. */
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly systemNodeGroup: {
    readonly name: string;
    readonly instanceTypes: readonly string[];
    readonly size: number;
    readonly labels: Readonly<Record<string, string>>;
  };
  readonly names: {
    readonly clusterRole: string;
    readonly systemNodeRole: string;
    readonly nodeRole: string;
    readonly controllerRole: string;
    readonly queue: string;
    readonly rules: readonly string[];
  };
  readonly discoveryTag: { readonly key: 'karpenter.sh/discovery'; readonly value: string };
  /**
   * Type of the node role's EKS access entry. EKS allows one entry per principal, so a role
   * that Windows nodes use gets EC2_WINDOWS (which also admits Linux nodes: the same node
   * groups, plus eks:kube-proxy-windows); EC2_LINUX alone leaves Windows nodes unable to join.
   */
  readonly nodeAccessEntryType: AccessEntryType;
}

export type AccessEntryType = 'EC2_LINUX' | 'EC2_WINDOWS';

/** Windows AMI families (amiFamily) and aliases (windows2022@...), as Karpenter v1.13 names them. */
const WINDOWS_FAMILY = /^windows\d{4}$/i;

/** True when a node class launches Windows nodes: by its amiFamily, or by an alias when the family is left to it. */
export function usesWindows(nc: { readonly amiFamily?: string; readonly amiSelectorTerms?: readonly { readonly alias?: string }[] }): boolean {
  if (nc.amiFamily !== undefined && nc.amiFamily !== 'Custom') return WINDOWS_FAMILY.test(nc.amiFamily);
  return (nc.amiSelectorTerms ?? []).some((t) => t.alias !== undefined && WINDOWS_FAMILY.test(t.alias.split('@')[0]!));
}

export const MANAGED = {
  cluster: ['AmazonEKSClusterPolicy'],
  systemNode: ['AmazonEKS_CNI_Policy', 'AmazonEKSWorkerNodePolicy', 'AmazonEC2ContainerRegistryPullOnly'],
  karpenterNode: ['AmazonEKS_CNI_Policy', 'AmazonEKSWorkerNodePolicy', 'AmazonEC2ContainerRegistryPullOnly', 'AmazonSSMManagedInstanceCore'],
} as const;

/**
 * Put on everything the tool creates. destroy deletes only what carries them, apply adopts
 * an untagged resource of the same name only with `--adopt`: the names are guessable, and
 * a same-named role or cluster someone else made is not ours to change or delete.
 */
export const MANAGED_BY = { key: 'managed-by', value: 'karpenter-gitops' } as const;
export const ownerTags = (d: Pick<DesiredState, 'env' | 'clusterName'>): Record<string, string> => ({
  [MANAGED_BY.key]: MANAGED_BY.value,
  'karpenter-gitops/environment': d.env,
  'karpenter-gitops/cluster': d.clusterName,
});

export interface DesiredOptions {
  /** `--region` on the command line wins over the file. */
  readonly region?: string;
}

export function desiredFrom(loaded: LoadedEnvironment, opts: DesiredOptions = {}): DesiredState {
  const { cluster, karpenter } = loaded.config;
  const name = cluster.name;
  return {
    env: loaded.name,
    clusterName: name,
    region: opts.region ?? cluster.region,
    kubernetesVersion: cluster.kubernetesVersion,
    vpcId: cluster.vpcId,
    privateSubnetIds: cluster.privateSubnetIds,
    publicAccessCidrs: cluster.publicAccessCidrs,
    identity: cluster.identity,
    chartVersion: karpenter.chartVersion,
    namespace: karpenter.namespace,
    serviceAccount: 'karpenter',
    systemNodeGroup: {
      name: 'system',
      instanceTypes: cluster.systemNodeGroup.instanceTypes,
      size: cluster.systemNodeGroup.size,
      labels: cluster.systemNodeGroup.labels,
    },
    names: {
      clusterRole: `EKSClusterRole-${name}`,
      systemNodeRole: `EKSSystemNodeRole-${name}`,
      nodeRole: `KarpenterNodeRole-${name}`,
      controllerRole: `KarpenterController-${name}`,
      queue: name,
      rules: INTERRUPTION_RULES.map((r) => `${name}-${r.suffix}`),
    },
    discoveryTag: { key: 'karpenter.sh/discovery', value: name },
    // Only classes that use the role infra made count: another role needs its own entry (synth warns).
    nodeAccessEntryType: loaded.config.nodeClasses.some((nc) => (nc.role ?? `KarpenterNodeRole-${name}`) === `KarpenterNodeRole-${name}` && nc.instanceProfile === undefined && usesWindows(nc))
      ? 'EC2_WINDOWS'
      : 'EC2_LINUX',
  };
}

export function loadDesired(env: string, opts: DesiredOptions = {}, dir = 'environments'): DesiredState {
  const file = `${dir}/${env}.yaml`;
  return desiredFrom(loadEnvironment(file), opts);
}
