/** One line of the `npm run bench` table: ratio = ours / alternative, measured in the same run. */
export interface BenchRow {
  readonly what: string;
  readonly ours: string;
  readonly alternative: string;
  readonly ratio: string;
}

/** Median wall time in ms of `fn` over `runs` runs, after one warm-up run. */
export function median(runs: number, fn: () => void): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
