import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { LoadedEnvironment } from '../../config/environment.js';
import { FLEET_LABEL, type Destination, type GitopsConfig } from '../../config/gitops.js';
import type { InfraOutputs } from '../../config/outputs.js';
import type { Manifest } from '../render.js';
import { KarpenterAppProject } from './app-project.js';
import { KarpenterApplication } from './application.js';
import type { FleetApplicationSet } from './application-set.js';
import { appAnnotations, chartSpec, crdsSpec, distSpec, type AppRole, type SpecContext } from './application-specs.js';
import { karpenterChartValues, type ClusterValues } from './karpenter-values.js';
import {
  ARGOCD_DIR,
  KARPENTER_CHART_REPO,
  CHART_CLUSTER_KINDS,
  CHART_EXTRA_NAMESPACES,
  CRD_KIND,
  FLEET_ANNOTATIONS,
  ROOT_APPLICATION,
  applicationNames,
} from './names.js';

export interface ArgocdEnvironment {
  readonly environment: LoadedEnvironment;
  readonly outputs: InfraOutputs;
  /** What dist/<env>/ holds: its namespaces and cluster-scoped kinds go into the AppProject. */
  readonly objects: readonly Manifest[];
}

export interface ArgocdChartProps {
  readonly gitops: GitopsConfig;
  readonly environments: readonly ArgocdEnvironment[];
  /**
   * The ApplicationSet construct, needed only if some environment is a fleet. Passed in
   * so that its 3.3 MB generated import is loaded only then (~0.4 s of every synth).
   */
  readonly fleetApplicationSet?: typeof FleetApplicationSet;
}

const IN_CLUSTER = 'https://kubernetes.default.svc';
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'karpenter-gitops' } as const;
/** The AppProjects exist before the Applications that name them when the root Application syncs. */
const PROJECT_WAVE = { 'argocd.argoproj.io/sync-wave': '-2' } as const;

/**
 * Everything in argocd/: the AppProjects, the root Application that keeps argocd/
 * itself in sync, and per environment either three Applications (one cluster) or three
 * ApplicationSets (a fleet): Karpenter CRDs, the Karpenter chart, dist/<env>/.
 */
export class ArgocdChart extends Chart {
  private readonly gitops: GitopsConfig;
  private readonly fleetApplicationSet?: typeof FleetApplicationSet;

  constructor(scope: Construct, id: string, props: ArgocdChartProps) {
    super(scope, id, { labels: MANAGED_BY });
    const gitops = (this.gitops = props.gitops);
    this.fleetApplicationSet = props.fleetApplicationSet;
    const ns = gitops.argocd.namespace;
    const rootProject = `${gitops.argocd.project}-root`;

    new KarpenterAppProject(this, 'RootProject', {
      name: rootProject,
      namespace: ns,
      description: 'Only the root Application: syncs argocd/ (Argo CD objects) into the Argo CD namespace.',
      sourceRepos: [gitops.repository.url],
      destinations: [{ server: IN_CLUSTER, namespace: ns }],
      clusterResources: [],
      namespaceResources: ['Application', 'ApplicationSet', 'AppProject'].map((kind) => ({ group: 'argoproj.io', kind })),
      annotations: PROJECT_WAVE,
    });
    new KarpenterApplication(this, 'Root', {
      name: ROOT_APPLICATION,
      namespace: ns,
      spec: {
        project: rootProject,
        destination: { server: IN_CLUSTER, namespace: ns },
        source: { repoUrl: gitops.repository.url, targetRevision: gitops.repository.targetRevision, path: ARGOCD_DIR, directory: { recurse: false } },
        syncPolicy: { automated: { enabled: true, prune: true, selfHeal: true, allowEmpty: false } },
      },
    });

    const destinations = props.environments.flatMap(({ environment, objects }) => {
      const target = gitops.environments[environment.name]!;
      // A fleet's clusters are registered later; the namespaces still fence them.
      const cluster: Destination = 'destination' in target ? target.destination : { server: '*' };
      return namespacesOf(environment, objects).map((namespace) => ({ ...cluster, namespace }));
    });
    new KarpenterAppProject(this, 'Project', {
      name: gitops.argocd.project,
      namespace: ns,
      description: 'Karpenter: its CRDs, its Helm chart and the NodeClasses/NodePools/workloads of dist/<env>/.',
      sourceRepos: [gitops.repository.url, KARPENTER_CHART_REPO],
      destinations,
      clusterResources: [CRD_KIND, ...CHART_CLUSTER_KINDS, ...props.environments.flatMap((e) => clusterKindsOf(e.objects))],
      annotations: PROJECT_WAVE,
    });

    for (const env of props.environments) {
      const target = gitops.environments[env.environment.name]!;
      if ('destination' in target) this.singleCluster(env, target.destination);
      else this.fleet(env, target.fleet.matchLabels);
    }
  }

  private context(cluster: Destination): SpecContext {
    const { argocd, repository } = this.gitops;
    return { project: argocd.project, repoUrl: repository.url, targetRevision: repository.targetRevision, cluster };
  }

  /** One cluster: values come straight from the environment file and its outputs file. */
  private singleCluster({ environment, outputs }: ArgocdEnvironment, destination: Destination): void {
    const { config, name: env } = environment;
    const values = karpenterChartValues(config, {
      clusterName: outputs.clusterName,
      interruptionQueue: outputs.interruptionQueueName,
      ...(config.cluster.identity === 'irsa' ? { controllerRoleArn: outputs.controllerRoleArn } : {}),
    });
    const ctx = this.context(destination);
    const names = applicationNames(env);
    const specs = {
      crds: crdsSpec(ctx, config.karpenter.namespace),
      chart: chartSpec(ctx, { namespace: config.karpenter.namespace, version: config.karpenter.chartVersion, values }),
      dist: distSpec(ctx, env),
    };
    for (const role of ROLES) {
      new KarpenterApplication(this, `${env}-${role}`, {
        name: names[role],
        namespace: this.gitops.argocd.namespace,
        spec: specs[role],
        labels: envLabels(env),
        annotations: appAnnotations(role),
      });
    }
  }

  /**
   * A fleet: per role, one ApplicationSet over the clusters labelled with this
   * environment. Per-cluster values come from the cluster secret's annotations.
   */
  private fleet({ environment }: ArgocdEnvironment, matchLabels: Readonly<Record<string, string>>): void {
    const { config, name: env } = environment;
    const ApplicationSetConstruct = this.fleetApplicationSet;
    if (!ApplicationSetConstruct) throw new Error(`environment "${env}" is a fleet: ArgocdChart needs props.fleetApplicationSet`);
    const annotation = fleetAnnotation;
    const cluster: ClusterValues = {
      clusterName: annotation(FLEET_ANNOTATIONS.clusterName),
      interruptionQueue: annotation(FLEET_ANNOTATIONS.interruptionQueue),
      ...(config.cluster.identity === 'irsa' ? { controllerRoleArn: annotation(FLEET_ANNOTATIONS.controllerRoleArn) } : {}),
    };
    const ctx = this.context({ server: '{{ .server }}' });
    const names = applicationNames(env);
    const specs = {
      crds: crdsSpec(ctx, config.karpenter.namespace),
      chart: chartSpec(ctx, { namespace: config.karpenter.namespace, version: config.karpenter.chartVersion, values: karpenterChartValues(config, cluster) }),
      dist: distSpec(ctx, env),
    };
    for (const role of ROLES) {
      new ApplicationSetConstruct(this, `${env}-${role}`, {
        name: names[role],
        namespace: this.gitops.argocd.namespace,
        clusterLabels: { ...matchLabels, [FLEET_LABEL]: env },
        // nameNormalized: a cluster registered under its ARN has a name no Application may carry.
        applicationName: names[role].replace(`${env}-`, `${env}-{{ .nameNormalized }}-`),
        template: specs[role],
        labels: envLabels(env),
        annotations: { 'argocd.argoproj.io/sync-wave': appAnnotations(role)['argocd.argoproj.io/sync-wave']! },
        applicationAnnotations: appAnnotations(role),
      });
    }
  }
}

const ROLES: readonly AppRole[] = ['crds', 'chart', 'dist'];

const envLabels = (env: string) => ({ 'karpenter-gitops/environment': env });

/** Namespaces an environment's Applications write to: the chart's, and every namespace dist/<env>/ uses. */
function namespacesOf(environment: LoadedEnvironment, objects: readonly Manifest[]): string[] {
  const fromDist = objects.map((o) => o.metadata.namespace).filter((n): n is string => n !== undefined);
  return [...new Set([environment.config.karpenter.namespace, ...CHART_EXTRA_NAMESPACES, 'default', ...fromDist])].sort();
}

/** Cluster-scoped kinds in dist/ (objects without a namespace), as {group, kind}. */
function clusterKindsOf(objects: readonly Manifest[]): Array<{ group: string; kind: string }> {
  return objects
    .filter((o) => o.metadata.namespace === undefined)
    .map((o) => ({ group: o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.indexOf('/')) : '', kind: o.kind }));
}

/**
 * A cluster secret annotation as a Go template that fails on a missing key
 * (`missingkey=error`) and on an empty value: an empty cluster name breaks the chart, an
 * empty queue silently turns interruption handling off, an empty role ARN writes
 * `role-arn: ""`. Built-ins only (no sprig `fail`), so plain text/template proves it: the
 * empty branch reads a key no secret has, and the error names it.
 */
export function fleetAnnotation(key: string): string {
  const value = `.metadata.annotations.${key}`;
  return `{{ if ${value} }}{{ ${value} }}{{ else }}{{ .metadata.annotations.${key}${EMPTY_ANNOTATION_SUFFIX} }}{{ end }}`;
}

/** What the Go template error says when a fleet annotation is present but empty: `map has no entry for key "<key>_must_not_be_empty"`. */
export const EMPTY_ANNOTATION_SUFFIX = '_must_not_be_empty';
