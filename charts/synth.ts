import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { App, type Chart } from 'cdk8s';
import { ConfigError, type ConfigIssue } from '../config/errors.js';
import { AggregateConfigError, loadEnvironments, type LoadedEnvironment } from '../config/environment.js';
import { outputsPath, readOutputs, type InfraOutputs } from '../config/outputs.js';
import { EnvironmentChart } from './environment-chart.js';
import { fileNameFor, renderFiles, type Manifest } from './render.js';
import { ManifestError, validateManifests, type Origin, type Segments } from '../validate/manifests.js';
import { resolveNodePool } from '../config/presets.js';
import { argocdInputErrors } from './argocd/synth.js';
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
 *
 * Every stage (environment files, outputs files, CRD/CEL rules, immutable fields and, in a
 * full synth, gitops.yaml) runs on every input the stages before it did not reject, and
 * all problems are thrown together, sorted by file: one run shows everything to fix.
 */
export function synthesize(opts: SynthOptions): SynthResult {
  const errors: ConfigError[] = [];
  const collect = (run: () => void) => {
    try {
      run();
    } catch (err) {
      if (err instanceof ManifestError) errors.push(...err.byFile());
      else if (err instanceof AggregateConfigError) errors.push(...err.errors);
      else if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  };
  const { environments, names } = loadEveryEnvironment(opts, errors);
  const built: Array<{ environment: LoadedEnvironment; outputs: InfraOutputs; chart: Chart }> = [];
  for (const environment of environments) {
    collect(() => {
      const outputs = readMatchingOutputs(opts.root, environment);
      // An App per chart: cdk8s's chart.toJson() resolves and validates the whole App, so one
      // shared App made 300 environments cost 300 x 300 chart walks.
      const app = new App({ outdir: join(opts.root, 'dist') });
      built.push({ environment, outputs, chart: new EnvironmentChart(app, { environment, outputs }) });
    });
  }

  // toJson() runs every construct's validations (cdk8s App._synthChart) and throws on any.
  const charts = built.map(({ environment, outputs, chart }) => ({ environment, outputs, objects: chart.toJson() as Manifest[] }));
  collect(() => validateManifests(charts.map(({ environment, objects }) => ({ dir: `dist/${environment.name}`, objects, origin: environmentOrigin(environment) }))));
  errors.push(...charts.flatMap(({ environment, objects }) => immutableChanges(opts.root, environment, objects)));
  // argocd/ is rendered by a full synth only; its inputs are checked here so their problems join the others.
  if (!opts.only || opts.only.length === 0) errors.push(...argocdInputErrors(opts.root, charts, names));
  // A pool that admits no instance type, or a workload that fits none, is as broken as an
  // invalid field: Argo CD would sync it green and no node would ever launch.
  let analyzed: ReturnType<typeof analyzeForSynth> = { analyses: [], errors: [], warnings: [] };
  collect(() => (analyzed = analyzeForSynth(opts.root, charts)));
  if (!opts.keepAnalysisErrors) errors.push(...analyzed.errors);
  if (errors.length > 0) throw sortedByFile(errors);

  const results = charts.map((c, i) => ({ ...c, files: renderFiles(c.objects, `dist/${c.environment.name}`), analysis: analyzed.analyses[i] }));
  return { environments: results, warnings: [...environments.flatMap((e) => e.warnings), ...results.flatMap(nodeRoleWarnings), ...analyzed.warnings] };
}

/** One error for many, files in order (stable: a file's lines keep their order). */
function sortedByFile(errors: readonly ConfigError[]): ConfigError {
  const unique = [...new Map(errors.map((e) => [e.message, e])).values()];
  const sorted = unique.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return sorted.length === 1 ? sorted[0]! : new AggregateConfigError(sorted);
}

/**
 * Every environment that loads, and the errors of those that do not. loadEnvironments
 * reports every file's errors but returns nothing when one fails, so the others are then
 * loaded one by one, through it (its rules on which files count still apply). `names` is
 * every environment file's name, loaded or not, for the gitops.yaml coverage check.
 */
function loadEveryEnvironment(opts: SynthOptions, errors: ConfigError[]): { environments: LoadedEnvironment[]; names: string[] } {
  const dir = join(opts.root, 'environments');
  let names: string[] = [];
  try {
    names = [
      ...new Set(
        readdirSync(dir)
          .filter((f) => /\.ya?ml$/.test(f))
          .map((f) => f.replace(/\.ya?ml$/, '')),
      ),
    ].sort();
  } catch {
    // loadEnvironments says what is wrong with the directory.
  }
  try {
    return { environments: loadEnvironments(dir, opts.only, opts.root), names };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const failed = err instanceof AggregateConfigError ? [...err.errors] : [err];
    errors.push(...failed);
    const failedFiles = new Set(failed.map((e) => e.file));
    const wanted = opts.only && opts.only.length > 0 ? names.filter((n) => opts.only!.includes(n)) : names;
    const environments: LoadedEnvironment[] = [];
    for (const name of wanted) {
      if ([...failedFiles].some((f) => f === relative(opts.root, join(dir, `${name}.yaml`)) || f === relative(opts.root, join(dir, `${name}.yml`)))) continue;
      try {
        environments.push(...loadEnvironments(dir, [name], opts.root));
      } catch (again) {
        if (!(again instanceof ConfigError)) throw again;
        errors.push(...(again instanceof AggregateConfigError ? again.errors : [again]));
      }
    }
    return { environments, names };
  }
}

/**
 * Maps a field of a rendered EC2NodeClass or NodePool back to the environment file: the
 * node class and pool fields carry the CRD's names, so most paths map one to one; a
 * NodePool's requirements are matched by key (a preset's requirement maps to `preset`).
 */
export function environmentOrigin(environment: LoadedEnvironment): (obj: Manifest, path: Segments) => Origin | undefined {
  const { file, config } = environment;
  return (obj, path) => {
    const [top, second] = path;
    if (obj.kind === 'EC2NodeClass') {
      const i = config.nodeClasses.findIndex((c) => c.name === obj.metadata.name);
      if (i < 0) return undefined;
      const base = ['nodeClasses', i];
      if (top === 'metadata' && second === 'name') return { file, path: [...base, 'name'] };
      if (top === 'spec') return { file, path: [...base, ...path.slice(1)] };
      return undefined;
    }
    if (obj.kind === 'NodePool') {
      const i = config.nodePools.findIndex((p) => p.name === obj.metadata.name);
      if (i < 0) return undefined;
      const pool = config.nodePools[i]!;
      const base = ['nodePools', i];
      if (top === 'metadata' && second === 'name') return { file, path: [...base, 'name'] };
      if (top !== 'spec') return undefined;
      if (second !== 'template') return { file, path: [...base, ...path.slice(1)] };
      const [, , part, field, ...rest] = path;
      if (part === 'metadata' && (field === 'labels' || field === 'annotations')) return { file, path: [...base, field, ...rest] };
      if (part !== 'spec' || field === undefined) return { file, path: base };
      if (field === 'nodeClassRef') return { file, path: [...base, 'nodeClass'] };
      if (field === 'requirements' && typeof rest[0] === 'number') {
        const rendered = resolveNodePool(pool).requirements ?? [];
        const key = rendered[rest[0]]?.key;
        const nth = rendered.slice(0, rest[0]).filter((r) => r.key === key).length;
        const own = (pool.requirements ?? []).flatMap((r, j) => (r.key === key ? [j] : []));
        if (own.length === 0) return { file, path: [...base, 'preset'] };
        return { file, path: [...base, 'requirements', own[nth] ?? own[0]!, ...rest.slice(1)] };
      }
      return { file, path: [...base, field, ...rest] };
    }
    return undefined;
  };
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
  // One lookup per pool, not a scan of all objects: 10,000 pools were 10^8 comparisons.
  const nodePools = new Map(objects.filter((o) => o.kind === 'NodePool').map((o) => [o.metadata.name, o]));
  environment.config.nodePools.forEach((pool, i) => {
    const file = `dist/${environment.name}/${fileNameFor({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: pool.name } })}`;
    let previous: { spec?: { replicas?: number } } | undefined;
    try {
      const text = readFileSync(join(root, file), 'utf8');
      // Parsing is the cost (seconds for 10,000 pools): a file without the word, or an escape that could spell it, has no replicas.
      previous = text.includes('replicas') || text.includes('\\') ? parse(text) : {};
    } catch {
      return; // a new pool, or no dist/ yet
    }
    const next = nodePools.get(pool.name) as { spec?: { replicas?: number } } | undefined;
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
