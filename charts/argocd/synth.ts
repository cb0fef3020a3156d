import { join } from 'node:path';
import { App } from 'cdk8s';
import { ConfigError } from '../../config/errors.js';
import { GITOPS_FILE, checkEnvironmentsCovered, loadGitops } from '../../config/gitops.js';
import { fileNameFor, renderFiles, validateConstructs, type Manifest } from '../render.js';
import { ArgocdChart, type ArgocdEnvironment } from './argocd-chart.js';
import { readVendoredCrds } from './karpenter-crds.js';
import { CHART_NAMESPACED_OBJECTS, CRDS_DIR, ARGOCD_DIR } from './names.js';

export interface ArgocdSynthOptions {
  /** Repository root: gitops.yaml and crds/karpenter/ are read from here. */
  readonly root: string;
  /** Every environment, with what dist/<env>/ holds. */
  readonly environments: readonly ArgocdEnvironment[];
}

export interface ArgocdResult {
  /** The Argo CD objects (argocd/*.k8s.yaml). */
  readonly objects: readonly Manifest[];
  /** Names of the CRDs in argocd/karpenter-crds/. */
  readonly crds: readonly string[];
  /** Path relative to argocd/ -> YAML text, sorted. */
  readonly files: ReadonlyMap<string, string>;
}

/**
 * argocd/, in memory: reads gitops.yaml and the vendored CRDs, checks them against the
 * environments, renders every file. Writes nothing.
 */
export async function synthesizeArgocd(opts: ArgocdSynthOptions): Promise<ArgocdResult> {
  const gitops = loadGitops(join(opts.root, GITOPS_FILE));
  checkEnvironmentsCovered(
    gitops,
    opts.environments.map((e) => e.environment.name),
  );
  const vendored = readVendoredCrds(join(opts.root, 'crds', 'karpenter'));
  const issues = opts.environments.flatMap(({ environment }) =>
    environment.config.karpenter.chartVersion === vendored.version
      ? []
      : [new ConfigError(environment.file, [{
          path: 'karpenter.chartVersion',
          message: `must equal the version of the vendored Karpenter CRDs (crds/karpenter/) that Argo CD installs, ${vendored.version}, got "${environment.config.karpenter.chartVersion}"; vendor the new CRDs first`,
        }])],
  );
  if (issues.length > 0) throw new ConfigError(issues[0]!.file, issues.flatMap((e) => e.issues.map((i) => ({ ...i, path: `${e.file}: ${i.path}` }))));
  for (const env of opts.environments) checkNoChartObjects(env);

  const isFleet = Object.values(gitops.config.environments).some((t) => 'fleet' in t);
  const fleetApplicationSet = isFleet ? (await import('./application-set.js')).FleetApplicationSet : undefined;
  const app = new App({ outdir: join(opts.root, ARGOCD_DIR) });
  const chart = new ArgocdChart(app, 'argocd', { gitops: gitops.config, environments: opts.environments, fleetApplicationSet });
  validateConstructs(chart);
  const objects = chart.toJson() as Manifest[];

  const subdir = CRDS_DIR.slice(ARGOCD_DIR.length + 1);
  const files = new Map([
    ...renderFiles(objects, ARGOCD_DIR),
    ...vendored.crds.map((crd) => [`${subdir}/${fileNameFor({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.name } })}`, crd.text] as const),
  ]);
  return { objects, crds: vendored.crds.map((c) => c.name), files };
}

/** dist/<env>/ must not define an object the chart renders: two Applications would fight over it. */
function checkNoChartObjects({ environment, objects }: ArgocdEnvironment): void {
  const releaseNs = environment.config.karpenter.namespace;
  const clashes = objects.filter((o) =>
    CHART_NAMESPACED_OBJECTS.some((c) => c.kind === o.kind && c.name === o.metadata.name && (c.namespace ?? releaseNs) === o.metadata.namespace),
  );
  if (clashes.length > 0) {
    throw new Error(
      `dist/${environment.name}: ${clashes.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).join(', ')} is also rendered by the Karpenter chart; rename it`,
    );
  }
}
