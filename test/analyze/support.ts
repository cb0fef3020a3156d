import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { stringify } from 'yaml';
import { analyzeEnvironment, type EnvironmentAnalysis } from '../../analyze/analyze.js';
import { readCatalogue } from '../../catalogue/catalogue.js';
import { EnvironmentChart } from '../../charts/environment-chart.js';
import type { Manifest } from '../../charts/render.js';
import { parseEnvironment } from '../../config/environment.js';
import { readOutputs } from '../../config/outputs.js';
import { REPO } from '../support/repo.js';

/** The vendored catalogue as plain JSON: tests compute their expectations from this, not from the analyzer's parsed view. */
export interface RawType {
  labels: Record<string, string>;
  resources: Record<string, string>;
  onDemandPrice: number | null;
}
export const RAW: Record<string, RawType> = JSON.parse(readFileSync(join(REPO, 'catalogue/us-east-1.json'), 'utf8')).instanceTypes;
export const CATALOGUE = readCatalogue(REPO, 'us-east-1');

/** Type names whose raw labels pass `keep`, sorted. */
export function expected(keep: (labels: Record<string, string>, name: string) => boolean): string[] {
  return Object.keys(RAW)
    .filter((n) => keep(RAW[n]!.labels, n))
    .sort();
}

export const label = (l: Record<string, string>, key: string) => l[`karpenter.k8s.aws/${key}`];
export const num = (l: Record<string, string>, key: string) => Number(label(l, key));

/**
 * GIVEN an environment built from `doc` (cluster and node class defaults filled in) and
 * synthesized by the real charts, WHEN analyzed against the vendored catalogue, THEN the result.
 */
export function analyzeDoc(doc: Record<string, unknown>): { analysis: EnvironmentAnalysis; objects: Manifest[] } {
  const env = parseEnvironment(
    'environments/test.yaml',
    stringify({
      cluster: { name: 'karpenter-prod', region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-01234567', 'subnet-01234568'] },
      nodeClasses: [{ name: 'default' }],
      ...doc,
    }),
  );
  const outputs = readOutputs(join(REPO, 'infra/outputs/prod.json'), 'infra/outputs/prod.json');
  const chart = new EnvironmentChart(new App(), { environment: env, outputs });
  const objects = chart.toJson() as Manifest[];
  return { analysis: analyzeEnvironment(env, objects, CATALOGUE), objects };
}

/** One pool named `p` with these requirements (and any other pool fields). */
export function analyzePool(requirements: unknown[], pool: Record<string, unknown> = {}, doc: Record<string, unknown> = {}) {
  const { analysis } = analyzeDoc({ nodePools: [{ name: 'p', requirements, limits: { cpu: '100' }, ...pool }], ...doc });
  return { analysis, pool: analysis.pools[0]!, names: analysis.pools[0]!.admitted.map((t) => t.name) };
}
