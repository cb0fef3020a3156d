import type { DaemonSetOverhead } from '../config/daemonset-overhead.js';
import type { EnvironmentConfig } from '../config/environment.js';

/**
 * The DaemonSets an EKS node runs when the environment file names none (`daemonSets:`).
 * Karpenter adds their requests to every NodeClaim it plans, and each takes a pod slot.
 * Sources of the requests:
 * - aws-node (Amazon VPC CNI add-on): cpu 25m, the aws-vpc-cni chart's `resources.requests`.
 * - kube-proxy (EKS add-on): cpu 100m, the request of the DaemonSet EKS installs.
 * - eks-pod-identity-agent (EKS add-on, only with `cluster.identity: podIdentity`): no
 *   requests in its chart; it still takes a pod slot.
 */
export function defaultDaemonSets(env: EnvironmentConfig): DaemonSetOverhead[] {
  const out: DaemonSetOverhead[] = [
    { name: 'aws-node', namespace: 'kube-system', requests: { cpu: '25m' } },
    { name: 'kube-proxy', namespace: 'kube-system', requests: { cpu: '100m' } },
  ];
  if (env.cluster.identity === 'podIdentity') out.push({ name: 'eks-pod-identity-agent', namespace: 'kube-system', requests: {} });
  return out;
}

/** The DaemonSets Karpenter will see: the environment's own list, else the EKS defaults. */
export function daemonSetsFor(env: EnvironmentConfig): { readonly daemonSets: readonly DaemonSetOverhead[]; readonly source: 'environment' | 'EKS add-on defaults' } {
  return env.daemonSets ? { daemonSets: env.daemonSets, source: 'environment' } : { daemonSets: defaultDaemonSets(env), source: 'EKS add-on defaults' };
}

/** A DaemonSet object for the in-memory API server; it tolerates every taint, as the EKS add-ons do. */
export function daemonSetObject(ds: DaemonSetOverhead): Record<string, unknown> {
  const requests = Object.fromEntries(Object.entries(ds.requests).filter(([, v]) => v !== undefined));
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: ds.name, namespace: ds.namespace },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': ds.name } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': ds.name } },
        spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: ds.name, image: ds.name, resources: { requests } }] },
      },
    },
  };
}

/** "aws-node (cpu 25m), eks-pod-identity-agent (no requests)" */
export function describeDaemonSets(list: readonly DaemonSetOverhead[]): string {
  if (list.length === 0) return 'none';
  return list
    .map((ds) => {
      const r = Object.entries(ds.requests).filter(([, v]) => v !== undefined);
      return `${ds.name} (${r.length === 0 ? 'no requests' : r.map(([k, v]) => `${k} ${v}`).join(', ')})`;
    })
    .join(', ');
}
