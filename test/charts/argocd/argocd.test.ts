import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readOutputs } from '../../../config/outputs.js';
import { CRD_SYNC_OPTIONS, KARPENTER_CHART_REPO, applicationNames } from '../../../charts/argocd/names.js';
import { finalizerErrors } from '../../../charts/argocd/application.js';
import { REPO, byName, copyRepo, parseFiles, readTree, synthAll, type Obj } from './fixtures.js';
import { loadCrdSchemas, schemaProblems } from './crd-schema.js';

const ENVS = readdirSync(join(REPO, 'environments'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
/** The tree Argo CD reads: the committed argocd/ (CI proves it equals a fresh synth). */
const committed = readTree(join(REPO, 'argocd'));
const argoObjects = () => [...committed.values()].filter((o) => o.apiVersion.startsWith('argoproj.io/'));
const crdFiles = () => [...committed].filter(([f]) => f.startsWith('karpenter-crds/'));

let scratch: ReturnType<typeof copyRepo> | undefined;
afterEach(() => {
  scratch?.cleanup();
  scratch = undefined;
});

describe('argocd/: chart values come from the environment and its outputs file', () => {
  it.each(ENVS)('GIVEN environment %s WHEN argocd/ is read THEN its chart Application carries exactly the outputs values', (env) => {
    const outputs = readOutputs(join(REPO, 'infra/outputs', `${env}.json`));
    const app = byName(committed.values(), 'Application', applicationNames(env).chart);
    const envYaml = parse(readFileSync(join(REPO, 'environments', `${env}.yaml`), 'utf8')) as { karpenter?: { replicas?: number } };
    expect(app.spec.source).toMatchObject({ repoURL: KARPENTER_CHART_REPO, path: '.', targetRevision: outputs.karpenterChartVersion });
    expect(app.spec.source.chart).toBeUndefined();
    expect(app.spec.destination.namespace).toBe('kube-system');
    expect(app.spec.source.helm.valuesObject).toEqual({
      settings: { clusterName: outputs.clusterName, interruptionQueue: outputs.interruptionQueueName },
      serviceAccount: { name: 'karpenter' },
      replicas: envYaml.karpenter?.replicas ?? 2,
      nodeSelector: { 'node-role': 'system' },
      controller: { resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '512Mi' } } },
    });
  });

  it('GIVEN a copy of the repo WHEN the outputs change and the cluster switches to IRSA THEN the values follow, and nothing else changes', async () => {
    scratch = copyRepo();
    const before = parseFiles((await synthAll(scratch.root)).argocd.files);
    scratch.edit('infra/outputs/staging.json', (t) =>
      t.replace('"interruptionQueueName": "karpenter-staging"', '"interruptionQueueName": "karpenter-staging-v2"').replace(':karpenter-staging"', ':karpenter-staging-v2"').replace('role/KarpenterController-karpenter-staging', 'role/KarpenterController-other'),
    );
    scratch.edit('environments/staging.yaml', (t) =>
      t.replace('identity: podIdentity', 'identity: irsa').replace('chartVersion: 1.13.1', 'chartVersion: 1.13.1\n  replicas: 3').replace('cluster:\n', 'cluster:\n  systemNodeGroup: {size: 3}\n'),
    );
    const after = parseFiles((await synthAll(scratch.root)).argocd.files);

    const file = `Application.${applicationNames('staging').chart}.k8s.yaml`;
    expect(after.get(file)!.spec.source.helm.valuesObject).toEqual({
      settings: { clusterName: 'karpenter-staging', interruptionQueue: 'karpenter-staging-v2' },
      serviceAccount: { name: 'karpenter', annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/KarpenterController-other' } },
      replicas: 3,
      nodeSelector: { 'node-role': 'system' },
      controller: { resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '512Mi' } } },
    });
    const changed = [...after.keys()].filter((f) => JSON.stringify(after.get(f)) !== JSON.stringify(before.get(f)));
    expect(changed).toEqual([file]);
  });

  it('GIVEN a Karpenter namespace of its own WHEN synthesized THEN the chart Application creates it and the project allows it; kube-system needs neither', async () => {
    scratch = copyRepo();
    scratch.edit('environments/dev.yaml', (t) => t.replace('karpenter:\n', 'karpenter:\n  namespace: karpenter\n'));
    const files = parseFiles((await synthAll(scratch.root)).argocd.files);
    const chart = files.get(`Application.${applicationNames('dev').chart}.k8s.yaml`)!;
    expect(chart.spec.destination.namespace).toBe('karpenter');
    expect(chart.spec.syncPolicy.syncOptions).toEqual(['CreateNamespace=true']);
    expect(files.get('AppProject.karpenter-gitops.k8s.yaml')!.spec.destinations).toContainEqual({ name: 'karpenter-dev', namespace: 'karpenter' });
    expect(byName(committed.values(), 'Application', applicationNames('prod').chart).spec.syncPolicy.syncOptions).toBeUndefined();
  });

  it('GIVEN the chart values this project sets WHEN compared with the chart\'s own values.yaml THEN every path exists there', () => {
    const chartValues = parse(readFileSync(join(REPO, 'test', 'fixtures', 'karpenter-chart', 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const paths = (o: unknown, prefix: string[] = []): string[][] =>
      o !== null && typeof o === 'object' && !Array.isArray(o) && !['annotations', 'resources', 'nodeSelector'].includes(prefix.at(-1)!)
        ? Object.entries(o).flatMap(([k, v]) => paths(v, [...prefix, k]))
        : [prefix];
    const values = byName(committed.values(), 'Application', applicationNames('prod').chart).spec.source.helm.valuesObject;
    for (const path of [...paths(values), ['serviceAccount', 'annotations'], ['nodeSelector']]) {
      const found = path.reduce<unknown>((cur, k) => (cur && typeof cur === 'object' && k in cur ? (cur as Record<string, unknown>)[k] : undefined), chartValues);
      expect(found, path.join('.')).not.toBeUndefined();
    }
  });
});

/** Helm's coalescing of user values into the chart's: maps merge key by key, anything else is replaced. */
function helmMerge(base: unknown, over: unknown): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) return over === undefined ? base : over;
  return Object.fromEntries([...new Set([...Object.keys(base), ...Object.keys(over)])].map((k) => [k, helmMerge(base[k], over[k])]));
}

describe('argocd/: the controller runs on the system node group', () => {
  const chartValues = () => parse(readFileSync(join(REPO, 'test', 'fixtures', 'karpenter-chart', 'values.yaml'), 'utf8')) as Record<string, any>;

  it('GIVEN the vendored chart values WHEN read THEN they are the released 1.13.1 file (image tag and digest of 1.13.1)', () => {
    expect(chartValues().controller.image).toMatchObject({ tag: '1.13.1', digest: 'sha256:4d5d576e8ba007948869b379740554a7cd8642ad2bbaa7ea9cf907c141a31f5d' });
  });

  it.each(ENVS)('GIVEN environment %s WHEN its values are merged into the chart\'s as Helm does THEN the controller is pinned to the system labels, stays Linux, and still avoids Karpenter nodes', (env) => {
    const envYaml = parse(readFileSync(join(REPO, 'environments', `${env}.yaml`), 'utf8')) as { cluster: { systemNodeGroup?: { labels?: Record<string, string> } } };
    const values = byName(committed.values(), 'Application', applicationNames(env).chart).spec.source.helm.valuesObject;
    const merged = helmMerge(chartValues(), values) as Record<string, any>;
    expect(merged.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', ...(envYaml.cluster.systemNodeGroup?.labels ?? { 'node-role': 'system' }) });
    expect(merged.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }] },
    ]);
    // One controller per node (required anti-affinity): the schema refuses more replicas than system nodes.
    expect(merged.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual([{ topologyKey: 'kubernetes.io/hostname' }]);
  });

  it('GIVEN system node group labels of its own WHEN synthesized THEN the controller\'s nodeSelector is exactly those labels', async () => {
    scratch = copyRepo();
    scratch.edit('environments/dev.yaml', (t) => t.replace('  systemNodeGroup:\n', '  systemNodeGroup:\n    labels: {pool: platform, example.com/tier: system}\n'));
    const files = parseFiles((await synthAll(scratch.root)).argocd.files);
    expect(files.get(`Application.${applicationNames('dev').chart}.k8s.yaml`)!.spec.source.helm.valuesObject.nodeSelector).toEqual({ pool: 'platform', 'example.com/tier': 'system' });
  });
});

describe('argocd/: snapshots', () => {
  it.each(ENVS)('GIVEN environment %s WHEN argocd/ is read THEN its Applications match the snapshot', (env) => {
    const names = Object.values(applicationNames(env));
    const files = [...committed].filter(([, o]) => o.kind === 'Application' && names.includes(o.metadata.name));
    expect(files.map(([f]) => f).sort()).toEqual(names.map((n) => `Application.${n}.k8s.yaml`).sort());
    expect(Object.fromEntries(files.map(([f]) => [f, readFileSync(join(REPO, 'argocd', f), 'utf8')]))).toMatchSnapshot();
  });

  it('GIVEN the shared objects WHEN argocd/ is read THEN the AppProjects and the root Application match the snapshot', () => {
    const shared = [...committed].filter(([f, o]) => !f.includes('/') && !o.metadata.labels?.['karpenter-gitops/environment']);
    expect(Object.fromEntries(shared.map(([f]) => [f, readFileSync(join(REPO, 'argocd', f), 'utf8')]))).toMatchSnapshot();
  });
});

/**
 * What a cascading delete of an Application would remove, among CRDs. Assumes the
 * worst: `argocd app delete` cascades by default (it adds the resources finalizer
 * itself), so the absence of the finalizer alone is not enough; a CRD survives only if
 * the Application does not deploy it, or the CRD says Delete=false.
 */
function crdsACascadingDeleteWouldRemove(app: { spec?: any }, tree: Map<string, Obj>, repoRoot: string): string[] {
  const source = app.spec.source;
  let deployed: Obj[];
  if (source.repoURL === KARPENTER_CHART_REPO) {
    // Argo CD renders charts with --include-crds unless skipCrds: then the chart's CRDs are the Application's.
    const chartCrds = join(repoRoot, 'crds/karpenter'); // the same files as the chart's crds/, without our annotations
    deployed = source.helm?.skipCrds === true ? [] : readdirSync(chartCrds).map((f) => parse(readFileSync(join(chartCrds, f), 'utf8')) as Obj);
  } else if (source.path.startsWith('argocd/')) {
    const sub = source.path.slice('argocd/'.length);
    deployed = [...tree].filter(([f]) => f.startsWith(`${sub}/`) && (source.directory?.recurse || !f.slice(sub.length + 1).includes('/'))).map(([, o]) => o);
  } else {
    const dir = join(repoRoot, source.path);
    deployed = readdirSync(dir).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Obj));
  }
  return deployed
    .filter((o) => o.kind === 'CustomResourceDefinition')
    .filter((o) => !(o.metadata.annotations?.['argocd.argoproj.io/sync-options'] ?? '').split(',').includes('Delete=false'))
    .map((o) => o.metadata.name);
}

describe('argocd/: deleting or renaming an Application never deletes the Karpenter CRDs', () => {
  it('GIVEN every Argo CD object WHEN read THEN none carries a finalizer, so a plain delete or rename never cascades', () => {
    for (const o of argoObjects()) {
      expect(o.metadata.finalizers, `${o.kind} ${o.metadata.name}`).toBeUndefined();
      if (o.kind === 'ApplicationSet') expect(o.spec.template.metadata.finalizers).toBeUndefined();
    }
  });

  it('GIVEN a rendered Application with a finalizer THEN synth\'s own check names it (and passes the committed objects)', () => {
    const app = byName(committed.values(), 'Application', applicationNames('prod').chart);
    const withFinalizer = { ...app, metadata: { ...app.metadata, finalizers: ['resources-finalizer.argocd.argoproj.io'] } };
    expect(finalizerErrors([...argoObjects(), withFinalizer])).toEqual([
      `Application "${app.metadata.name}" must have no finalizers (a cascading delete would remove what it deployed), got resources-finalizer.argocd.argoproj.io`,
    ]);
    expect(finalizerErrors(argoObjects())).toEqual([]);
  });

  it('GIVEN every Application WHEN it is deleted with cascade THEN no Karpenter CRD would be deleted', () => {
    const apps = argoObjects().filter((o) => o.kind === 'Application' && o.metadata.name !== 'karpenter-gitops-root');
    expect(apps).toHaveLength(ENVS.length * 3);
    for (const app of apps) expect(crdsACascadingDeleteWouldRemove(app, committed, REPO), app.metadata.name).toEqual([]);
  });

  it('GIVEN the check above WHEN a chart Application did not skip CRDs THEN it would report every CRD (the check can fail)', () => {
    const app = byName(committed.values(), 'Application', applicationNames('prod').chart);
    const unsafe = { spec: { ...app.spec, source: { ...app.spec.source, helm: { ...app.spec.source.helm, skipCrds: false } } } };
    expect(crdsACascadingDeleteWouldRemove(unsafe, committed, REPO).sort()).toEqual(crdFiles().map(([, o]) => o.metadata.name).sort());
    const stripped = new Map([...committed].map(([f, o]) => [f, { ...o, metadata: { ...o.metadata, annotations: {} } }]));
    const crdApp = byName(committed.values(), 'Application', applicationNames('prod').crds);
    expect(crdsACascadingDeleteWouldRemove(crdApp, stripped, REPO)).toHaveLength(4);
  });

  it('GIVEN argocd/karpenter-crds WHEN compared with crds/karpenter THEN it is every vendored CRD, unchanged but for Prune=false,Delete=false', () => {
    const vendored = readdirSync(join(REPO, 'crds/karpenter')).map((f) => parse(readFileSync(join(REPO, 'crds/karpenter', f), 'utf8')) as Obj);
    const synced = new Map(crdFiles().map(([, o]) => [o.metadata.name, o]));
    expect([...synced.keys()].sort()).toEqual(vendored.map((v) => v.metadata.name).sort());
    for (const v of vendored) {
      expect(synced.get(v.metadata.name)).toEqual({
        ...v,
        metadata: { ...v.metadata, annotations: { ...v.metadata.annotations, 'argocd.argoproj.io/sync-options': CRD_SYNC_OPTIONS } },
      });
    }
    expect(CRD_SYNC_OPTIONS).toBe('Prune=false,Delete=false');
  });

  it('GIVEN the per-environment Applications WHEN read THEN CRDs are never pruned and an empty dist/ never prunes every NodePool', () => {
    for (const env of ENVS) {
      const names = applicationNames(env);
      expect(byName(committed.values(), 'Application', names.crds).spec.syncPolicy.automated.prune).toBe(false);
      const dist = byName(committed.values(), 'Application', names.dist);
      expect(dist.spec.syncPolicy.automated).toMatchObject({ prune: true, allowEmpty: false });
      expect(dist.spec.syncPolicy.syncOptions).toEqual(['SkipDryRunOnMissingResource=true', 'PruneLast=true', 'RespectIgnoreDifferences=true']);
      // Scaling inflate by hand (the way to try Karpenter) survives self-heal; nothing else is ignored.
      expect(dist.spec.ignoreDifferences).toEqual([{ group: 'apps', kind: 'Deployment', name: 'inflate', namespace: 'default', jsonPointers: ['/spec/replicas'] }]);
      expect(dist.spec.source).toMatchObject({ path: `dist/${env}`, directory: { recurse: false } });
    }
  });
});

describe('argocd/: ordering', () => {
  it('GIVEN each environment WHEN read THEN CRDs sync before the chart, and the chart before dist/ (sync waves)', () => {
    for (const env of ENVS) {
      const wave = (n: string) => Number(byName(committed.values(), 'Application', n).metadata.annotations!['argocd.argoproj.io/sync-wave']);
      const names = applicationNames(env);
      expect(wave(names.crds)).toBeLessThan(wave(names.chart));
      expect(wave(names.chart)).toBeLessThan(wave(names.dist));
    }
    for (const p of argoObjects().filter((o) => o.kind === 'AppProject')) expect(p.metadata.annotations!['argocd.argoproj.io/sync-wave']).toBe('-2');
  });

  it('GIVEN dist/ WHEN read THEN NodeClasses, NodePools and workloads carry waves 0, 1, 2 and CPU limits are strings', () => {
    for (const env of ENVS) {
      for (const o of readTree(join(REPO, 'dist', env)).values()) {
        const wave = o.metadata.annotations?.['argocd.argoproj.io/sync-wave'];
        expect(wave, `${env} ${o.kind}`).toBe(o.kind === 'EC2NodeClass' ? '0' : o.kind === 'NodePool' ? '1' : '2');
        if (o.kind === 'NodePool' && o.spec.limits?.cpu !== undefined) expect(typeof o.spec.limits.cpu).toBe('string');
      }
    }
  });

  it('GIVEN the NodePool and EC2NodeClass CRDs WHEN every default they declare is listed THEN dist/ spells each one out (no permanent OutOfSync)', () => {
    const defaults = (schema: any, path: string[] = []): string[][] =>
      Object.entries(schema.properties ?? {}).flatMap(([k, s]: [string, any]) => [...(s.default !== undefined ? [[...path, k]] : []), ...defaults(s, [...path, k])]);
    for (const [kind, file] of [
      ['NodePool', 'karpenter.sh_nodepools.yaml'],
      ['EC2NodeClass', 'karpenter.k8s.aws_ec2nodeclasses.yaml'],
    ] as const) {
      const crd = parse(readFileSync(join(REPO, 'crds/karpenter', file), 'utf8'));
      const specDefaults = defaults(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec);
      for (const env of ENVS) {
        for (const o of [...readTree(join(REPO, 'dist', env)).values()].filter((x) => x.kind === kind)) {
          for (const path of specDefaults) {
            // A default applies only where its parent object exists.
            const parent = path.slice(0, -1).reduce<any>((cur, k) => cur?.[k], o.spec);
            if (parent !== undefined && !Array.isArray(parent)) expect(parent[path.at(-1)!], `${env} ${kind} ${o.metadata.name} spec.${path.join('.')}`).not.toBeUndefined();
          }
        }
      }
    }
  });
});

describe('argocd/: AppProject', () => {
  it('GIVEN the project WHEN read THEN it allows this repository and the Karpenter chart only, the namespaces the chart and dist/ write to, and the cluster-scoped kinds they render', () => {
    const project = byName(committed.values(), 'AppProject', 'karpenter-gitops');
    expect(project.spec.sourceRepos).toEqual(['https://git.example.com/platform/karpenter-gitops.git', KARPENTER_CHART_REPO]);
    expect(project.spec.destinations).toEqual(
      // dev has no workloads of its own; staging and prod run the example checkout-api in namespace checkout.
      ENVS.flatMap((env) => [...(env === 'dev' ? [] : ['checkout']), 'default', 'kube-node-lease', 'kube-system'].map((namespace) => ({ name: `karpenter-${env}`, namespace }))),
    );
    expect(project.spec.clusterResourceWhitelist).toEqual([
      { group: '', kind: 'Namespace' },
      { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
      { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass' },
      { group: 'karpenter.sh', kind: 'NodePool' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' },
    ]);
    expect(argoObjects().some((o) => o.metadata.name === 'karpenter' && ['AppProject', 'PodDisruptionBudget'].includes(o.kind))).toBe(false);
  });

  it('GIVEN every Argo CD object WHEN checked against the vendored Argo CD CRDs THEN it has no unknown field, wrong type or missing required field', () => {
    const schemas = loadCrdSchemas(...['application-crd.yaml', 'appproject-crd.yaml'].map((f) => join(REPO, 'crds/argocd', f)));
    for (const o of argoObjects()) expect(schemaProblems(o, schemas), `${o.kind} ${o.metadata.name}`).toEqual([]);
    expect(schemaProblems({ ...byName(committed.values(), 'Application', 'prod-dist'), spec: { project: 'x', destination: {}, sorce: {} } }, schemas)).toEqual(['.spec: unknown field "sorce"']);
  });
});

describe('argocd/: fleets (ApplicationSets)', () => {
  let fleet: Map<string, Obj>;
  beforeAll(async () => {
    const s = copyRepo();
    try {
      s.write(
        'gitops.yaml',
        'repository: {url: "https://git.example.com/platform/karpenter-gitops.git", targetRevision: v2}\nenvironments:\n  dev: {destination: {server: "https://dev.example.com"}}\n  staging: {fleet: {}}\n  prod: {fleet: {matchLabels: {region: us-east-1}}}\n',
      );
      s.edit('environments/prod.yaml', (t) => t.replace('identity: podIdentity', 'identity: irsa'));
      fleet = parseFiles((await synthAll(s.root)).argocd.files);
    } finally {
      s.cleanup();
    }
  });

  it('GIVEN prod and staging as fleets WHEN synthesized THEN each gets one ApplicationSet per Application and no Applications', () => {
    const kinds = [...fleet.values()].filter((o) => o.apiVersion.startsWith('argoproj.io')).map((o) => `${o.kind} ${o.metadata.name}`);
    for (const env of ['prod', 'staging']) {
      for (const n of Object.values(applicationNames(env))) {
        expect(kinds).toContain(`ApplicationSet ${n}`);
        expect(kinds).not.toContain(`Application ${n}`);
      }
    }
    for (const n of Object.values(applicationNames('dev'))) expect(kinds).toContain(`Application ${n}`);
  });

  it('GIVEN the prod fleet WHEN read THEN clusters are selected by environment label, values come from cluster annotations, and deletion preserves resources', () => {
    const set = byName(fleet.values(), 'ApplicationSet', applicationNames('prod').chart);
    expect(set.spec.generators).toEqual([{ clusters: { selector: { matchLabels: { environment: 'prod', region: 'us-east-1' } } } }]);
    expect(set.spec).toMatchObject({ goTemplate: true, goTemplateOptions: ['missingkey=error'], syncPolicy: { preserveResourcesOnDeletion: true } });
    expect(set.spec.template.metadata.name).toBe('prod-{{ .nameNormalized }}-karpenter');
    expect(set.spec.template.spec.destination).toEqual({ server: '{{ .server }}', namespace: 'kube-system' });
    expect(set.spec.template.spec.source.helm.valuesObject).toEqual({
      settings: {
        clusterName: '{{ if .metadata.annotations.karpenterClusterName }}{{ .metadata.annotations.karpenterClusterName }}{{ else }}{{ .metadata.annotations.karpenterClusterName_must_not_be_empty }}{{ end }}',
        interruptionQueue:
          '{{ if .metadata.annotations.karpenterInterruptionQueue }}{{ .metadata.annotations.karpenterInterruptionQueue }}{{ else }}{{ .metadata.annotations.karpenterInterruptionQueue_must_not_be_empty }}{{ end }}',
      },
      serviceAccount: {
        name: 'karpenter',
        annotations: {
          'eks.amazonaws.com/role-arn':
            '{{ if .metadata.annotations.karpenterControllerRoleArn }}{{ .metadata.annotations.karpenterControllerRoleArn }}{{ else }}{{ .metadata.annotations.karpenterControllerRoleArn_must_not_be_empty }}{{ end }}',
        },
      },
      replicas: 2,
      nodeSelector: { 'node-role': 'system' },
      controller: { resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '512Mi' } } },
    });
    const dist = byName(fleet.values(), 'ApplicationSet', applicationNames('prod').dist);
    expect(dist.spec.template.spec.source).toEqual({ repoURL: 'https://git.example.com/platform/karpenter-gitops.git', targetRevision: 'v2', path: 'dist/prod', directory: { recurse: false } });
    const project = byName(fleet.values(), 'AppProject', 'karpenter-gitops');
    expect(project.spec.destinations).toContainEqual({ server: '*', namespace: 'kube-system' });
    expect(project.spec.destinations).toContainEqual({ server: 'https://dev.example.com', namespace: 'kube-node-lease' });
  });

  /** Renders a template with Go's text/template, as the ApplicationSet controller does (gotemplate/main.go). */
  const renderGo = (template: unknown, annotations: Record<string, string>) =>
    spawnSync('go', ['run', '.'], {
      cwd: join(import.meta.dirname, 'gotemplate'),
      input: JSON.stringify({ template, params: { name: 'arn:aws:eks:us-east-1:111122223333:cluster/use1-a', nameNormalized: 'use1-a', server: 'https://use1-a.example.com', metadata: { labels: { environment: 'prod' }, annotations } } }),
      encoding: 'utf8',
    });

  // Go is required by npm test anyway (it builds the kube-apiserver), so this never skips.
  it('GIVEN a labelled cluster secret WHEN Go renders the prod chart template THEN its annotations become the values; a missing one fails the render', () => {
    const set = byName(fleet.values(), 'ApplicationSet', applicationNames('prod').chart);
    const annotations = { karpenterClusterName: 'prod-use1-a', karpenterInterruptionQueue: 'prod-use1-a', karpenterControllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod-use1-a' };
    const ok = renderGo(set.spec.template, annotations);
    expect(ok.stderr).toBe('');
    const app = JSON.parse(ok.stdout);
    expect(app.metadata.name).toBe('prod-use1-a-karpenter');
    expect(app.spec.destination.server).toBe('https://use1-a.example.com');
    expect(app.spec.source.helm.valuesObject.settings).toEqual({ clusterName: 'prod-use1-a', interruptionQueue: 'prod-use1-a' });
    expect(app.spec.source.helm.valuesObject.serviceAccount.annotations).toEqual({ 'eks.amazonaws.com/role-arn': annotations.karpenterControllerRoleArn });
    const { karpenterInterruptionQueue: _q, ...missing } = annotations;
    const failed = renderGo(set.spec.template, missing);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('map has no entry for key "karpenterInterruptionQueue"');
  });

  it.each(['karpenterClusterName', 'karpenterInterruptionQueue', 'karpenterControllerRoleArn'])(
    'GIVEN a cluster secret whose %s annotation is present but empty WHEN Go renders the prod chart template THEN the render fails naming it',
    (key) => {
      const set = byName(fleet.values(), 'ApplicationSet', applicationNames('prod').chart);
      const annotations = { karpenterClusterName: 'prod-use1-a', karpenterInterruptionQueue: 'prod-use1-a', karpenterControllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-prod-use1-a', [key]: '' };
      const failed = renderGo(set.spec.template, annotations);
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain(`map has no entry for key "${key}_must_not_be_empty"`);
    },
  );

  it('GIVEN the ApplicationSets WHEN checked against the vendored ApplicationSet CRD THEN they have no unknown field', () => {
    const schemas = loadCrdSchemas(join(REPO, 'crds/argocd/applicationset-crd.yaml'), join(REPO, 'crds/argocd/application-crd.yaml'), join(REPO, 'crds/argocd/appproject-crd.yaml'));
    for (const o of [...fleet.values()].filter((x) => x.apiVersion.startsWith('argoproj.io'))) expect(schemaProblems(o, schemas), `${o.kind} ${o.metadata.name}`).toEqual([]);
  });
});

describe('npm run synth with argocd/', () => {
  const run = (root: string) => spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'charts/main.ts'), '--root', root], { encoding: 'utf8' });

  it('GIVEN a bad gitops.yaml WHEN synthesizing THEN it exits 1 with the message and writes neither dist/ nor argocd/', () => {
    scratch = copyRepo();
    scratch.edit('gitops.yaml', (t) => t.replace('destination: {name: karpenter-prod}', 'destination: {server: "http://x"}'));
    const r = run(scratch.root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('error: invalid input, nothing was written\ngitops.yaml: environments.prod.destination.server: must be an https:// API server URL, got "http://x"\n');
    expect(existsSync(join(scratch.root, 'dist'))).toBe(false);
    expect(existsSync(join(scratch.root, 'argocd'))).toBe(false);
  });

  it('GIVEN a chart version the vendored CRDs are not WHEN synthesizing THEN the error says which version to vendor', () => {
    scratch = copyRepo();
    scratch.edit('environments/dev.yaml', (t) => t.replace('karpenter:\n', 'karpenter:\n  chartVersion: 1.14.0\n'));
    scratch.edit('infra/outputs/dev.json', (t) => t.replace('"karpenterChartVersion": "1.13.1"', '"karpenterChartVersion": "1.14.0"'));
    const r = run(scratch.root);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'environments/dev.yaml: karpenter.chartVersion: must equal the version of the vendored Karpenter CRDs (crds/karpenter/) that Argo CD installs, 1.13.1, got "1.14.0"; vendor the new CRDs first\n',
    );
  });

  it('GIVEN the repo inputs WHEN synthesized twice THEN argocd/ is byte-identical and equals the committed tree', () => {
    scratch = copyRepo();
    expect(run(scratch.root).status).toBe(0);
    const first = execFileSync('sh', ['-c', 'cd argocd && find . -type f | sort | xargs sha256sum'], { cwd: scratch.root, encoding: 'utf8' });
    expect(run(scratch.root).status).toBe(0);
    expect(execFileSync('sh', ['-c', 'cd argocd && find . -type f | sort | xargs sha256sum'], { cwd: scratch.root, encoding: 'utf8' })).toBe(first);
    expect(execFileSync('sh', ['-c', 'cd argocd && find . -type f | sort | xargs sha256sum'], { cwd: REPO, encoding: 'utf8' })).toBe(first);
  });
});
