// Smoke test of the real-API-server harness (test/support/apiserver*.ts):
// the vendored NodePool CRD is installed and the server validates against it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { attachApiServer, dryRunApply } from '../support/apiserver.js';

const server = attachApiServer(inject('kubeconfig'), inject('kubeBinDir'));
const dir = mkdtempSync(join(tmpdir(), 'harness-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function nodePool(operator: string, extraSpec = ''): string {
  return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: smoke
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: kubernetes.io/arch
          operator: ${operator}
          values: ["amd64"]
${extraSpec}  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
  limits:
    cpu: "100"
`;
}

function write(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('real kube-apiserver harness', () => {
  test('GIVEN the NodePool CRD WHEN a valid NodePool is dry-run applied THEN the server accepts it', async () => {
    const res = await dryRunApply(server, write('valid.yaml', nodePool('In')));

    expect(res).toMatchObject({ ok: true, code: 0, warnings: [] });
    expect(res.stdout.trim()).toBe('nodepool.karpenter.sh/smoke created (server dry run)');
  });

  test('GIVEN the NodePool CRD WHEN an operator is not in the enum THEN the server rejects it with the schema message', async () => {
    const res = await dryRunApply(server, write('bad-operator.yaml', nodePool('Foo')));

    expect(res.ok).toBe(false);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'spec.template.spec.requirements[0].operator: Unsupported value: "Foo": supported values: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    );
  });

  test('GIVEN --validate=strict WHEN a NodePool has an unknown field THEN it is rejected, not silently dropped', async () => {
    const res = await dryRunApply(server, write('unknown-field.yaml', nodePool('In', '  bogusField: true\n')));

    expect(res.ok).toBe(false);
    expect(res.stderr).toContain('unknown field "spec.bogusField"');
  });

  test('GIVEN the harness WHEN listing namespaces THEN argocd exists for Argo CD objects', async () => {
    const res = await server.kubectl(['get', 'namespace', 'argocd', '-o', 'name']);

    expect(res).toMatchObject({ code: 0, stdout: 'namespace/argocd\n' });
  });
});
