import type { Manifest } from '../charts/render.js';

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

export type Analyzer = (environment: string, objects: readonly Manifest[]) => EnvironmentAnalysis;

/** Lines for one pool: the change in admitted types and ceiling. Empty when nothing moved. */
export function poolAnalysisLines(before: PoolAnalysis | undefined, after: PoolAnalysis | undefined): string[] {
  if (!before && !after) return [];
  const lines: string[] = [];
  const b = new Set(before?.admitted ?? []);
  const a = new Set(after?.admitted ?? []);
  const gone = [...b].filter((t) => !a.has(t));
  const added = [...a].filter((t) => !b.has(t));
  if (gone.length > 0 || added.length > 0 || !before || !after) {
    lines.push(`admitted instance types: ${b.size} → ${a.size}${added.length ? `; now admitted: ${list(added)}` : ''}${gone.length ? `; no longer admitted: ${list(gone)}` : ''}`);
  } else {
    lines.push(`admitted instance types: ${a.size}, unchanged`);
  }
  if ((before?.ceiling ?? '') !== (after?.ceiling ?? '')) lines.push(`cost ceiling: ${before?.ceiling ?? '(none)'} → ${after?.ceiling ?? '(none)'}`);
  else if (after) lines.push(`cost ceiling: ${after.ceiling}, unchanged`);
  return lines;
}

/** Workloads that fit nowhere after the change but did before (or are new and fit nowhere). */
export function newlyUnfit(before: EnvironmentAnalysis | undefined, after: EnvironmentAnalysis | undefined): Array<{ workload: string; why: string }> {
  const was = new Set((before?.unfit ?? []).map((u) => u.workload));
  return (after?.unfit ?? []).filter((u) => !was.has(u.workload));
}

function list(names: readonly string[]): string {
  const shown = names.slice(0, 12).map((n) => `\`${n}\``).join(', ');
  return names.length > 12 ? `${shown} and ${names.length - 12} more` : shown;
}
