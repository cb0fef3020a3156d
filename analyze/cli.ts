import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/errors.js';
import { recoverCommit } from '../config/atomic.js';

const USAGE = 'Usage: npm run analyze [-- --env <name>[,<name>...]] [--json]';

/**
 * `npm run analyze [-- --env prod] [--json]`: synthesizes in memory (nothing is written),
 * analyzes each environment against its region's catalogue and prints the report that
 * synth commits as reports/<env>.md (or the analysis as JSON). Exit 1 when any finding is
 * an error, as synth would fail.
 */
async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { env: { type: 'string', multiple: true }, root: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const root = resolve(values.root ?? process.cwd());
  // synth compares with dist/: finish or undo an interrupted synth first (config/atomic.ts).
  recoverCommit(root, { onRepair: (note) => process.stderr.write(`note: ${note}\n`) });
  const only = (values.env ?? []).flatMap((e) => e.split(',')).filter(Boolean);
  // Loaded once the command line is understood: --help and a bad argument answer without them.
  const [{ synthesize }, { renderReport }] = await Promise.all([import('../charts/synth.js'), import('./report.js')]);
  const result = synthesize({ root, only, keepAnalysisErrors: true });
  const analyses = result.environments.flatMap((e) => (e.analysis ? [e.analysis] : []));
  if (values.json) process.stdout.write(`${JSON.stringify(analyses, null, 2)}\n`);
  else process.stdout.write(analyses.map((a) => renderReport(a, `reports/${a.environment}.svg`)).join('\n'));
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  const errors = analyses.flatMap((a) => a.findings.filter((f) => f.severity === 'error').map((f) => `${a.file}: ${f.path}: ${f.message}`));
  for (const e of errors) process.stderr.write(`error: ${e}\n`);
  return errors.length > 0 ? 1 : 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`error: invalid input\n${err.message}\n`);
    process.exitCode = 1;
  } else if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`error: ${(err as Error).message}. ${USAGE}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  }
}
