import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileAtomic } from '../config/atomic.js';
import { ConfigError, describeValue } from '../config/errors.js';
import { quantity } from '../config/schema-kit.js';
import { ensureBinary, runSimulation, SimulationError } from './contract.js';
import { prepare, readDist, type PodSource } from './inputs.js';
import { renderReport, renderText } from './render.js';

const USAGE =
  'Usage: npm run simulate -- --env <name> [--workload <name>]... [--replicas N] [--pods N --cpu Q [--memory Q] [--arch amd64|arm64] [--spread zone|hostname]] [--json] [--runs N]\n' +
  '       npm run simulate -- --write    (writes reports/<env>.simulation.md for every environment)';

/** Replicas of inflate in the committed report: enough to need more than one node. */
export const REPORT_INFLATE_REPLICAS = 10;
/** Times Schedule runs per simulation; the output says how many runs agreed. */
export const DEFAULT_RUNS = 5;

class UsageError extends Error {}

function count(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${flag} must be an integer of at least ${min}, got ${describeValue(value)}`);
  return Number(value);
}

function qty(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!quantity.safeParse(value).success) throw new UsageError(`--${flag} must be a Kubernetes quantity such as 1, 500m or 1.5Gi, got ${describeValue(value)}`);
  return value;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, got ${describeValue(value)}`);
  return value as T;
}

/** Pods from the flags: ad hoc when --pods is given, else Deployments of dist/<env>/. */
export function podSourceFrom(v: Record<string, string | string[] | boolean | undefined>): PodSource {
  const adhocFlags = ['cpu', 'memory', 'arch', 'spread'].filter((f) => v[f] !== undefined);
  if (v['pods'] !== undefined) {
    if (v['workload'] !== undefined || v['replicas'] !== undefined) throw new UsageError('--pods makes up pods; it cannot be combined with --workload or --replicas');
    const cpu = qty('cpu', v['cpu'] as string | undefined);
    if (cpu === undefined) throw new UsageError('--pods needs --cpu (the request of each pod)');
    const memory = qty('memory', v['memory'] as string | undefined);
    const arch = oneOf('arch', v['arch'] as string | undefined, ['amd64', 'arm64']);
    const spread = oneOf('spread', v['spread'] as string | undefined, ['zone', 'hostname']);
    return { kind: 'adhoc', pods: count('pods', v['pods'] as string, 1)!, cpu, ...(memory && { memory }), ...(arch && { arch }), ...(spread && { spread }) };
  }
  if (adhocFlags.length > 0) throw new UsageError(`--${adhocFlags[0]} describes made-up pods and needs --pods`);
  const names = v['workload'] as string[] | undefined;
  const replicas = count('replicas', v['replicas'] as string | undefined, 0);
  if (replicas !== undefined && names === undefined) throw new UsageError('--replicas needs --workload (which Deployment to scale)');
  return { kind: 'deployments', ...(names && { names }), ...(replicas !== undefined && { replicas }) };
}

/** Every environment with a dist/ tree: both sections of its report. */
function writeReports(root: string, runs: number, binary: string): string[] {
  const envs = readdirSync(join(root, 'environments'))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => f.replace(/\.ya?ml$/, ''))
    .sort();
  const written: string[] = [];
  const reports = new Map<string, string>();
  for (const env of envs) {
    const workloads = readDist(root, env)
      .deployments.map((d) => d.metadata.name)
      .filter((n) => n !== 'inflate');
    const sections: Parameters<typeof renderReport>[1][number][] = [];
    const simulate = (title: string, pods: PodSource) => {
      const prepared = prepare({ root, env, pods, runs });
      sections.push({ title, prepared, output: runSimulation(binary, prepared.input) });
    };
    simulate(workloads.length > 0 ? 'Every workload at its replicas, together' : 'Every workload at its replicas (this environment has none)', { kind: 'deployments', names: workloads });
    simulate(`inflate at ${REPORT_INFLATE_REPLICAS} replicas`, { kind: 'deployments', names: ['inflate'], replicas: REPORT_INFLATE_REPLICAS });
    reports.set(join('reports', `${env}.simulation.md`), renderReport(env, sections));
  }
  // Only after every environment simulated: nothing is half-written when one fails.
  for (const [file, text] of reports) {
    writeFileAtomic(join(root, file), text);
    written.push(file);
  }
  for (const f of safeList(join(root, 'reports')).filter((f) => f.endsWith('.simulation.md') && !envs.includes(f.replace(/\.simulation\.md$/, '')))) {
    rmSync(join(root, 'reports', f));
  }
  return written;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
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
    },
    strict: true,
  });
  const root = resolve(values.root ?? process.cwd());
  const runs = count('runs', values.runs, 1) ?? DEFAULT_RUNS;
  if (values.write) {
    if (values.env !== undefined || values.workload || values.pods !== undefined) throw new UsageError('--write simulates every environment as the report does; it takes no --env, --workload or --pods');
    const binary = ensureBinary(root);
    const written = writeReports(root, runs, binary);
    process.stdout.write(`wrote ${written.join(', ')}\n`);
    return 0;
  }
  if (values.env === undefined) throw new UsageError('--env is required');
  const pods = podSourceFrom(values);
  const prepared = prepare({ root, env: values.env, pods, runs });
  const output = runSimulation(ensureBinary(root), prepared.input);
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
