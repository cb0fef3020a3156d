/**
 * Cost of `npm run simulate` (Karpenter's own scheduler, offline), for `npm run bench`:
 * wall time of the Go binary for 10, 1,000 and 5,000 pending pods of 1 vCPU / 1 GiB on
 * prod's NodePools (limits removed, so every pod is scheduled), one run of Schedule
 * each, against the same binary with no pods (start-up and building 1,204 instance
 * types per node class). Reported, not asserted. `npx tsx bench/simulate.ts` prints the
 * table alone. Builds the binary first if needed (scripts/ensure-simulate.sh).
 */
import { join } from 'node:path';
import { ensureBinary, runSimulation, type SimulationInput } from '../simulate/contract.js';
import { prepare } from '../simulate/inputs.js';
import { median, type BenchRow } from './measure.js';

const ROOT = join(import.meta.dirname, '..');

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

function inputFor(pods: number): SimulationInput {
  const { input } = prepare({ root: ROOT, env: 'prod', pods: { kind: 'adhoc', pods: Math.max(pods, 1), cpu: '1', memory: '1Gi' }, runs: 1 });
  const nodePools = input.nodePools.map((np) => {
    const { limits: _limits, ...spec } = (np as { spec: Record<string, unknown> }).spec;
    return { ...(np as object), spec };
  });
  return { ...input, nodePools, pods: pods === 0 ? [] : input.pods };
}

export function benchSimulate(): { rows: BenchRow[] } {
  const binary = ensureBinary();
  const empty = inputFor(0);
  const base = median(3, () => runSimulation(binary, empty));
  const rows: BenchRow[] = [];
  for (const pods of [10, 1000, 5000]) {
    const input = inputFor(pods);
    let claims = 0;
    const ms = median(pods >= 5000 ? 1 : 3, () => {
      claims = runSimulation(binary, input).nodeClaims.length;
    });
    rows.push({
      what: `simulate: ${pods.toLocaleString('en-US')} pods of 1 vCPU on prod's pools (${claims} NodeClaims)`,
      ours: fmt(ms),
      alternative: `${fmt(base)} (same binary, no pods: start-up and instance types)`,
      ratio: `${(ms / base).toFixed(2)}x`,
    });
  }
  return { rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of benchSimulate().rows) console.log(`${r.what} | ${r.ours} | ${r.alternative} | ${r.ratio}`);
}
