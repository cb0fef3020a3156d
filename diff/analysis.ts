import type { EnvironmentAnalysis as Analysis, CostCeiling } from '../analyze/analyze.js';

/**
 * The seam to the analyzer (`npm run analyze`): what diff needs to say how a change moves
 * each pool's admitted instance types and cost ceiling, and which workloads fit nowhere.
 * Computed from the objects of one environment, so the base (which exists only as
 * committed manifests) and the change are analysed alike.
 */
export interface PoolAnalysis {
  readonly name: string;
  /** Instance type names the pool admits, sorted. */
  readonly admitted: readonly string[];
  /** One line on the cost ceiling its limits imply ("no limits, no ceiling" included). */
  readonly ceiling: string;
}

export interface EnvironmentAnalysis {
  readonly pools: readonly PoolAnalysis[];
  /** Workloads (by name) that fit no type any pool admits, with why. */
  readonly unfit: ReadonlyArray<{ readonly workload: string; readonly why: string }>;
}

/** The analyzer's result (analyze/analyze.ts), cut down to what a review compares. */
export function fromAnalyzer(a: Analysis): EnvironmentAnalysis {
  return {
    pools: a.pools.map((p) => ({ name: p.name, admitted: p.admitted.map((t) => t.name).sort(), ceiling: ceilingText(p.ceiling) })),
    unfit: a.workloads
      .filter((w) => w.fit === null)
      .map((w) => ({ workload: w.workload, why: a.findings.find((f) => f.code === 'workload-fits-nowhere' && f.message.includes(`"${w.workload}"`))?.message ?? 'fits no type its pools admit' })),
  };
}

function ceilingText(c: CostCeiling): string {
  if (c.limits === null) return 'no limits, no ceiling';
  const limits = Object.entries(c.limits).map(([k, v]) => `${k} ${v}`).join(', ');
  const range = (name: string, r: CostCeiling['onDemand']) => (r ? `${name} $${r.low.perHour.toFixed(2)}-$${r.high.perHour.toFixed(2)}/h (${r.low.type} to ${r.high.type})` : undefined);
  const parts = [range('On-Demand', c.onDemand), range('Spot', c.spot)].filter((x) => x !== undefined);
  return `${limits}: ${parts.length > 0 ? parts.join(', ') : 'no prices'}`;
}

/** Lines for one pool: the change in admitted types and ceiling. */
export function poolAnalysisLines(before: PoolAnalysis | undefined, after: PoolAnalysis | undefined): string[] {
  if (!after) return before ? [`admitted ${before.admitted.length} instance types; cost ceiling was ${before.ceiling}`] : [];
  if (!before) return [`admits ${after.admitted.length} instance types; cost ceiling ${after.ceiling}`];
  const b = new Set(before.admitted);
  const a = new Set(after.admitted);
  const gone = before.admitted.filter((t) => !a.has(t));
  const added = after.admitted.filter((t) => !b.has(t));
  const lines = [
    gone.length === 0 && added.length === 0
      ? `admitted instance types: ${a.size}, unchanged`
      : `admitted instance types: ${b.size} → ${a.size}${added.length ? `; now admitted: ${list(added)}` : ''}${gone.length ? `; no longer admitted: ${list(gone)}` : ''}`,
  ];
  lines.push(before.ceiling === after.ceiling ? `cost ceiling: ${after.ceiling}, unchanged` : `cost ceiling: ${before.ceiling} → ${after.ceiling}`);
  return lines;
}

/** Workloads that fit nowhere after the change but did before (or are new and fit nowhere). */
export function newlyUnfit(before: EnvironmentAnalysis | undefined, after: EnvironmentAnalysis | undefined): Array<{ workload: string; why: string }> {
  const was = new Set((before?.unfit ?? []).map((u) => u.workload));
  return (after?.unfit ?? []).filter((u) => !was.has(u.workload));
}

/** Up to 12 names; more are summed up by family (`c6a` x11), which is how a reviewer reads them. */
function list(names: readonly string[]): string {
  if (names.length <= 12) return names.map((n) => `\`${n}\``).join(', ');
  const families = new Map<string, number>();
  for (const n of names) families.set(n.split('.')[0]!, (families.get(n.split('.')[0]!) ?? 0) + 1);
  return `${names.length} types of ${[...families].map(([f, c]) => `\`${f}\` (${c})`).join(', ')}`;
}
