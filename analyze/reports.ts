import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cataloguePath, readCatalogue, type Catalogue } from '../catalogue/catalogue.js';
import { ConfigError } from '../config/errors.js';
import type { LoadedEnvironment } from '../config/environment.js';
import type { Manifest } from '../charts/render.js';
import { analyzeEnvironment, type EnvironmentAnalysis } from './analyze.js';
import { chartSpec, chartSpecText, renderChartSvg } from './chart.js';
import { renderReport } from './report.js';

/** Committed beside dist/: `reports/<env>.md`, `<env>.svg` and the chart's data `<env>.chart.json`. */
export const REPORTS_DIR = 'reports';

/**
 * Analyzes every synthesized environment against its region's catalogue. Error findings
 * come back as ConfigErrors (synth fails, nothing is written); warnings as the lines synth
 * prints. An environment whose region has no catalogue is not analyzed, with a warning.
 */
export function analyzeForSynth(
  root: string,
  environments: ReadonlyArray<{ readonly environment: LoadedEnvironment; readonly objects: readonly Manifest[] }>,
): { analyses: Array<EnvironmentAnalysis | undefined>; errors: ConfigError[]; warnings: string[] } {
  const catalogues = new Map<string, Catalogue | undefined>();
  const errors: ConfigError[] = [];
  const warnings: string[] = [];
  const analyses = environments.map(({ environment, objects }) => {
    const region = environment.config.cluster.region;
    if (!catalogues.has(region)) catalogues.set(region, existsSync(join(root, cataloguePath(region))) ? readCatalogue(root, region) : undefined);
    const catalogue = catalogues.get(region);
    if (!catalogue) {
      warnings.push(`${environment.file}: cluster.region: "${region}" has no instance catalogue (${cataloguePath(region)}), so its NodePools were not analyzed; run \`npm run catalogue -- --region ${region}\``);
      return undefined;
    }
    const analysis = analyzeEnvironment(environment, objects, catalogue);
    const bad = analysis.findings.filter((f) => f.severity === 'error');
    if (bad.length > 0) errors.push(new ConfigError(environment.file, bad.map((f) => ({ path: f.path, message: f.message }))));
    warnings.push(...analysis.findings.filter((f) => f.severity === 'warning').map((f) => `${environment.file}: ${f.path}: ${f.message}`));
    return analysis;
  });
  return { analyses, errors, warnings };
}

export interface ReportFilesOptions {
  readonly root: string;
  readonly analyses: readonly EnvironmentAnalysis[];
  /** Environments not synthesized this run (`--env`): their committed reports are kept as they are. */
  readonly keepOthers: boolean;
  /**
   * Draw every chart even when its data is unchanged. Without it, an SVG whose committed
   * `<env>.chart.json` equals the new one is reused: loading Vega costs more than the
   * rest of synth, and the SVG is a pure function of that data. CI passes it.
   */
  readonly renderCharts: boolean;
}

/** The whole new `reports/` tree (file name -> text), for synth's atomic swap. */
export async function reportFiles(opts: ReportFilesOptions): Promise<Map<string, string>> {
  const dir = join(opts.root, REPORTS_DIR);
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return undefined;
    }
  };
  const files = new Map<string, string>();
  const ours = new Set(opts.analyses.map((a) => a.environment));
  // `<env>.simulation.md` is written by `npm run simulate -- --write` (it needs the Go
  // binary, synth must not): carried over as it is while its environment exists.
  if (existsSync(dir)) {
    for (const name of readdirSync(dir).sort()) {
      const env = name.replace(/\.simulation\.md$/, '');
      if (env !== name && (ours.has(env) || opts.keepOthers)) files.set(name, readFileSync(join(dir, name), 'utf8'));
    }
  }
  if (opts.keepOthers && existsSync(dir)) {
    for (const name of readdirSync(dir).sort()) {
      const env = name.replace(/\.(md|svg|chart\.json)$/, '');
      if (!ours.has(env) && name !== env) files.set(name, readFileSync(join(dir, name), 'utf8'));
    }
  }
  for (const a of opts.analyses) {
    const spec = chartSpecText(chartSpec(a));
    const previous = read(`${a.environment}.svg`);
    const svg = !opts.renderCharts && previous !== undefined && read(`${a.environment}.chart.json`) === spec ? previous : await renderChartSvg(JSON.parse(spec));
    files.set(`${a.environment}.md`, renderReport(a, `${a.environment}.svg`));
    files.set(`${a.environment}.chart.json`, spec);
    files.set(`${a.environment}.svg`, svg);
  }
  return files;
}
