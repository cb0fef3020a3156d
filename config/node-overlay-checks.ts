import type { NodeOverlayConfig, NodePoolConfig } from './karpenter-schema.js';
import { incompatibility, requirementsOf, type Requirements } from './node-requirements.js';
import { poolRequirements, WELL_KNOWN_LABELS } from './workload-pod-checks.js';

/**
 * What a NodeOverlay is matched against, per NodePool, as Karpenter v1.13.0 matches it
 * (pkg/controllers/nodeoverlay/controller.go getOverlaidOfferings): the instance type's own
 * labels, the pool's name and its node-template labels, with no unknown key allowed. A
 * pool's requirements narrow the instance types, so they count for the keys instance
 * types define; a custom key in a requirement (not a label) is unknown to the overlay.
 */
function overlayView(pool: NodePoolConfig): Requirements {
  const all = poolRequirements(pool);
  const labels = { ...pool.labels, 'karpenter.sh/nodepool': pool.name };
  return new Map([...all].filter(([key]) => WELL_KNOWN_LABELS.has(key) || key in labels));
}

/** An overlay that matches nothing any pool launches changes nothing, silently: say so. */
export function nodeOverlayWarnings(file: string, env: { nodePools: readonly NodePoolConfig[]; nodeOverlays: readonly NodeOverlayConfig[] }): string[] {
  return env.nodeOverlays.flatMap((overlay, i) => {
    const wanted = requirementsOf(overlay.requirements);
    const reasons: string[] = [];
    for (const pool of env.nodePools) {
      const why = incompatibility(overlayView(pool), wanted, WELL_KNOWN_LABELS);
      if (why === undefined) return [];
      reasons.push(`NodePool "${pool.name}": ${why}`);
    }
    return [`${file}: nodeOverlays[${i}] "${overlay.name}": matches no instance type any NodePool can launch, so it never applies: ${reasons.join('; ')}`];
  });
}
