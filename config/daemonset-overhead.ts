import { z } from 'zod';
import { objectName, quantity, strict } from './schema-kit.js';

/**
 * `daemonSets:` of an environment file: the DaemonSets every Karpenter node runs, whose
 * requests Karpenter adds to each NodeClaim it plans. Read by `npm run analyze` (and the
 * reports) and `npm run simulate`; when given, it replaces the EKS add-on defaults below
 * as a whole.
 */
export const daemonSetOverheadSchema = strict({
  name: objectName,
  namespace: objectName.default('kube-system'),
  /** Requests of one pod of the DaemonSet (all containers together). Every pod also takes one pod slot. */
  requests: strict({ cpu: quantity.optional(), memory: quantity.optional() }).default({}),
});

export type DaemonSetOverhead = z.infer<typeof daemonSetOverheadSchema>;

/**
 * The DaemonSets an EKS node runs when the environment file names none (`daemonSets:`).
 * Karpenter adds their requests to every NodeClaim it plans, and each takes a pod slot.
 * Sources of the requests:
 * - aws-node (Amazon VPC CNI add-on): cpu 25m, the aws-vpc-cni chart's values.yaml
 *   (`resources.requests.cpu: 25m`).
 * - kube-proxy (EKS add-on): cpu 100m, the request of the DaemonSet EKS installs.
 * - eks-pod-identity-agent (EKS add-on, only with `cluster.identity: podIdentity`): no
 *   requests in its chart (`resources: {}`); it still takes a pod slot.
 */
export function defaultDaemonSets(env: { readonly cluster: { readonly identity: string } }): DaemonSetOverhead[] {
  const out: DaemonSetOverhead[] = [
    { name: 'aws-node', namespace: 'kube-system', requests: { cpu: '25m' } },
    { name: 'kube-proxy', namespace: 'kube-system', requests: { cpu: '100m' } },
  ];
  if (env.cluster.identity === 'podIdentity') out.push({ name: 'eks-pod-identity-agent', namespace: 'kube-system', requests: {} });
  return out;
}

/** The DaemonSets Karpenter will see: the environment's own list, else the EKS defaults. */
export function daemonSetsFor(env: { readonly cluster: { readonly identity: string }; readonly daemonSets?: readonly DaemonSetOverhead[] }): {
  readonly daemonSets: readonly DaemonSetOverhead[];
  readonly source: 'environment' | 'EKS add-on defaults';
} {
  return env.daemonSets ? { daemonSets: env.daemonSets, source: 'environment' } : { daemonSets: defaultDaemonSets(env), source: 'EKS add-on defaults' };
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
