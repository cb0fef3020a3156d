import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { CommitError, commit, faultHookFromEnv, recoverCommit, type CommitOptions } from '../config/atomic.js';
import { environmentJsonSchema } from './json-schema.js';
import { ConfigError } from '../config/errors.js';
import { synthesize } from './synth.js';
import { summaryLine } from './summary.js';
import { synthesizeArgocd } from './argocd/synth.js';
import { ARGOCD_DIR } from './argocd/names.js';
import { REPORTS_DIR, reportFiles } from '../analyze/reports.js';

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
const DIST_DIR = 'dist';
/** cdk8s.yaml's `output`: cdk8s synth deletes it before running the app, so it holds only a copy. */
const CDK8S_SCRATCH = '.cdk8s.out';
const SCHEMA_FILE = join('environments', 'schema.json');

/** A bad command line or environment variable: one line, exit 1, nothing touched. */
class UsageError extends Error {}

interface Cli {
  readonly root: string;
  readonly only: readonly string[];
  /** Redraw every report chart, even where its data did not change (CI does, to prove them fresh). */
  readonly renderCharts: boolean;
  /** Print the usage and stop, whatever else is given. */
  readonly help: boolean;
}

function parseCli(argv: readonly string[], cwd: string): Cli {
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

/**
 * Where dist/ goes. CDK8S_OUTDIR is honoured only when it names dist/ itself or the scratch
 * directory of cdk8s.yaml: synth replaces its output directory as a whole, so anything else
 * (environments/, the root, a directory outside the repository) is refused before anything
 * is read or written.
 */
function outputDirs(root: string, outdir: string | undefined, cwd: string): { dist: string; scratch?: string } {
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

async function main(argv: readonly string[], io: SynthIo): Promise<void> {
  const started = process.hrtime.bigint();
  const { root, only, renderCharts, help } = parseCli(argv, io.cwd);
  if (help) {
    io.stdout(`${USAGE}\n`);
    return;
  }
  const out = outputDirs(root, io.env.CDK8S_OUTDIR, io.cwd);
  const lock: Omit<CommitOptions, 'root'> = {
    faultHook: faultHookFromEnv(io.env.KARPENTER_GITOPS_FAULT),
    onWait: (pid) => io.stderr(`waiting: another run (pid ${pid}) is writing generated output\n`),
    onRepair: (note) => io.stderr(`note: ${note}\n`),
  };
  // Before reading dist/ (synth compares NodePools with it): finish or undo an interrupted run.
  recoverCommit(root, lock);

  const result = synthesize({ root, only });
  const trees = new Map<string, Map<string, string>>();
  if (only.length > 0) {
    for (const env of result.environments) trees.set(join(out.dist, env.environment.name), new Map(env.files));
  } else {
    const all = new Map<string, string>();
    for (const env of result.environments) for (const [f, text] of env.files) all.set(join(env.environment.name, f), text);
    trees.set(out.dist, all);
  }
  // argocd/ describes every environment (its AppProject lists them all), so only a full
  // synth renders it; it is committed together with dist/, all or nothing.
  const argocd = only.length === 0 ? await synthesizeArgocd({ root, environments: result.environments }) : undefined;
  if (argocd) trees.set(join(root, ARGOCD_DIR), new Map(argocd.files));
  const analyses = result.environments.flatMap((e) => (e.analysis ? [e.analysis] : []));
  trees.set(join(root, REPORTS_DIR), await reportFiles({ root, analyses, keepOthers: only.length > 0, renderCharts }));
  commit({ trees, files: new Map([[join(root, SCHEMA_FILE), environmentJsonSchema()]]) }, { root, ...lock });
  if (out.scratch) copyInto(out.scratch, trees, out.dist);

  for (const w of result.warnings) io.stderr(`warning: ${w}\n`);
  const ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
  const environments = result.environments.map((e) => ({ name: e.environment.name, objects: e.objects.length }));
  const argocdCounts = argocd && { objects: argocd.objects.length, crds: argocd.crds.length };
  io.stdout(`${summaryLine({ environments, distDir: DIST_DIR, argocdDir: ARGOCD_DIR, argocd: argocdCounts, ms })}\n`);
}

/** cdk8s synth lists and validates what is in its output directory: give it a copy of dist/'s new files. */
function copyInto(scratch: string, trees: ReadonlyMap<string, ReadonlyMap<string, string>>, dist: string): void {
  for (const [dir, files] of trees) {
    const rel = relative(dist, dir);
    if (rel.startsWith('..')) continue;
    for (const [f, text] of files) {
      const path = join(scratch, rel, f);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
  }
}

/** One message per failure a user can cause (exit 1); a stack trace only for our own bugs (exit 2). */
function report(err: unknown): { code: 1 | 2; text: string } {
  if (err instanceof ConfigError) return { code: 1, text: `error: invalid input, nothing was written\n${err.message}\n` };
  if (err instanceof UsageError || err instanceof CommitError) return { code: 1, text: `error: ${err.message}\n` };
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { code: 2, text: `error: internal error, please report it with the lines below\n${detail}\n` };
}

/** Runs the command; resolves to its exit code. Never throws: every failure is a message on `io.stderr`. */
export async function runSynth(argv: readonly string[], io: SynthIo): Promise<0 | 1 | 2> {
  try {
    await main(argv, io);
    return 0;
  } catch (err) {
    const { code, text } = report(err);
    io.stderr(text);
    return code;
  }
}
