import { join } from 'node:path';
import { App } from 'cdk8s';
import { ConfigError } from '../../config/errors.js';
import { locate } from '../../config/yaml-input.js';
import { GITOPS_FILE, checkEnvironmentsCovered, loadGitops } from '../../config/gitops.js';
import { fileNameFor, renderFiles, type Manifest } from '../render.js';
import { ArgocdChart, type ArgocdEnvironment } from './argocd-chart.js';
import { finalizerErrors } from './application.js';
import { readVendoredCrds } from './karpenter-crds.js';
import { CHART_NAMESPACED_OBJECTS, CRDS_DIR, ARGOCD_DIR } from './names.js';

export interface ArgocdSynthOptions {
  /** Repository root: gitops.yaml and crds/karpenter/ are read from here. */
  readonly root: string;
  /**
   * Every environment, with what dist/<env>/ holds: a full synthesize()'s result, which
   * has checked the Argo CD inputs (argocdInputErrors) with the other stages.
   */
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
 * argocd/, in memory: reads gitops.yaml and the vendored CRDs and renders every file for
 * the environments (synthesize() has checked those inputs). Writes nothing.
 */
export async function synthesizeArgocd(opts: ArgocdSynthOptions): Promise<ArgocdResult> {
  const gitops = loadGitops(join(opts.root, GITOPS_FILE));
  const vendored = readVendoredCrds(join(opts.root, 'crds', 'karpenter'));

  const isFleet = Object.values(gitops.config.environments).some((t) => 'fleet' in t);
  const fleetApplicationSet = isFleet ? (await import('./application-set.js')).FleetApplicationSet : undefined;
  const app = new App({ outdir: join(opts.root, ARGOCD_DIR) });
  const chart = new ArgocdChart(app, 'argocd', { gitops: gitops.config, environments: opts.environments, fleetApplicationSet });
  // toJson() runs every construct's validations (cdk8s App._synthChart) and throws on any.
  const objects = chart.toJson() as Manifest[];
  const finalizers = finalizerErrors(objects);
  if (finalizers.length > 0) throw new Error(finalizers.join('\n')); // our bug, not the user's: exit 2

  const subdir = CRDS_DIR.slice(ARGOCD_DIR.length + 1);
  const files = new Map([
    ...renderFiles(objects, ARGOCD_DIR),
    ...vendored.crds.map((crd) => [`${subdir}/${fileNameFor({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.name } })}`, crd.text] as const),
  ]);
  return { objects, crds: vendored.crds.map((c) => c.name), files };
}

/**
 * Every problem of the Argo CD inputs, as a list (the synth reports them with the other
 * stages'): gitops.yaml itself, its coverage of `names` (every environment file, loaded
 * or not), each environment's chart version against the vendored CRDs, and objects of
 * dist/<env>/ that the chart renders too.
 */
export function argocdInputErrors(root: string, environments: readonly ArgocdEnvironment[], names: readonly string[]): ConfigError[] {
  const errors: ConfigError[] = [];
  try {
    checkEnvironmentsCovered(loadGitops(join(root, GITOPS_FILE)), names);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    errors.push(err);
  }
  let vendored: ReturnType<typeof readVendoredCrds>;
  try {
    vendored = readVendoredCrds(join(root, 'crds', 'karpenter'));
  } catch (err) {
    // Argo CD installs these CRDs: without them there is no argocd/ to render.
    return [...errors, new ConfigError('crds/karpenter', [{ path: '', message: `cannot be read as the vendored Karpenter CRDs: ${(err as Error).message}` }])];
  }
  for (const { environment } of environments) {
    if (environment.config.karpenter.chartVersion !== vendored.version) {
      errors.push(
        new ConfigError(environment.file, [
          {
            path: 'karpenter.chartVersion',
            message: `must equal the version of the vendored Karpenter CRDs (crds/karpenter/) that Argo CD installs, ${vendored.version}, got "${environment.config.karpenter.chartVersion}"; vendor the new CRDs first`,
          },
        ]),
      );
    }
  }
  for (const env of environments) errors.push(...chartObjectClashes(root, env));
  return errors;
}

/**
 * dist/<env>/ must not define an object the chart renders: two Applications would fight
 * over it. Reported at the workload that renders it (file:line:col), naming both sources.
 */
function chartObjectClashes(root: string, { environment, objects }: ArgocdEnvironment): ConfigError[] {
  const releaseNs = environment.config.karpenter.namespace;
  const clashes = objects.filter((o) =>
    CHART_NAMESPACED_OBJECTS.some((c) => c.kind === o.kind && c.name === o.metadata.name && (c.namespace ?? releaseNs) === o.metadata.namespace),
  );
  const workloads = environment.config.workloads;
  return [...new Set(clashes.map((o) => `${o.metadata.namespace}/${o.metadata.name}`))].map((key) => {
    const kinds = clashes.filter((o) => `${o.metadata.namespace}/${o.metadata.name}` === key).map((o) => o.kind);
    const i = workloads.findIndex((w) => `${w.namespace}/${w.name}` === key);
    const path = i >= 0 ? `workloads[${i}].name` : '';
    const at = i >= 0 ? locate(root, environment.file, ['workloads', i, 'name']) : environment.file;
    return new ConfigError(at, [{
      path,
      message: `must not be "${key.split('/')[1]}" in namespace ${key.split('/')[0]}: the Karpenter chart (Application ${environment.name}-karpenter) renders ${kinds.join(' and ')} ${key} too, and two Applications would fight over them; rename the workload`,
    }]);
  });
}
