import { Construct } from 'constructs';
import type { NodePoolConfig } from '../config/karpenter-schema.js';
import {
  NodePool,
  NodePoolSpecLimits,
  type NodePoolSpec,
  type NodePoolSpecDisruptionBudgetsReasons,
  type NodePoolSpecDisruptionConsolidationPolicy,
  type NodePoolSpecTemplateSpecRequirementsOperator,
  type NodePoolSpecTemplateSpecStartupTaintsEffect,
  type NodePoolSpecTemplateSpecTaintsEffect,
} from '../imports/nodepool-karpenter.sh.js';
import { asEnum } from './enum-values.js';
import { SYNC_WAVE, syncWave } from './metadata.js';
import { resolveNodePool } from '../config/presets.js';

export interface KarpenterNodePoolProps {
  /** The pool as written in the environment file; its preset is applied here. */
  readonly config: NodePoolConfig;
}

/**
 * Karpenter's API defaults, emitted explicitly: a field the API server fills in would
 * otherwise show as a permanent difference in Argo CD.
 */
export const NODE_POOL_API_DEFAULTS = {
  expireAfter: '720h',
  consolidationPolicy: 'WhenEmptyOrUnderutilized',
  consolidateAfter: '0s',
  budgets: [{ nodes: '10%' }],
} as const;

/** One `NodePool`: which instances Karpenter may launch for pending pods, how many, and when it may remove them. */
export class KarpenterNodePool extends Construct {
  public readonly apiObject: NodePool;

  constructor(scope: Construct, id: string, props: KarpenterNodePoolProps) {
    super(scope, id);
    const p = resolveNodePool(props.config);
    const d = p.disruption ?? {};
    const spec: NodePoolSpec = {
      template: {
        metadata: p.labels || p.annotations ? { labels: p.labels, annotations: p.annotations } : undefined,
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: p.nodeClass },
          requirements: (p.requirements ?? []).map((r) => ({ ...r, operator: asEnum<NodePoolSpecTemplateSpecRequirementsOperator>(r.operator) })),
          taints: p.taints?.map((t) => ({ ...t, effect: asEnum<NodePoolSpecTemplateSpecTaintsEffect>(t.effect) })),
          startupTaints: p.startupTaints?.map((t) => ({ ...t, effect: asEnum<NodePoolSpecTemplateSpecStartupTaintsEffect>(t.effect) })),
          expireAfter: p.expireAfter ?? NODE_POOL_API_DEFAULTS.expireAfter,
          terminationGracePeriod: p.terminationGracePeriod,
        },
      },
      // Quantities stay strings: Argo CD compares "100" and 100 as different.
      limits: p.limits && Object.fromEntries(Object.entries(p.limits).map(([k, v]) => [k, NodePoolSpecLimits.fromString(v)])),
      weight: p.weight,
      replicas: p.replicas,
      disruption: {
        consolidationPolicy: asEnum<NodePoolSpecDisruptionConsolidationPolicy>(d.consolidationPolicy ?? NODE_POOL_API_DEFAULTS.consolidationPolicy),
        consolidateAfter: d.consolidateAfter ?? NODE_POOL_API_DEFAULTS.consolidateAfter,
        budgets: d.budgets?.map((b) => ({ ...b, reasons: b.reasons?.map((r) => asEnum<NodePoolSpecDisruptionBudgetsReasons>(r)) })) ?? [...NODE_POOL_API_DEFAULTS.budgets],
      },
    };
    this.apiObject = new NodePool(this, 'Resource', {
      metadata: { name: p.name, labels: p.metadata?.labels, annotations: { ...p.metadata?.annotations, ...syncWave(SYNC_WAVE.nodePool) } },
      spec,
    });
  }
}
