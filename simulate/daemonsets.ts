import type { DaemonSetOverhead } from '../config/daemonset-overhead.js';

export { daemonSetsFor, defaultDaemonSets, describeDaemonSets } from '../config/daemonset-overhead.js';

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
