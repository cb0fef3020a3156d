import { Construct } from 'constructs';
import type { NodeOverlayConfig } from '../config/karpenter-schema.js';
import { NodeOverlay, NodeOverlaySpecCapacity, type NodeOverlaySpecRequirementsOperator } from '../imports/nodeoverlay-karpenter.sh.js';
import { asEnum } from './enum-values.js';
import { SYNC_WAVE, syncWave } from './metadata.js';

export interface KarpenterNodeOverlayProps {
  /** The overlay as written in the environment file (`nodeOverlays:`). */
  readonly config: NodeOverlayConfig;
}

/**
 * One `NodeOverlay` (Karpenter v1.13, alpha): the price Karpenter assumes for matching
 * instance types, or extended resources they offer. Only read when the controller runs
 * with the nodeOverlay feature gate, which charts/argocd/karpenter-values.ts turns on
 * for an environment that has overlays.
 */
export class KarpenterNodeOverlay extends Construct {
  public readonly apiObject: NodeOverlay;

  constructor(scope: Construct, id: string, props: KarpenterNodeOverlayProps) {
    super(scope, id);
    const o = props.config;
    this.apiObject = new NodeOverlay(this, 'Resource', {
      // The pools' wave: an overlay changes how Karpenter prices and sizes what those pools launch.
      metadata: { name: o.name, labels: o.metadata?.labels, annotations: { ...o.metadata?.annotations, ...syncWave(SYNC_WAVE.nodePool) } },
      spec: {
        requirements: o.requirements.map((r) => ({ ...r, operator: asEnum<NodeOverlaySpecRequirementsOperator>(r.operator) })),
        price: o.price,
        priceAdjustment: o.priceAdjustment,
        // Quantities stay strings, as the pools' limits do.
        capacity: o.capacity && Object.fromEntries(Object.entries(o.capacity).map(([k, v]) => [k, NodeOverlaySpecCapacity.fromString(v)])),
        weight: o.weight,
      },
    });
  }
}
