import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chartSpec, chartSpecText, renderChartSvg } from '../../analyze/chart.js';
import { reportFiles } from '../../analyze/reports.js';
import { renderReport } from '../../analyze/report.js';
import { synthesize } from '../../charts/synth.js';
import { REPO } from '../support/repo.js';
import { analyzeDoc } from './support.js';

const result = synthesize({ root: REPO, only: ['prod', 'dev'] });
const prod = result.environments.find((e) => e.environment.name === 'prod')!.analysis!;
const dev = result.environments.find((e) => e.environment.name === 'dev')!.analysis!;

describe('reports/<env>.md and the chart', () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("README's npm run analyze excerpt is a real excerpt of reports/prod.md", () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const excerpt = readme.slice(readme.indexOf('An excerpt of `npm run analyze -- --env prod`'));
    const block = excerpt.slice(excerpt.indexOf('```markdown') + 12, excerpt.indexOf('\n```\n'));
    const report = readFileSync(join(REPO, 'reports/prod.md'), 'utf8').split('\n');
    expect(block.split('\n').length).toBeGreaterThan(20);
    for (const line of block.split('\n')) expect(report).toContain(line);
    expect(readme).toContain('![prod: admitted instance types, vCPU against On-Demand dollars per hour](reports/prod.svg)');
  });

  it('the committed report and chart data are what the analysis renders now', () => {
    expect(renderReport(prod)).toBe(readFileSync(join(REPO, 'reports/prod.md'), 'utf8'));
    expect(chartSpecText(chartSpec(prod))).toBe(readFileSync(join(REPO, 'reports/prod.chart.json'), 'utf8'));
  });

  it('Vega draws the same SVG twice, headless, with every priced admitted type and inflate marked', async () => {
    const spec = chartSpec(prod);
    const svg = await renderChartSvg(spec);
    expect(await renderChartSvg(chartSpec(prod))).toBe(svg);
    expect(svg).toBe(readFileSync(join(REPO, 'reports/prod.svg'), 'utf8'));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('>inflate: c6a.large</text>');
    const priced = prod.pools.flatMap((p) => p.admitted.filter((t) => t.onDemandPrice !== null));
    expect((spec.data![0] as { values: unknown[] }).values).toHaveLength(priced.length);
    expect(svg).toContain('>vCPU</text>');
  });

  it('an unchanged chart reuses the committed SVG; changed data or --render-charts draws it again', async () => {
    dir = mkdtempSync(join(tmpdir(), 'reports-'));
    mkdirSync(join(dir, 'reports'));
    writeFileSync(join(dir, 'reports/dev.chart.json'), chartSpecText(chartSpec(dev)));
    writeFileSync(join(dir, 'reports/dev.svg'), '<svg>committed</svg>\n');
    writeFileSync(join(dir, 'reports/staging.md'), 'kept\n');
    const reused = await reportFiles({ root: dir, analyses: [dev], keepOthers: true, renderCharts: false });
    expect(reused.get('dev.svg')).toBe('<svg>committed</svg>\n');
    expect(reused.get('staging.md')).toBe('kept\n'); // --env dev leaves other environments' reports alone
    const forced = await reportFiles({ root: dir, analyses: [dev], keepOthers: false, renderCharts: true });
    expect(forced.get('dev.svg')).toBe(readFileSync(join(REPO, 'reports/dev.svg'), 'utf8'));
    expect([...forced.keys()].sort()).toEqual(['dev.chart.json', 'dev.md', 'dev.svg']);
    writeFileSync(join(dir, 'reports/dev.chart.json'), '{}\n');
    const changed = await reportFiles({ root: dir, analyses: [dev], keepOthers: false, renderCharts: false });
    expect(changed.get('dev.svg')).toBe(readFileSync(join(REPO, 'reports/dev.svg'), 'utf8'));
  });
});

describe('many NodePools: the analysis and the chart stay bounded by the catalogue', () => {
  // Seven pools of three presets: the same selection recurs, as it does at 10,000 pools.
  const presets = ['spot-small', 'spot-small', 'spot-multi-arch', 'spot-small', 'spot-multi-arch', 'spot-with-on-demand-fallback', 'spot-with-on-demand-fallback'];
  const { analysis } = analyzeDoc({ nodePools: presets.map((preset, i) => ({ name: `pool-${i}`, preset, weight: i + 1, limits: { cpu: '100' } })) });

  it('GIVEN pools with the same preset WHEN analyzed THEN they admit the same types, whichever pool computed them', () => {
    const byPreset = new Map<string, string[]>();
    analysis.pools.forEach((p, i) => {
      const names = p.admitted.map((t) => t.name);
      const seen = byPreset.get(presets[i]!);
      if (seen) expect(names).toEqual(seen);
      else byPreset.set(presets[i]!, names);
    });
    expect(byPreset.get('spot-small')).not.toEqual(byPreset.get('spot-multi-arch'));
  });

  it('GIVEN more pools than shapes (7 > 6) WHEN charted THEN each priced admitted type is one point, no pool shapes, and the subtitle says so', () => {
    const spec = chartSpec(analysis);
    const points = (spec.data![0] as { values: Array<{ type: string; pool?: string }> }).values;
    const union = [...new Set(analysis.pools.flatMap((p) => p.admitted.filter((t) => t.onDemandPrice !== null).map((t) => t.name)))].sort();
    expect(points.map((p) => p.type)).toEqual(union);
    expect(points.every((p) => p.pool === undefined)).toBe(true);
    expect(spec.scales!.map((s) => s.name)).toEqual(['x', 'y', 'color']);
    expect((spec.title as { subtitle: string }).subtitle).toContain('; 7 NodePools, each type drawn once');
  });

  it('GIVEN a second environment of the same pools WHEN charted THEN the points are shared, each text is a fresh serialization, and drawing an SVG leaves the shared points untouched', async () => {
    const other = analyzeDoc({ nodePools: presets.map((preset, i) => ({ name: `other-${i}`, preset, weight: i + 1, limits: { cpu: '100' } })) }).analysis;
    const [a, b] = [chartSpec(analysis), chartSpec(other)];
    const values = (spec: typeof a) => (spec.data![0] as { values: object[] }).values;
    expect(values(b)).toBe(values(a));
    await renderChartSvg(a);
    expect(values(a).every((p) => Object.getOwnPropertySymbols(p).length === 0)).toBe(true);
    for (const spec of [a, b]) {
      const text = chartSpecText(spec);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(spec)));
      expect(text).toContain(`"values": [\n    ${values(spec).map((p) => JSON.stringify(p)).join(',\n    ')}\n   ]`);
    }
    // Another set of lists (one preset only) is its own array: the union of that one list.
    const small = analyzeDoc({ nodePools: presets.map((_, i) => ({ name: `small-${i}`, preset: 'spot-small', weight: i + 1, limits: { cpu: '100' } })) }).analysis;
    const smallPoints = values(chartSpec(small)) as Array<{ type: string }>;
    expect(smallPoints).not.toBe(values(a));
    expect(smallPoints.map((p) => p.type)).toEqual(small.pools[0]!.admitted.filter((t) => t.onDemandPrice !== null).map((t) => t.name));
  });
});

describe('chartSpecText', () => {
  it('GIVEN the prod chart WHEN written THEN it parses back to the same spec, and each point is one line', () => {
    const spec = chartSpec(prod);
    const text = chartSpecText(spec);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(spec)));
    const points = (spec.data![0] as { values: unknown[] }).values;
    for (const p of points) expect(text).toContain(`\n    ${JSON.stringify(p)}`);
    expect(text.split('\n').length).toBeLessThan(points.length + 400);
  });

  it('GIVEN data lists that are empty THEN they are written as []', () => {
    const text = chartSpecText({ data: [{ name: 'a', values: [] }, { name: 'b', values: [{ x: 1 }] }] });
    expect(text).toBe('{\n "data": [\n  {\n   "name": "a",\n   "values": []\n  },\n  {\n   "name": "b",\n   "values": [\n    {"x":1}\n   ]\n  }\n ]\n}\n');
  });
});
