/**
 * Names, paths and annotation keys shared by the Argo CD constructs and their tests.
 * Explicit names only: no hash suffixes, nothing that changes from one commit to the next.
 */

/** Where the synth writes the Argo CD tree, relative to the repository root. */
export const ARGOCD_DIR = 'argocd';
/** Karpenter CRDs as the CRD Applications sync them (a sub-folder, so `kubectl apply -f argocd/` skips them). */
export const CRDS_DIR = `${ARGOCD_DIR}/karpenter-crds`;

/**
 * The chart, in Argo CD's native OCI form (v3.1+): the artifact URL plus `path: .`, no
 * `chart` field. Mixing this with `chart:` is a known failure (NOTES.md).
 */
export const KARPENTER_CHART_REPO = 'oci://public.ecr.aws/karpenter/karpenter';

/**
 * Helm release name. Fixed, so the chart's objects are named `karpenter` as in upstream
 * docs and as the Pod Identity association (`kube-system/karpenter`) expects, whatever
 * the Application is called.
 */
export const KARPENTER_RELEASE = 'karpenter';
export const KARPENTER_SERVICE_ACCOUNT = 'karpenter';

/**
 * Namespaced objects the Karpenter chart (v1.13.1 templates) renders with release name
 * `karpenter`; `null` namespace = the release namespace. dist/ must define none of them,
 * or two Applications would fight over one object.
 */
export const CHART_NAMESPACED_OBJECTS = [
  { kind: 'Deployment', name: 'karpenter', namespace: null },
  { kind: 'PodDisruptionBudget', name: 'karpenter', namespace: null },
  { kind: 'Service', name: 'karpenter', namespace: null },
  { kind: 'ServiceAccount', name: KARPENTER_SERVICE_ACCOUNT, namespace: null },
  { kind: 'Role', name: 'karpenter', namespace: null },
  { kind: 'RoleBinding', name: 'karpenter', namespace: null },
  { kind: 'Role', name: 'karpenter-dns', namespace: 'kube-system' },
  { kind: 'RoleBinding', name: 'karpenter-dns', namespace: 'kube-system' },
  { kind: 'Role', name: 'karpenter-lease', namespace: 'kube-node-lease' },
  { kind: 'RoleBinding', name: 'karpenter-lease', namespace: 'kube-node-lease' },
] as const;

/** Namespaces the chart writes to besides its release namespace (the -dns and -lease Roles). */
export const CHART_EXTRA_NAMESPACES = ['kube-system', 'kube-node-lease'] as const;

/**
 * Cluster-scoped kinds the Karpenter chart renders (its RBAC). CRDs come from the CRD
 * Application; the kinds of dist/ are added from what dist/ actually holds.
 */
export const CHART_CLUSTER_KINDS = [
  { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
  { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' },
] as const;
export const CRD_KIND = { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' } as const;

/**
 * Sync waves of the Applications themselves, honoured when the root Application syncs
 * argocd/: CRDs, then the controller, then the NodeClasses/NodePools/workloads of dist/.
 */
export const APP_WAVE = { crds: '-1', chart: '0', dist: '1' } as const;

/**
 * Per-resource sync options on every Karpenter CRD: never pruned, never deleted, even by
 * a cascading delete of its Application. Deleting a CRD deletes every NodePool and
 * NodeClaim, which terminates every Karpenter node.
 */
export const CRD_SYNC_OPTIONS = 'Prune=false,Delete=false';

/**
 * Cluster secret annotations that carry per-cluster values in fleet mode. camelCase on
 * purpose: Go templates can then read them as `.metadata.annotations.<key>`, and with
 * `missingkey=error` a cluster that lacks one fails to generate instead of getting an
 * empty value.
 */
export const FLEET_ANNOTATIONS = {
  clusterName: 'karpenterClusterName',
  interruptionQueue: 'karpenterInterruptionQueue',
  controllerRoleArn: 'karpenterControllerRoleArn',
} as const;

export const applicationNames = (env: string) => ({
  crds: `${env}-karpenter-crds`,
  chart: `${env}-karpenter`,
  dist: `${env}-dist`,
});
export const ROOT_APPLICATION = 'karpenter-gitops-root';
