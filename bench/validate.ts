/**
 * Cost of in-process manifest validation (validate/), for `npm run bench`:
 * per object with the CEL program cache warm vs cleared, and the one-time start-up
 * (CRD parse + schema compile) with the on-disk cache vs without it.
 * `npx tsx bench/validate.ts` prints the table alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesize } from '../charts/synth.js';
import type { Manifest } from '../charts/render.js';
import { clearRuleCache } from '../validate/cel.js';
import { ManifestValidator } from '../validate/validator.js';
import { median, type BenchRow } from './measure.js';

const ROOT = join(import.meta.dirname, '..');

export interface ValidateBenchResult {
  readonly rows: readonly BenchRow[];
  /** Raw numbers, for comparing runs. */
  readonly numbers: {
    readonly objects: number;
    readonly warmMicrosPerObject: number;
    readonly coldCelMicrosPerObject: number;
    readonly startupCachedMs: number;
    readonly startupUncachedMs: number;
  };
}

const us = (n: number) => `${n.toFixed(0)} µs/object`;
const ms = (n: number) => `${n.toFixed(1)} ms`;

export function benchValidate(): ValidateBenchResult {
  // The custom resources of every committed environment, as synth renders them.
  const objects: Manifest[] = synthesize({ root: ROOT }).environments.flatMap((e) => [...e.objects]);
  const validator = new ManifestValidator({ root: ROOT });
  const custom = objects.filter((o) => validator.handles(o));
  const validateAll = () => {
    for (const o of custom) if (validator.validate(o).length > 0) throw new Error(`bench input must be valid: ${o.kind}/${o.metadata.name}`);
  };

  const warm = (median(200, validateAll) * 1000) / custom.length;
  const cold = (median(50, () => { clearRuleCache(); validateAll(); }) * 1000) / custom.length;

  // Start-up: a fresh validator's first pass. The disk cache is warmed by the first call.
  const startup = (cacheDir: string | null) => median(5, () => {
    const fresh = new ManifestValidator({ root: ROOT, cacheDir });
    for (const o of custom) fresh.validate(o);
  });
  const scratch = mkdtempSync(join(tmpdir(), 'bench-validate-cache-'));
  let cached: number;
  let uncached: number;
  try {
    cached = startup(scratch);
    uncached = startup(null);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }

  return {
    rows: [
      { what: `validate one object (${custom.length} NodePools/EC2NodeClasses), CEL programs cached vs re-parsed`, ours: us(warm), alternative: us(cold), ratio: `${(warm / cold).toFixed(2)}x` },
      { what: 'validator start-up (CRD parse + schema compile), disk cache vs none', ours: ms(cached), alternative: ms(uncached), ratio: `${(cached / uncached).toFixed(2)}x` },
    ],
    numbers: { objects: custom.length, warmMicrosPerObject: warm, coldCelMicrosPerObject: cold, startupCachedMs: cached, startupUncachedMs: uncached },
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const { rows } = benchValidate();
  for (const r of rows) process.stdout.write(`${r.what}\n  ours ${r.ours} | alternative ${r.alternative} | ${r.ratio}\n`);
}
