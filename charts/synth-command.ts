import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { CommitError, commit, faultHookFromEnv, recoverCommit, type CommitOptions } from '../config/atomic.js';
import { environmentJsonSchema } from './json-schema.js';
import { ConfigError } from '../config/errors.js';
import { synthesize } from './synth.js';
import { summaryLine } from './summary.js';
import { synthesizeArgocd } from './argocd/synth.js';
import { ARGOCD_DIR } from './argocd/names.js';
import { REPORTS_DIR, reportFiles } from '../analyze/reports.js';
import { DIST_DIR, SCHEMA_FILE, internalError, type OutputDirs, type SynthIo, type SynthPlan } from './cli.js';

/**
 * The work of `npm run synth` once its command line is understood (charts/cli.ts): loaded
 * only then, so that --help and a bad argument answer without loading cdk8s, the
 * validator and the analyzer.
 */

/** Synthesizes and commits; resolves to the exit code, with every failure a message on `io.stderr`. */
export async function runSynthPlan(plan: SynthPlan, out: OutputDirs, io: SynthIo, started: bigint): Promise<0 | 1 | 2> {
  try {
    await synthAndCommit(plan, out, io, started);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) io.stderr(`error: invalid input, nothing was written\n${err.message}\n`);
    else if (err instanceof CommitError) io.stderr(`error: ${err.message}\n`);
    else return internalError(err, io);
    return 1;
  }
}

async function synthAndCommit({ root, only, renderCharts }: SynthPlan, out: OutputDirs, io: SynthIo, started: bigint): Promise<void> {
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
