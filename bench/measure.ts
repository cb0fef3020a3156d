import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Whole-process measurements for `npm run bench`: wall time, CPU time of the process
 * and everything it started, and (optionally) the peak RSS of the largest Node process
 * in that tree.
 */

export interface Sample {
  readonly wallMs: number;
  /** user + system of the whole process tree; NaN where /proc is missing and no Node process reported. */
  readonly cpuMs: number;
  /** Largest maxRSS of any Node process of the tree, in MiB; NaN unless `rss` was asked for. */
  readonly peakRssMiB: number;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Command {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
}

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux
const PROC_STAT = '/proc/self/stat';

/** CPU time of reaped children (cutime + cstime), which includes their own reaped descendants. */
function childrenCpuMs(): number {
  if (!existsSync(PROC_STAT)) return NaN;
  const fields = readFileSync(PROC_STAT, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * CLOCK_TICK_MS;
}

const REPORTER = pathToFileURL(join(import.meta.dirname, 'rusage.mjs')).href;

/** Runs `c` once. With `rss`, every Node process of the tree appends its resource usage at exit (bench/rusage.mjs). */
export function measure(c: Command, opts: { rss?: boolean } = {}): Sample {
  const scratch = opts.rss ? mkdtempSync(join(tmpdir(), 'bench-rusage-')) : undefined;
  const report = scratch ? join(scratch, 'rusage.jsonl') : undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, ...c.env };
  if (report) {
    env.KARPENTER_GITOPS_BENCH_RUSAGE = report;
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import=${REPORTER}`.trim();
  }
  const cpu0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(c.cmd, [...c.args], { cwd: c.cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  let cpuMs = childrenCpuMs() - cpu0;
  let peakRssMiB = NaN;
  if (report) {
    const usages = existsSync(report)
      ? readFileSync(report, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { maxRSS: number; userCPUTime: number; systemCPUTime: number })
      : [];
    peakRssMiB = Math.max(...usages.map((u) => u.maxRSS / 1024));
    if (Number.isNaN(cpuMs)) cpuMs = usages.reduce((n, u) => n + (u.userCPUTime + u.systemCPUTime) / 1000, 0);
    rmSync(scratch!, { recursive: true, force: true });
  }
  if (r.error) throw r.error;
  return { wallMs, cpuMs, peakRssMiB, code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface Stats {
  readonly runs: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssMiB: number;
  readonly last: Sample;
}

const middle = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Medians of `runs` runs after `warmup` unmeasured ones (which fill caches the way a
 * user's earlier runs would). Fails when a run's exit code is not `expect` (default 0).
 */
export function repeat(c: Command, runs: number, opts: { rss?: boolean; warmup?: number; expect?: number | 'any' } = {}): Stats {
  const check = (s: Sample) => {
    if (opts.expect !== 'any' && s.code !== (opts.expect ?? 0)) {
      throw new Error(`${c.cmd} ${c.args.join(' ')} exited ${s.code}, expected ${opts.expect ?? 0}:\n${s.stderr.slice(0, 2000)}`);
    }
    return s;
  };
  for (let i = 0; i < (opts.warmup ?? 1); i++) check(measure(c, opts));
  const samples = Array.from({ length: runs }, () => check(measure(c, opts)));
  return {
    runs,
    wallMs: middle(samples.map((s) => s.wallMs)),
    cpuMs: middle(samples.map((s) => s.cpuMs)),
    peakRssMiB: middle(samples.map((s) => s.peakRssMiB)),
    last: samples[samples.length - 1]!,
  };
}

export const seconds = (ms: number) => (Number.isNaN(ms) ? 'n/a' : `${(ms / 1000).toFixed(2)} s`);
export const ratio = (x: number, floor: number) => (Number.isNaN(x) || Number.isNaN(floor) ? 'n/a' : `${(x / floor).toFixed(1)}x`);

/** A Markdown table; columns padded so the plain-text print reads too. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** One line of an in-process comparison (bench/validate.ts): ratio = ours / alternative. */
export interface BenchRow {
  readonly what: string;
  readonly ours: string;
  readonly alternative: string;
  readonly ratio: string;
}

/** Median wall time in ms of `fn`, in this process, over `runs` runs after one warm-up run. */
export function median(runs: number, fn: () => void): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return middle(times);
}
