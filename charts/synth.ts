import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { App, type Chart } from 'cdk8s';
import { ConfigError, type ConfigIssue } from '../config/errors.js';
import { AggregateConfigError, loadEnvironments, type LoadedEnvironment } from '../config/environment.js';
import { outputsPath, readOutputs, type InfraOutputs } from '../config/outputs.js';
import { EnvironmentChart } from './environment-chart.js';
import { fileNameFor, renderFiles, validateConstructs, type Manifest } from './render.js';
import { validateManifests } from '../validate/manifests.js';
import { analyzeForSynth } from '../analyze/reports.js';
import type { EnvironmentAnalysis } from '../analyze/analyze.js';

export interface SynthOptions {
  /** Repository root: environments/, infra/outputs/ are read from here. */
  readonly root: string;
  /** Only these environments (default: all). */
  readonly only?: readonly string[];
  /** Return error findings of the analyzer in `analysis` instead of throwing (`npm run analyze` prints them). */
  readonly keepAnalysisErrors?: boolean;
}

export interface EnvironmentResult {
  readonly environment: LoadedEnvironment;
  readonly outputs: InfraOutputs;
  readonly objects: readonly Manifest[];
  /** File name -> YAML text, sorted by name. */
  readonly files: ReadonlyMap<string, string>;
  /** What the NodePools admit and cost (reports/<env>.md); undefined when the region has no catalogue. */
  readonly analysis?: EnvironmentAnalysis;
}

export interface SynthResult {
  readonly environments: readonly EnvironmentResult[];
  readonly warnings: readonly string[];
}

/**
 * The whole synth, in memory: read and validate every input, build the charts, check
 * them, render every file. Nothing is written here, so any error leaves dist/ as it was.
 */
export function synthesize(opts: SynthOptions): SynthResult {
  const environments = loadEnvironments(join(opts.root, 'environments'), opts.only, opts.root);
  const app = new App({ outdir: join(opts.root, 'dist') });
  const errors: ConfigError[] = [];
  const built: Array<{ environment: LoadedEnvironment; outputs: InfraOutputs; chart: Chart }> = [];
  for (const environment of environments) {
    try {
      const outputs = readMatchingOutputs(opts.root, environment);
      built.push({ environment, outputs, chart: new EnvironmentChart(app, { environment, outputs }) });
    } catch (err) {
      if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  }
  if (errors.length > 0) throw errors.length === 1 ? errors[0] : new AggregateConfigError(errors);

  const charts = built.map(({ environment, outputs, chart }) => {
    validateConstructs(chart);
    return { environment, outputs, objects: chart.toJson() as Manifest[] };
  });
  validateManifests(charts.map(({ environment, objects }) => ({ dir: `dist/${environment.name}`, objects })));
  const transitions = charts.flatMap(({ environment, objects }) => immutableChanges(opts.root, environment, objects));
  if (transitions.length > 0) throw transitions.length === 1 ? transitions[0] : new AggregateConfigError(transitions);
  // A pool that admits no instance type, or a workload that fits none, is as broken as an
  // invalid field: Argo CD would sync it green and no node would ever launch.
  const analyzed = analyzeForSynth(opts.root, charts);
  if (analyzed.errors.length > 0 && !opts.keepAnalysisErrors) throw analyzed.errors.length === 1 ? analyzed.errors[0] : new AggregateConfigError(analyzed.errors);
  const results = charts.map((c, i) => ({ ...c, files: renderFiles(c.objects, `dist/${c.environment.name}`), analysis: analyzed.analyses[i] }));
  return { environments: results, warnings: [...environments.flatMap((e) => e.warnings), ...results.flatMap(nodeRoleWarnings), ...analyzed.warnings] };
}

/**
 * The controller may pass only the node role infra made (iam:PassRole in its policy), and
 * only that role has an EC2_LINUX access entry: another role launches nothing or joins nothing.
 */
export function nodeRoleWarnings({ environment, outputs }: Pick<EnvironmentResult, 'environment' | 'outputs'>): string[] {
  const grants = `iam:PassRole for Karpenter's controller and an EC2_LINUX access entry (infra grants both for ${outputs.nodeRoleName} only), or nodes will not launch or join`;
  return environment.config.nodeClasses.flatMap((nc, i) => {
    const at = `${environment.file}: nodeClasses[${i}]`;
    if (nc.role !== undefined && nc.role !== outputs.nodeRoleName) return [`${at}.role: "${nc.role}" is not the node role infra made; it needs ${grants}`];
    if (nc.instanceProfile !== undefined) return [`${at}.instanceProfile: "${nc.instanceProfile}": its role needs ${grants}`];
    return [];
  });
}

/**
 * The CRD's oldSelf rule a create-only check cannot see: a NodePool cannot switch between
 * static (replicas) and dynamic. Argo CD would apply the change as an update and fail on
 * every sync, so compare with the committed dist/ and say so here. (nodeClassRef's group
 * and kind, also immutable, are constants of the chart.)
 */
function immutableChanges(root: string, environment: LoadedEnvironment, objects: readonly Manifest[]): ConfigError[] {
  const issues: ConfigIssue[] = [];
  environment.config.nodePools.forEach((pool, i) => {
    const file = `dist/${environment.name}/${fileNameFor({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: pool.name } })}`;
    let previous: { spec?: { replicas?: number } } | undefined;
    try {
      previous = parse(readFileSync(join(root, file), 'utf8'));
    } catch {
      return; // a new pool, or no dist/ yet
    }
    const next = objects.find((o) => o.kind === 'NodePool' && o.metadata.name === pool.name) as { spec?: { replicas?: number } } | undefined;
    const wasStatic = previous?.spec?.replicas !== undefined;
    if (wasStatic !== (next?.spec?.replicas !== undefined)) {
      issues.push({
        path: `nodePools[${i}].replicas`,
        message: `cannot be ${wasStatic ? 'removed from' : 'added to'} an existing ${wasStatic ? 'static' : 'dynamic'} NodePool (${file}): Karpenter refuses the transition on update; give the pool a new name`,
      });
    }
  });
  return issues.length > 0 ? [new ConfigError(environment.file, issues)] : [];
}

/** Outputs of an environment, checked against its config: a stale or foreign outputs file is an error. */
function readMatchingOutputs(root: string, environment: LoadedEnvironment): InfraOutputs {
  const file = outputsPath(environment.name);
  const outputs = readOutputs(join(root, file), file);
  const { cluster, karpenter } = environment.config;
  const pairs: Array<[keyof InfraOutputs, string, string]> = [
    ['clusterName', cluster.name, 'cluster.name'],
    ['region', cluster.region, 'cluster.region'],
    ['kubernetesVersion', cluster.kubernetesVersion, 'cluster.kubernetesVersion'],
    ['karpenterChartVersion', karpenter.chartVersion, 'karpenter.chartVersion'],
  ];
  const issues = pairs
    .filter(([key, expected]) => outputs[key] !== expected)
    .map(([key, expected, field]) => ({
      path: key,
      message: `must match ${environment.file} ${field} "${expected}", got "${outputs[key]}" (re-run \`npm run infra -- apply --env ${environment.name}\`)`,
    }));
  if (issues.length > 0) throw new ConfigError(file, issues);
  return outputs;
}
