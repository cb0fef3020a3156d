import type { ApplicationSpec, ApplicationSpecDestination, ApplicationSpecSyncPolicy } from '../../imports/application-argoproj.io.js';
import { APP_WAVE, CRDS_DIR, KARPENTER_CHART_REPO, KARPENTER_RELEASE } from './names.js';
import type { KarpenterChartValues } from './karpenter-values.js';
import { INFLATE } from '../inflate.js';

/**
 * The specs of the three Applications each cluster gets, as pure functions, shared by
 * the one-cluster Applications and the fleet ApplicationSets' templates.
 *
 * None of them ever carries the `resources-finalizer.argocd.argoproj.io` finalizer:
 * without it, deleting or renaming an Application removes only the Application and
 * leaves what it deployed running (the new name adopts it on its first sync).
 */

export interface SpecContext {
  readonly project: string;
  readonly repoUrl: string;
  readonly targetRevision: string;
  /** Cluster only; each spec adds its namespace. */
  readonly cluster: Pick<ApplicationSpecDestination, 'server' | 'name'>;
}

/** Argo CD retries a failed sync, e.g. the dist/ sync that ran before the CRDs existed. */
const RETRY = { limit: 10, backoff: { duration: '15s', factor: 2, maxDuration: '5m' } } as const;

/**
 * Karpenter's CRDs, from the vendored copy (argocd/karpenter-crds/), each annotated
 * Prune=false,Delete=false. Server-side apply because these CRDs are large and Argo CD's
 * client-side apply stores a full copy in an annotation.
 */
export function crdsSpec(ctx: SpecContext, namespace: string): ApplicationSpec {
  return {
    project: ctx.project,
    destination: { ...ctx.cluster, namespace },
    source: { repoUrl: ctx.repoUrl, targetRevision: ctx.targetRevision, path: CRDS_DIR, directory: { recurse: false } },
    syncPolicy: {
      // prune stays off as a second fence behind the per-CRD Prune=false.
      automated: { enabled: true, prune: false, selfHeal: true },
      syncOptions: ['ServerSideApply=true'],
      retry: RETRY,
    },
  };
}

/**
 * The Karpenter chart at the configured version, CRDs skipped (they are the CRD
 * Application's, so no delete of this Application can reach them).
 */
export function chartSpec(ctx: SpecContext, args: { readonly namespace: string; readonly version: string; readonly values: KarpenterChartValues }): ApplicationSpec {
  return {
    project: ctx.project,
    destination: { ...ctx.cluster, namespace: args.namespace },
    source: {
      repoUrl: KARPENTER_CHART_REPO,
      path: '.',
      targetRevision: args.version,
      helm: { releaseName: KARPENTER_RELEASE, skipCrds: true, valuesObject: args.values },
    },
    // kube-system always exists; a namespace of your own (karpenter.namespace) may not yet.
    syncPolicy: { automated: { enabled: true, prune: true, selfHeal: true }, syncOptions: args.namespace === 'kube-system' ? undefined : ['CreateNamespace=true'], retry: RETRY },
  };
}

/**
 * dist/<env>/: EC2NodeClasses, NodePools, workloads (ordered inside by their own sync
 * waves). SkipDryRunOnMissingResource lets the first sync start before the CRD
 * Application has created the kinds; allowEmpty=false refuses an automated sync that
 * would prune everything because the folder came up empty; PruneLast removes an old
 * NodePool only after its replacement is in.
 */
export function distSpec(ctx: SpecContext, env: string): ApplicationSpec {
  const syncPolicy: ApplicationSpecSyncPolicy = {
    automated: { enabled: true, prune: true, selfHeal: true, allowEmpty: false },
    syncOptions: ['SkipDryRunOnMissingResource=true', 'PruneLast=true', 'RespectIgnoreDifferences=true'],
    retry: RETRY,
  };
  return {
    project: ctx.project,
    destination: { ...ctx.cluster, namespace: 'default' },
    source: { repoUrl: ctx.repoUrl, targetRevision: ctx.targetRevision, path: `dist/${env}`, directory: { recurse: false } },
    // `kubectl scale deployment inflate --replicas 5` is how Karpenter is tried out: self-heal
    // must not scale it back to 0 within seconds.
    ignoreDifferences: [{ group: 'apps', kind: 'Deployment', name: INFLATE.name, namespace: INFLATE.namespace, jsonPointers: ['/spec/replicas'] }],
    syncPolicy,
  };
}

export type AppRole = keyof typeof APP_WAVE;

/**
 * Annotations of each Application. ServerSideDiff on dist/: the API server fills in
 * defaults (e.g. a NodePool's disruption budgets) before the diff, so a default the
 * charts did not spell out does not show as OutOfSync forever.
 */
export function appAnnotations(role: AppRole): Record<string, string> {
  return {
    'argocd.argoproj.io/sync-wave': APP_WAVE[role],
    ...(role === 'dist' ? { 'argocd.argoproj.io/compare-options': 'ServerSideDiff=true' } : {}),
  };
}
