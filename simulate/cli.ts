import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { commit, recoverCommit } from '../config/atomic.js';
import { ConfigError } from '../config/errors.js';
import { count, podSourceFrom, UsageError } from './args.js';
import { ensureBinary, runSimulation, SimulationError } from './contract.js';
import { prepare, readDist, type PrepareOptions } from './inputs.js';
import { DEFAULT_RUNS, reportScenarios } from './scenarios.js';
import { renderReport, renderText } from './render.js';

const USAGE =
  'Usage: npm run simulate -- --env <name> [--workload <name>]... [--replicas N] [--pods N --cpu Q [--memory Q] [--arch amd64|arm64] [--spread zone|hostname]] [--json] [--runs N]\n' +
  '       npm run simulate -- --write    (writes reports/<env>.simulation.md for every environment)';

/** Every environment with a dist/ tree: both sections of its report. */
function writeReports(root: string, runs: number, binary: string): string[] {
  const envs = readdirSync(join(root, 'environments'))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => f.replace(/\.ya?ml$/, ''))
    .sort();
  const written: string[] = [];
  const reports = new Map<string, string>();
  for (const env of envs) {
    const dist = readDist(root, env);
    // The environment file and its region's catalogue are read by the first scenario and reused by the next.
    let loaded: Pick<PrepareOptions, 'environment' | 'catalogue'> = {};
    const sections = reportScenarios(dist).map(({ title, pods }) => {
      const prepared = prepare({ root, env, pods, runs, dist, ...loaded });
      loaded = { environment: prepared.env, catalogue: prepared.catalogue };
      return { title, prepared, output: runSimulation(binary, prepared.input) };
    });
    reports.set(join('reports', `${env}.simulation.md`), renderReport(env, sections));
  }
  // Only after every environment simulated, and in one transaction under synth's lock
  // (config/atomic.ts): nothing is half-written when one fails or a synth runs meanwhile.
  // Reports of environments that no longer exist are dropped by synth, which rewrites reports/.
  commit({ files: new Map([...reports].map(([file, text]) => [join(root, file), text])) }, { root });
  written.push(...reports.keys());
  return written;
}


async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      env: { type: 'string' },
      workload: { type: 'string', multiple: true },
      replicas: { type: 'string' },
      pods: { type: 'string' },
      cpu: { type: 'string' },
      memory: { type: 'string' },
      arch: { type: 'string' },
      spread: { type: 'string' },
      json: { type: 'boolean' },
      write: { type: 'boolean' },
      runs: { type: 'string' },
      root: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const root = resolve(values.root ?? process.cwd());
  // The simulation reads dist/: finish or undo an interrupted synth first (config/atomic.ts).
  recoverCommit(root, { onRepair: (note) => process.stderr.write(`note: ${note}\n`) });
  const runs = count('runs', values.runs, 1) ?? DEFAULT_RUNS;
  if (values.write) {
    if (values.env !== undefined || values.workload || values.pods !== undefined) throw new UsageError('--write simulates every environment as the report does; it takes no --env, --workload or --pods');
    const binary = ensureBinary();
    const written = writeReports(root, runs, binary);
    process.stdout.write(`wrote ${written.join(', ')}\n`);
    return 0;
  }
  if (values.env === undefined) throw new UsageError('--env is required');
  const pods = podSourceFrom(values);
  const prepared = prepare({ root, env: values.env, pods, runs });
  const output = runSimulation(ensureBinary(), prepared.input);
  process.stdout.write(values.json ? `${JSON.stringify(output, null, 2)}\n` : renderText(prepared, output));
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`error: invalid input, nothing was written\n${err.message}\n`);
    process.exitCode = 1;
  } else if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`error: ${(err as Error).message}\n${USAGE}\n`);
    process.exitCode = 1;
  } else if (err instanceof SimulationError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  }
}
