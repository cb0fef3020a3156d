import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { readCatalogue, type Catalogue } from '../catalogue/catalogue.js';
import type { DaemonSetOverhead } from '../config/daemonset-overhead.js';
import { loadEnvironment, type LoadedEnvironment } from '../config/environment.js';
import { ConfigError, describeValue, issuesFromZod } from '../config/errors.js';
import { readInputText } from '../config/yaml-input.js';
import { daemonSetObject, daemonSetsFor } from './daemonsets.js';
import type { SimulationInput } from './contract.js';

/** What every object of dist/ has; the Go side decodes the rest strictly into Karpenter's types. */
const objectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
});
type KubeObject = z.infer<typeof objectSchema>;

const deploymentSpecSchema = z.looseObject({
  replicas: z.number().int().nonnegative().optional(),
  template: z.looseObject({
    metadata: z.looseObject({ labels: z.record(z.string(), z.string()).optional() }).optional(),
    spec: z.looseObject({}),
  }),
});

/** The objects of dist/<env>/ the simulation reads, exactly as synthesized. */
export interface DistObjects {
  /** Where they came from, for errors: `dist/prod`, or the same at a git revision. */
  readonly where: string;
  readonly nodePools: readonly KubeObject[];
  readonly nodeClasses: readonly KubeObject[];
  readonly deployments: readonly KubeObject[];
}

type Sorted = { nodePools: KubeObject[]; nodeClasses: KubeObject[]; deployments: KubeObject[] };

/** Checks one object as every Kubernetes object is shaped and files it by kind; other kinds are not simulated. */
function sortInto(out: Sorted, raw: unknown, file: string): void {
  const parsed = objectSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, issuesFromZod(parsed.error, raw));
  const obj = parsed.data;
  if (obj.kind === 'NodePool' && obj.apiVersion === 'karpenter.sh/v1') out.nodePools.push(obj);
  else if (obj.kind === 'EC2NodeClass' && obj.apiVersion === 'karpenter.k8s.aws/v1') out.nodeClasses.push(obj);
  else if (obj.kind === 'Deployment' && obj.apiVersion === 'apps/v1') out.deployments.push(obj);
}

const byName = (a: KubeObject, b: KubeObject) => {
  const x = `${a.metadata.name}/${a.metadata.namespace ?? ''}`;
  const y = `${b.metadata.name}/${b.metadata.namespace ?? ''}`;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Each kind sorted by name: synth holds objects in chart order, dist/ in file-name order,
 * and git in path order; the simulation (pod order, say) must not depend on which one it got.
 */
function finished(out: Sorted, where: string, hint: string): DistObjects {
  if (out.nodePools.length === 0) throw new ConfigError(where, [{ path: '', message: `must hold at least one karpenter.sh/v1 NodePool, got none${hint}` }]);
  return { where, nodePools: out.nodePools.sort(byName), nodeClasses: out.nodeClasses.sort(byName), deployments: out.deployments.sort(byName) };
}

/**
 * The NodePools, EC2NodeClasses and Deployments among objects already in memory: an
 * environment synthesized without writing (`npm run diff`), or dist/ at a git revision.
 */
export function distObjects(objects: readonly unknown[], where: string): DistObjects {
  const out: Sorted = { nodePools: [], nodeClasses: [], deployments: [] };
  for (const o of objects) sortInto(out, o, where);
  return finished(out, where, '');
}

/** Reads every `*.yaml` of dist/<env>/ (sorted) and keeps NodePools, EC2NodeClasses and Deployments. */
export function readDist(root: string, env: string): DistObjects {
  const dir = join('dist', env);
  let files: string[];
  try {
    files = readdirSync(join(root, dir)).filter((f) => f.endsWith('.yaml')).sort();
  } catch (err) {
    throw new ConfigError(dir, [{ path: '', message: `cannot be read: ${(err as Error).message} (run \`npm run synth\`)` }]);
  }
  const out: Sorted = { nodePools: [], nodeClasses: [], deployments: [] };
  for (const f of files) {
    const file = join(dir, f);
    for (const [i, doc] of parseAllDocuments(readInputText(join(root, file), file), { uniqueKeys: true }).entries()) {
      if (doc.errors.length > 0) throw new ConfigError(file, [{ path: `document ${i}`, message: `is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}` }]);
      const raw: unknown = doc.toJS();
      if (raw !== null) sortInto(out, raw, file);
    }
  }
  return finished(out, dir, ' (run `npm run synth`)');
}

/** Pods to simulate: Deployments of dist/<env>/, or pods made up on the command line. */
export type PodSource =
  | {
      readonly kind: 'deployments';
      /** Deployment names; all of them when absent. */
      readonly names?: readonly string[];
      /** Replaces every chosen Deployment's replica count. */
      readonly replicas?: number;
    }
  | {
      readonly kind: 'adhoc';
      readonly pods: number;
      readonly cpu: string;
      readonly memory?: string;
      readonly arch?: string;
      readonly spread?: 'zone' | 'hostname';
    };

/** The name ad hoc pods get (with an ordinal); their workload in the plan. */
export const ADHOC_NAME = 'adhoc';

/** Pods of each chosen Deployment at its replicas, named `<deployment>-<ordinal>` in the Deployment's namespace. */
export function podsFromDeployments(deployments: readonly KubeObject[], source: Extract<PodSource, { kind: 'deployments' }>, dir: string): Record<string, unknown>[] {
  const byName = new Map(deployments.map((d) => [d.metadata.name, d]));
  const names = source.names ?? [...byName.keys()];
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    throw new ConfigError(dir, [{ path: '', message: `has no Deployment ${unknown.map(describeValue).join(', ')}; Deployments are: ${[...byName.keys()].join(', ') || 'none'}` }]);
  }
  return names.flatMap((name) => {
    const d = byName.get(name)!;
    const parsed = deploymentSpecSchema.safeParse(d['spec']);
    if (!parsed.success) throw new ConfigError(join(dir, `Deployment.${name}.k8s.yaml`), issuesFromZod(parsed.error, d['spec']).map((i) => ({ ...i, path: `spec.${i.path}` })));
    const spec = parsed.data;
    const replicas = source.replicas ?? spec.replicas ?? 1;
    return Array.from({ length: replicas }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${name}-${i}`, namespace: d.metadata.namespace ?? 'default', labels: spec.template.metadata?.labels ?? {} },
      spec: spec.template.spec,
    }));
  });
}

/** `--pods N --cpu C [--memory M] [--arch A] [--spread zone|hostname]` as pods in the default namespace. */
export function adhocPods(source: Extract<PodSource, { kind: 'adhoc' }>): Record<string, unknown>[] {
  const labels = { 'app.kubernetes.io/name': ADHOC_NAME };
  const spread = source.spread && {
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: source.spread === 'zone' ? 'topology.kubernetes.io/zone' : 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: labels },
      },
    ],
  };
  return Array.from({ length: source.pods }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${ADHOC_NAME}-${i}`, namespace: 'default', labels },
    spec: {
      containers: [{ name: ADHOC_NAME, image: 'pause', resources: { requests: { cpu: source.cpu, ...(source.memory ? { memory: source.memory } : {}) } } }],
      ...(source.arch ? { nodeSelector: { 'kubernetes.io/arch': source.arch } } : {}),
      ...spread,
    },
  }));
}

/** Zones of the environment: `cluster.availabilityZones` when the schema has it and the file sets it, else `<region>a,b,c`. */
export function zonesFor(env: LoadedEnvironment): { readonly zones: readonly string[]; readonly source: string } {
  const given = env.config.cluster.availabilityZones;
  if (given && given.length > 0) return { zones: given, source: `${env.file} cluster.availabilityZones` };
  const region = env.config.cluster.region;
  return { zones: ['a', 'b', 'c'].map((s) => `${region}${s}`), source: `default ${region}a,b,c; set cluster.availabilityZones in ${env.file} to change` };
}

/** Everything one simulation of an environment reads, with where each part came from. */
export interface Prepared {
  readonly env: LoadedEnvironment;
  readonly input: SimulationInput;
  readonly catalogue: Catalogue;
  readonly zonesSource: string;
  readonly daemonSets: readonly DaemonSetOverhead[];
  readonly daemonSetsSource: string;
}

export interface PrepareOptions {
  readonly root: string;
  readonly env: string;
  readonly pods: PodSource;
  /** Times Schedule runs (Karpenter breaks some ties in Go map order). */
  readonly runs: number;
  /** The objects to simulate, when already in memory; else dist/<env>/ is read from disk. */
  readonly dist?: DistObjects;
  /** The environment file, when already loaded; else environments/<env>.yaml is read. */
  readonly environment?: LoadedEnvironment;
  /** The region's catalogue, when already read. */
  readonly catalogue?: Catalogue;
}

export function prepare(opts: PrepareOptions): Prepared {
  const envFile = join('environments', `${opts.env}.yaml`);
  const env = opts.environment ?? loadEnvironment(join(opts.root, envFile), envFile);
  const dist = opts.dist ?? readDist(opts.root, opts.env);
  const catalogue = opts.catalogue ?? readCatalogue(opts.root, env.config.cluster.region);
  const { zones, source: zonesSource } = zonesFor(env);
  const { daemonSets, source: daemonSetsSource } = daemonSetsFor(env.config);
  const pods = opts.pods.kind === 'adhoc' ? adhocPods(opts.pods) : podsFromDeployments(dist.deployments, opts.pods, dist.where);
  return {
    env,
    catalogue,
    zonesSource,
    daemonSets,
    daemonSetsSource,
    input: {
      zones: [...zones],
      nodePools: [...dist.nodePools],
      nodeClasses: [...dist.nodeClasses],
      daemonSets: daemonSets.map(daemonSetObject),
      pods,
      catalogue,
      runs: opts.runs,
    },
  };
}
