import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/errors.js';
import { synthesize } from '../charts/synth.js';
import { readCatalogue, type Catalogue } from '../catalogue/catalogue.js';
import { analyzeEnvironment } from '../analyze/analyze.js';
import { fromAnalyzer } from './analysis.js';
import { catalogueUniverse } from './universe.js';
import { GitError, readDistAt, resolveBase } from './git.js';
import { reviewEnvironment, type EnvironmentReview } from './compare.js';
import { renderMarkdown } from './markdown.js';
import { recoverCommit } from '../config/atomic.js';

const USAGE = 'Usage: npm run diff [-- --base <git ref>] [--env <name>] [--fail-on drift]';

export interface DiffOptions {
  readonly root: string;
  readonly base?: string;
  readonly env?: string;
}

export interface DiffResult {
  readonly markdown: string;
  readonly reviews: readonly EnvironmentReview[];
  /** Whether any change replaces nodes (all or some). */
  readonly drift: boolean;
}

/**
 * Synthesizes the working tree in memory (nothing is written), reads dist/ at the base
 * revision with git, and reviews every environment present on either side.
 */
export function runDiff(opts: DiffOptions): DiffResult {
  // The review compares with dist/: finish or undo an interrupted synth first (config/atomic.ts).
  recoverCommit(opts.root, { onRepair: (note) => process.stderr.write(`note: ${note}\n`) });
  const base = resolveBase(opts.root, opts.base);
  const baseDist = readDistAt(opts.root, base.commit);
  // An environment the change deletes exists only at the base: review it as deleted, synthesize nothing.
  const deletedHere = opts.env !== undefined && baseDist.has(opts.env) && !existsSync(join(opts.root, 'environments', `${opts.env}.yaml`));
  const synth = deletedHere ? { environments: [] } : synthesize({ root: opts.root, ...(opts.env ? { only: [opts.env] } : {}) });
  const now = new Map(synth.environments.map((e) => [e.environment.name, e]));
  const names = opts.env ? [opts.env] : [...new Set([...now.keys(), ...baseDist.keys()])].sort();
  const catalogues = new Map<string, Catalogue | undefined>();
  const reviews = names.map((name) => {
    const after = now.get(name);
    const before = baseDist.get(name);
    const region = after?.environment.config.cluster.region;
    const catalogue = region === undefined ? undefined : catalogueFor(opts.root, region, catalogues);
    // The base exists only as manifests: it is analysed with today's environment file
    // (zones, review settings), which is what the pools will meet once merged.
    return reviewEnvironment({
      environment: name,
      before,
      after: after?.objects,
      ...(after?.analysis ? { analysisAfter: fromAnalyzer(after.analysis) } : {}),
      ...(after && before && catalogue ? { analysisBefore: fromAnalyzer(analyzeEnvironment(after.environment, before, catalogue)) } : {}),
      ...(catalogue ? { universe: catalogueUniverse(catalogue) } : {}),
    });
  });
  const markdown = renderMarkdown(reviews, `\`${base.label}\` (${base.commit.slice(0, 12)})`);
  const drift = reviews.some((r) => r.objects.some((o) => o.effect === 'replaces' || o.effect === 'replaces-some'));
  return { markdown, reviews, drift };
}

function catalogueFor(root: string, region: string, cache: Map<string, Catalogue | undefined>): Catalogue | undefined {
  if (!cache.has(region)) {
    try {
      cache.set(region, readCatalogue(root, region));
    } catch {
      cache.set(region, undefined); // no catalogue for the region: requirement changes are judged on the values they name
    }
  }
  return cache.get(region);
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { base: { type: 'string' }, env: { type: 'string' }, 'fail-on': { type: 'string' }, root: { type: 'string' } },
    strict: true,
  });
  const failOn = values['fail-on'];
  if (failOn !== undefined && failOn !== 'drift') throw new UsageError(`--fail-on: must be "drift", got "${failOn}"`);
  const result = runDiff({ root: resolve(values.root ?? process.cwd()), ...(values.base ? { base: values.base } : {}), ...(values.env ? { env: values.env } : {}) });
  process.stdout.write(result.markdown);
  return failOn === 'drift' && result.drift ? 1 : 0;
}

class UsageError extends Error {}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      // Still Markdown on stdout, so a pull-request bot posts why there is no review:
      // a workload that no longer fits anywhere, say, fails synth and lands here.
      process.stdout.write(`## Karpenter review\n\n**The change does not synthesize**, so Argo CD could not sync it either:\n\n${err.message.split('\n').map((l) => `- ${l}`).join('\n')}\n`);
      process.stderr.write(`error: invalid input\n${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof GitError || err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(err as Error).message}\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 2;
    }
  }
}
