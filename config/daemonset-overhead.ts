import { z } from 'zod';
import { objectName, quantity, strict } from './schema-kit.js';

/**
 * `daemonSets:` of an environment file: the DaemonSets every Karpenter node runs, whose
 * requests Karpenter adds to each NodeClaim it plans. Read only by `npm run simulate`;
 * when given, it replaces the EKS add-on defaults (simulate/daemonsets.ts) as a whole.
 */
export const daemonSetOverheadSchema = strict({
  name: objectName,
  namespace: objectName.default('kube-system'),
  /** Requests of one pod of the DaemonSet (all containers together). Every pod also takes one pod slot. */
  requests: strict({ cpu: quantity.optional(), memory: quantity.optional() }).default({}),
});

export type DaemonSetOverhead = z.infer<typeof daemonSetOverheadSchema>;
