import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { USAGE, UsageError, parseDiffArgs, refusal } from './args.js';
import { ConfigError } from '../config/errors.js';
import { synthesize } from '../charts/synth.js';
import { readCatalogue, type Catalogue } from '../catalogue/catalogue.js';
import { analyzeEnvironment } from '../analyze/analyze.js';
import { fromAnalyzer } from './analysis.js';
import { catalogueUniverse } from './universe.js';
import { GitError, readDistAt, readFilesAt, resolveBase } from './git.js';
import { reviewEnvironment, type EnvironmentReview } from './compare.js';
import { renderMarkdown } from './markdown.js';
import { recoverCommit } from '../config/atomic.js';
import { ensureBinary } from '../simulate/contract.js';
import { zonesFor } from '../simulate/inputs.js';
import { daemonSetsFor } from '../config/daemonset-overhead.js';
import { parseEnvironment, type LoadedEnvironment } from '../config/environment.js';
import { morePending, simulateChange, simulationWarnings, type SimulationChoice, type SimulationReview } from './simulation.js';


export interface DiffOptions {
  readonly root: string;
  readonly base?: string;
  readonly env?: string;
  /** What Karpenter would launch before and after; default: simulate, building the binary on first need. */
  readonly simulate?: SimulationChoice;
  /** Where notes go (an interrupted synth repaired, a base file today's schema cannot read); default: stderr. */
  readonly note?: (line: string) => void;
}

export interface DiffResult {
  readonly markdown: string;
  readonly reviews: readonly EnvironmentReview[];
  /** Whether any change replaces nodes (all or some). */
  readonly drift: boolean;
  readonly simulation: SimulationReview;
}

/**
 * Synthesizes the working tree in memory (nothing is written), reads dist/ at the base
 * revision with git, and reviews every environment present on either side.
 */
export function runDiff(opts: DiffOptions): DiffResult {
  // The review compares with dist/: finish or undo an interrupted synth first (config/atomic.ts).
  const note = opts.note ?? ((line: string) => void process.stderr.write(line));
  recoverCommit(opts.root, { onRepair: (text) => note(`note: ${text}\n`) });
  const base = resolveBase(opts.root, opts.base);
  const baseDist = readDistAt(opts.root, base.commit);
  // An environment the change deletes exists only at the base: review it as deleted, synthesize nothing.
  const deletedHere = opts.env !== undefined && baseDist.has(opts.env) && !existsSync(join(opts.root, 'environments', `${opts.env}.yaml`));
  const synth = deletedHere ? { environments: [] } : synthesize({ root: opts.root, ...(opts.env ? { only: [opts.env] } : {}) });
  const now = new Map(synth.environments.map((e) => [e.environment.name, e]));
  const names = opts.env ? [opts.env] : [...new Set([...now.keys(), ...baseDist.keys()])].sort();
  const catalogues = new Map<string, Catalogue | Error>();
  const catalogueOf = (name: string) => {
    const region = now.get(name)?.environment.config.cluster.region;
    return region === undefined ? undefined : catalogueFor(opts.root, region, catalogues);
  };
  // Each side is judged with its own environment file (zones, DaemonSets, review
  // settings): the base's is read with git, and today's stands in when it cannot be.
  const onBothSides = names.filter((n) => baseDist.has(n) && now.has(n));
  const baseTexts = readFilesAt(opts.root, base.commit, onBothSides.flatMap(environmentFiles));
  const baseEnvironments = new Map(onBothSides.map((n) => [n, environmentAt(n, base.commit, baseTexts, note)]));
  const reviews = names.map((name) => {
    const after = now.get(name);
    const before = baseDist.get(name);
    const found = catalogueOf(name);
    // No catalogue for the region: requirement changes are judged on the values they name.
    const catalogue = found instanceof Error ? undefined : found;
    const baseEnvironment = baseEnvironments.get(name) ?? after?.environment;
    return reviewEnvironment({
      environment: name,
      before,
      after: after?.objects,
      ...(after?.analysis ? { analysisAfter: fromAnalyzer(after.analysis) } : {}),
      ...(baseEnvironment && before && catalogue ? { analysisBefore: fromAnalyzer(analyzeEnvironment(baseEnvironment, before, catalogue)) } : {}),
      ...(catalogue ? { universe: catalogueUniverse(catalogue) } : {}),
    });
  });
  const simulation = simulateChange(
    opts.root,
    // An environment whose manifests, zones and DaemonSets are all unchanged launches the
    // same: simulating it would cost time and show nothing.
    reviews
      .filter((r) => r.status !== 'unchanged' || launchInputsChanged(baseEnvironments.get(r.environment), now.get(r.environment)?.environment))
      .map(({ environment: name }) => {
        const after = now.get(name);
        const beforeEnvironment = baseEnvironments.get(name);
        return {
          name,
          before: baseDist.get(name),
          beforeWhere: `${base.commit.slice(0, 12)}:dist/${name}`,
          after: after && { environment: after.environment, objects: after.objects },
          ...(beforeEnvironment ? { beforeEnvironment } : {}),
          catalogue: catalogueOf(name),
        };
      }),
    opts.simulate ?? { run: true, binary: () => ensureBinary() },
  );
  const markdown = renderMarkdown(reviews, `\`${base.label}\` (${base.commit.slice(0, 12)})`, simulation);
  const drift = reviews.some((r) => r.objects.some((o) => o.effect === 'replaces' || o.effect === 'replaces-some'));
  return { markdown, reviews, drift, simulation };
}

/** The files an environment may be defined by. */
const environmentFiles = (name: string) => [`environments/${name}.yaml`, `environments/${name}.yml`];

/**
 * The environment file at the base commit (`texts`: those files as read there), or
 * undefined when it is absent or does not parse there (today's schema may be newer): the
 * caller then uses today's, and `note` says so.
 */
function environmentAt(name: string, commit: string, texts: ReadonlyMap<string, string | undefined>, note: (line: string) => void): LoadedEnvironment | undefined {
  for (const path of environmentFiles(name)) {
    const text = texts.get(path);
    if (text === undefined) continue;
    try {
      return parseEnvironment(path, text);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      note(`note: ${path} at ${commit.slice(0, 12)} does not parse with today's schema, so the base is judged with today's file: ${err.message.split('\n')[0]}\n`);
      return undefined;
    }
  }
  return undefined;
}

/** Whether what the simulation reads from the environment file besides the manifests (zones, DaemonSets) differs between the sides. */
function launchInputsChanged(before: LoadedEnvironment | undefined, after: LoadedEnvironment | undefined): boolean {
  if (before === undefined || after === undefined) return false;
  const inputs = (env: LoadedEnvironment) => JSON.stringify([zonesFor(env).zones, daemonSetsFor(env.config).daemonSets]);
  return inputs(before) !== inputs(after);
}

function catalogueFor(root: string, region: string, cache: Map<string, Catalogue | Error>): Catalogue | Error {
  if (!cache.has(region)) {
    try {
      cache.set(region, readCatalogue(root, region));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      cache.set(region, err);
    }
  }
  return cache.get(region)!;
}

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Finds or builds the simulation binary; a test seam for a machine without Go. */
  readonly ensureBinary: () => string;
}

const PROCESS_IO: Io = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), ensureBinary: () => ensureBinary() };

/**
 * Exit status: 0 whatever the review says, 1 when a `--fail-on` condition holds. A
 * simulation that cannot run does not change it (the drift review still posts, saying why
 * there is no simulation), except under `--fail-on pending`, which cannot then be
 * answered: 2, as for any simulation that did not run.
 */
export async function main(argv: readonly string[], io: Io = PROCESS_IO): Promise<number> {
  const args = parseDiffArgs(argv);
  if (args.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const { failOn } = args;
  const result = runDiff({
    root: resolve(args.root ?? process.cwd()),
    ...(args.base ? { base: args.base } : {}),
    ...(args.env ? { env: args.env } : {}),
    simulate: args.noSimulate ? { run: false, why: '`--no-simulate`' } : { run: true, binary: io.ensureBinary },
    note: io.stderr,
  });
  io.stdout(result.markdown);
  const warnings = simulationWarnings(result.simulation);
  for (const w of warnings) io.stderr(`warning: ${w}\n`);
  if (failOn.includes('pending') && warnings.length > 0) {
    io.stderr(`error: --fail-on pending: cannot tell whether more pods stay pending, ${result.simulation.status === 'ran' ? 'some simulations did not run' : 'the simulation did not run'}\n`);
    return 2;
  }
  const pending = failOn.includes('pending') ? morePending(result.simulation) : [];
  for (const p of pending) io.stderr(`more pods pending after the change: ${p}\n`);
  return (failOn.includes('drift') && result.drift) || pending.length > 0 ? 1 : 0;
}

/**
 * `npm run diff` once diff/main.ts has judged the command line: `main`, with every failure
 * a message and exit 2.
 */
export async function command(argv: readonly string[], io: Io = PROCESS_IO): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    if (err instanceof ConfigError) {
      // Still Markdown on stdout, so a pull-request bot posts why there is no review:
      // a workload that no longer fits anywhere, say, fails synth and lands here.
      io.stdout(`## Karpenter review\n\n**The change does not synthesize**, so Argo CD could not sync it either:\n\n${err.message.split('\n').map((l) => `- ${l}`).join('\n')}\n`);
      io.stderr(`error: invalid input\n${err.message}\n`);
    } else if (err instanceof GitError || err instanceof UsageError) {
      io.stderr(refusal(err.message));
    } else {
      io.stderr(`error: ${(err as Error).stack ?? String(err)}\n`);
    }
    return 2;
  }
}
