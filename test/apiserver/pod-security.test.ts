// Issue 13 against the real kube-apiserver: the workload examples, NodeOverlays and object
// metadata are accepted with Pod Security "restricted" in force, and the check bites.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { attachApiServer, dryRunApply, type ApiServerClient } from '../support/apiserver.js';
import { DOC_WORKLOADS, examplesText, synthExamples, type Obj } from '../fixtures/workload-examples.js';
import { enforceRestricted } from './pod-security-labels.js';

const dir = mkdtempSync(join(tmpdir(), 'pod-security-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function write(obj: unknown): string {
  const file = join(dir, `${n++}.yaml`);
  writeFileSync(file, stringify(obj));
  return file;
}

/** The examples environment, plus what issue 13 added for the NodePool, EC2NodeClass and NodeOverlay objects. */
function examples(): Obj[] {
  const env = parse(examplesText());
  env.nodePools[0].metadata = { labels: { 'example.com/team': 'platform' }, annotations: { 'kubernetes.io/description': 'General purpose, Spot first' } };
  env.nodeClasses[0].metadata = { annotations: { 'example.com/cost-centre': 'cc-1234' } };
  env.nodeOverlays = [
    { name: 'savings-plan-m7i', requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }], priceAdjustment: '-28%', weight: 10 },
    { name: 'hugepages', requirements: [{ key: 'karpenter.k8s.aws/instance-memory', operator: 'Gte', values: ['65536'] }], capacity: { 'hugepages-2Mi': '1Gi' } },
  ];
  env.workloads.push({ name: 'legacy-root', namespace: 'legacy', image: 'public.ecr.aws/docker/library/nginx:1.27', podSecurity: 'baseline', podSecurityContext: { runAsNonRoot: false } });
  return synthExamples(stringify(env)).objects;
}

/** A Pod made from a Deployment's template: PodSecurity *enforces* on Pods (it only warns on Deployments). */
const podOf = (d: Obj, namespace = d.metadata.namespace) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: d.metadata.name, namespace, labels: d.spec.template.metadata.labels },
  spec: d.spec.template.spec,
});

describe('Pod Security "restricted" on the real kube-apiserver', () => {
  let server: ApiServerClient;
  const objects = examples();
  const deployments = objects.filter((o) => o.kind === 'Deployment');

  beforeAll(async () => {
    server = attachApiServer(inject('kubeconfig'), inject('kubeBinDir'));
    // The emitted Namespaces are created for real, so their own labels are what is enforced.
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) {
      const r = await server.kubectl(['apply', '-f', write(ns)]);
      if (r.code !== 0) throw new Error(`cannot create namespace ${ns.metadata.name}: ${r.stderr}`);
    }
    const created = await server.kubectl(['create', 'namespace', 'psa-proof']);
    if (created.code !== 0 && !created.stderr.includes('AlreadyExists')) throw new Error(created.stderr);
    await enforceRestricted(server, ['psa-proof']);
    // Pods name a PriorityClass that must exist (Priority admission); the others need none.
    const pc = await server.kubectl(['apply', '-f', write({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'business-critical' }, value: 1000000 })]);
    if (pc.code !== 0) throw new Error(pc.stderr);
  });

  it('GIVEN the namespaces synth emits THEN the server holds them with the restricted labels (baseline where a workload asked)', async () => {
    const r = await server.kubectl(['get', 'namespace', 'examples', 'legacy', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}{" "}{end}']);
    expect(r.stdout.trim()).toBe('examples=restricted legacy=baseline');
  });

  it('GIVEN a Deployment without the defaults in a restricted namespace THEN the server warns (the suite fails on any warning)', async () => {
    const bare = { ...deployments.find((d) => d.metadata.name === 'arm64-only')!, metadata: { name: 'bare', namespace: 'psa-proof' } };
    const spec = bare.spec.template.spec;
    bare.spec = { ...bare.spec, template: { ...bare.spec.template, spec: { ...spec, securityContext: undefined, containers: [{ ...spec.containers[0], securityContext: undefined }] } } };
    const res = await dryRunApply(server, write(bare));
    expect(res.ok).toBe(false);
    expect(res.warnings).toEqual([
      'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "arm64-only" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "arm64-only" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "arm64-only" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "arm64-only" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ]);
  });

  it('GIVEN the baseline workload\'s pod in a restricted namespace THEN refused; in its own baseline namespace THEN admitted', async () => {
    const legacy = deployments.find((d) => d.metadata.name === 'legacy-root')!;
    const refused = await dryRunApply(server, write(podOf(legacy, 'psa-proof')));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('violates PodSecurity "restricted:latest": runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)');
    const admitted = await dryRunApply(server, write(podOf(legacy)));
    expect({ ok: admitted.ok, stderr: admitted.stderr.trim(), warnings: admitted.warnings }).toEqual({ ok: true, stderr: '', warnings: [] });
  });

  it.each(objects.filter((o) => o.kind !== 'Namespace').map((o) => [`${o.kind}/${o.metadata.name}`, o] as const))('%s is accepted with no warning', async (_name, obj) => {
    const res = await dryRunApply(server, write(obj));
    expect({ ok: res.ok, stderr: res.stderr.trim(), warnings: res.warnings }).toEqual({ ok: true, stderr: '', warnings: [] });
  });

  it.each(DOC_WORKLOADS.map((w) => [w.name, w] as const))("Karpenter's %s example: the Deployment the API server would store has the docs' fields", async (name, w) => {
    const d = deployments.find((o) => o.metadata.name === name)!;
    const res = await server.kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', write(d)]);
    expect(res.code).toBe(0);
    const stored = JSON.parse(res.stdout).spec.template.spec;
    const own = w as Record<string, any>;
    if (own.nodeSelector) expect(stored.nodeSelector).toEqual(own.nodeSelector);
    if (own.affinity?.podAffinity) expect(stored.affinity.podAffinity).toEqual(own.affinity.podAffinity);
    if (own.affinity?.podAntiAffinity) expect(stored.affinity.podAntiAffinity).toEqual(own.affinity.podAntiAffinity);
    for (const [i, term] of (own.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).entries()) {
      expect(stored.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[i].matchExpressions).toEqual(expect.arrayContaining(term.matchExpressions));
    }
    for (const c of own.topologySpreadConstraints ?? []) expect(stored.topologySpreadConstraints).toContainEqual(expect.objectContaining(c));
  });

  it.each(deployments.map((d) => [d.metadata.name, d] as const))('a Pod of %s is admitted where its namespace enforces its level', async (_name, d) => {
    const res = await dryRunApply(server, write(podOf(d)));
    expect({ ok: res.ok, stderr: res.stderr.trim(), warnings: res.warnings }).toEqual({ ok: true, stderr: '', warnings: [] });
  });
});
