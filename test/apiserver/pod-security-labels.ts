import type { ApiServerClient } from '../support/apiserver.js';

/** The labels an emitted Namespace carries by default (config/pod-security.ts), at the newest policy. */
export const RESTRICTED_LABELS = ['pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted', 'pod-security.kubernetes.io/audit=restricted'];

/**
 * Labels namespaces (and `default`, which dist/ never emits but inflate runs in) so the
 * server enforces and warns at Pod Security "restricted". PodSecurity admission judges
 * Pods by `enforce` and Deployments' pod templates by `warn`: both are needed for a check
 * of Deployments to bite.
 */
export async function enforceRestricted(server: ApiServerClient, namespaces: readonly string[]): Promise<void> {
  for (const ns of [...new Set(['default', ...namespaces])].sort()) {
    const r = await server.kubectl(['label', 'namespace', ns, '--overwrite', ...RESTRICTED_LABELS]);
    if (r.code !== 0) throw new Error(`cannot label namespace ${ns}: ${r.stderr}`);
  }
}
