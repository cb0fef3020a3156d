import { statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `npm run synth [-- --env <name> ...]` (charts/main.ts runs it): validates every input,
 * renders every file in memory, then commits dist/ (or dist/<env>), argocd/ and
 * environments/schema.json in one transaction (config/atomic.ts). Also the app of
 * `cdk8s synth`, which sets CDK8S_OUTDIR.
 *
 * Exit codes: 0 written; 1 bad input, bad command line or output that cannot be written
 * (one message, nothing changed); 2 a bug of this program ("internal error, please report").
 */

/** What the command reads from and writes to its process: the real one in main.ts, a capture in tests. */
export interface SynthIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** CDK8S_OUTDIR and KARPENTER_GITOPS_FAULT are read from here. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The directory --root and the default root are relative to. */
  readonly cwd: string;
}

const USAGE = 'Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]';
export const DIST_DIR = 'dist';
/** cdk8s.yaml's `output`: cdk8s synth deletes it before running the app, so it holds only a copy. */
const CDK8S_SCRATCH = '.cdk8s.out';
export const SCHEMA_FILE = join('environments', 'schema.json');

/** A bad command line or environment variable: one line, exit 1, nothing touched. */
class UsageError extends Error {}

/** What a synth run is asked to do, from its command line. */
export interface SynthPlan {
  readonly root: string;
  readonly only: readonly string[];
  /** Redraw every report chart, even where its data did not change (CI does, to prove them fresh). */
  readonly renderCharts: boolean;
  /** Print the usage and stop, whatever else is given. */
  readonly help: boolean;
}

function parseCli(argv: readonly string[], cwd: string): SynthPlan {
  let values: { env?: string[]; root?: string; 'render-charts'?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ args: [...argv], options: { env: { type: 'string', multiple: true }, root: { type: 'string' }, 'render-charts': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}. ${USAGE}`);
  }
  if (values.help) return { root: cwd, only: [], renderCharts: false, help: true };
  const only = (values.env ?? []).flatMap((raw) => {
    const names = raw.split(',');
    if (names.some((n) => n.trim() === '')) {
      throw new UsageError(`--env must name environments, such as --env dev or --env dev,prod, got ${JSON.stringify(raw)}. ${USAGE}`);
    }
    return names.map((n) => n.trim());
  });
  const root = resolve(cwd, values.root ?? '.');
  if (values.root !== undefined) {
    let isDir: boolean;
    try {
      isDir = statSync(root).isDirectory();
    } catch {
      throw new UsageError(`--root ${values.root}: no such directory`);
    }
    if (!isDir) throw new UsageError(`--root ${values.root}: not a directory`);
  }
  return { root, only, renderCharts: values['render-charts'] ?? false, help: values.help ?? false };
}

export interface OutputDirs {
  readonly dist: string;
  /** cdk8s synth's scratch directory, which gets a copy of what dist/ gets. */
  readonly scratch?: string;
}

/**
 * Where dist/ goes. CDK8S_OUTDIR is honoured only when it names dist/ itself or the scratch
 * directory of cdk8s.yaml: synth replaces its output directory as a whole, so anything else
 * (environments/, the root, a directory outside the repository) is refused before anything
 * is read or written.
 */
function outputDirs(root: string, outdir: string | undefined, cwd: string): OutputDirs {
  const dist = join(root, DIST_DIR);
  if (outdir === undefined || outdir === '') return { dist };
  const wanted = resolve(cwd, outdir);
  if (wanted === dist) return { dist };
  if (wanted === join(root, CDK8S_SCRATCH)) return { dist, scratch: wanted };
  const rel = relative(root, wanted);
  const what =
    rel === '' ? 'the repository root' : rel.startsWith('..') || resolve(root, rel) !== wanted ? 'a directory outside the repository' : `${rel.split(sep)[0]}/, which synth does not generate`;
  throw new UsageError(
    `CDK8S_OUTDIR=${outdir} is ${what}; synth writes only ${DIST_DIR}/ (or ${CDK8S_SCRATCH}/, the scratch directory cdk8s.yaml gives cdk8s synth), so it refuses before touching anything`,
  );
}

/** A bug of this program: exit 2 and the stack, for the report a user files. */
export function internalError(err: unknown, io: SynthIo): 2 {
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  io.stderr(`error: internal error, please report it with the lines below\n${detail}\n`);
  return 2;
}

/**
 * Runs the command; resolves to its exit code. Never throws: every failure is a message
 * on `io.stderr`. The command line is judged before the synth's modules load
 * (charts/synth-command.ts), so --help and a refusal cost only Node's start-up.
 */
export async function runSynth(argv: readonly string[], io: SynthIo): Promise<0 | 1 | 2> {
  const started = process.hrtime.bigint();
  let plan: SynthPlan;
  let out: OutputDirs;
  try {
    plan = parseCli(argv, io.cwd);
    if (plan.help) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    out = outputDirs(plan.root, io.env.CDK8S_OUTDIR, io.cwd);
  } catch (err) {
    if (!(err instanceof UsageError)) return internalError(err, io);
    io.stderr(`error: ${err.message}\n`);
    return 1;
  }
  const { runSynthPlan } = await import('./synth-command.js');
  return runSynthPlan(plan, out, io, started);
}
