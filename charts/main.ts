import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { replaceDirectories, writeFileAtomic } from '../config/atomic.js';
import { environmentJsonSchema } from './json-schema.js';
import { ConfigError } from '../config/errors.js';
import { synthesize } from './synth.js';
import { synthesizeArgocd } from './argocd/synth.js';
import { ARGOCD_DIR } from './argocd/names.js';
import { REPORTS_DIR, reportFiles } from '../analyze/reports.js';

/**
 * `npm run synth [-- --env <name> ...]`: validates every input, renders every file in
 * memory, then swaps dist/ (or dist/<env>) in atomically. Also the app of `cdk8s synth`,
 * which sets CDK8S_OUTDIR.
 */
async function main(argv: readonly string[]): Promise<number> {
  const started = process.hrtime.bigint();
  const { values } = parseArgs({
    args: [...argv],
    options: { env: { type: 'string', multiple: true }, root: { type: 'string' }, 'render-charts': { type: 'boolean' } },
    strict: true,
  });
  const root = resolve(values.root ?? process.cwd());
  const only = (values.env ?? []).flatMap((e) => e.split(',')).filter(Boolean);
  const distDir = process.env.CDK8S_OUTDIR ? resolve(process.env.CDK8S_OUTDIR) : join(root, 'dist');

  const result = synthesize({ root, only });

  const trees = new Map<string, Map<string, string>>();
  if (only.length > 0) {
    for (const env of result.environments) trees.set(join(distDir, env.environment.name), new Map(env.files));
  } else {
    const all = new Map<string, string>();
    for (const env of result.environments) for (const [f, text] of env.files) all.set(join(env.environment.name, f), text);
    trees.set(distDir, all);
  }
  // argocd/ describes every environment (its AppProject lists them all), so only a full
  // synth renders it; it is swapped in together with dist/, all or nothing.
  const argocd = only.length === 0 ? await synthesizeArgocd({ root, environments: result.environments }) : undefined;
  if (argocd) trees.set(join(root, ARGOCD_DIR), new Map(argocd.files));
  const analyses = result.environments.flatMap((e) => (e.analysis ? [e.analysis] : []));
  trees.set(join(root, REPORTS_DIR), await reportFiles({ root, analyses, keepOthers: only.length > 0, renderCharts: values['render-charts'] ?? false }));
  replaceDirectories(trees);
  writeFileAtomic(join(root, 'environments', 'schema.json'), environmentJsonSchema());

  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  const ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
  const summary = result.environments.map((e) => `${e.environment.name} (${e.objects.length} objects)`).join(', ');
  const argocdSummary = argocd ? ` and ${argocd.objects.length} Argo CD objects and ${argocd.crds.length} CRDs into ${ARGOCD_DIR}/` : ` (${ARGOCD_DIR}/ left as is: --env given)`;
  process.stdout.write(`synthesized ${summary} into ${join(distDir.replace(`${root}/`, ''), '')}/${argocdSummary} in ${ms} ms\n`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`error: invalid input, nothing was written\n${err.message}\n`);
    process.exitCode = 1;
  } else if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`error: ${(err as Error).message}. Usage: npm run synth [-- --env <name>[,<name>...]] [--render-charts]\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  }
}
