/** Labels and annotations every generated object carries. No timestamps, hashes or commit ids. */
export const MANAGED_BY = 'karpenter-gitops';

export function commonLabels(environment: string): Record<string, string> {
  return {
    'app.kubernetes.io/managed-by': MANAGED_BY,
    'karpenter-gitops/environment': environment,
  };
}

/**
 * Argo CD applies lower waves first: node classes, then the pools that reference
 * them, then workloads that Karpenter will schedule onto those pools.
 */
export const SYNC_WAVE = { nodeClass: '0', nodePool: '1', workload: '2' } as const;
export const syncWave = (wave: string) => ({ 'argocd.argoproj.io/sync-wave': wave });
