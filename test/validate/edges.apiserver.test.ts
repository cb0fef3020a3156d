import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toYaml, type Manifest } from '../../charts/render.js';
import { dryRunApply, type DryRunResult } from '../support/apiserver.js';
import { mapLimit, useApiServer } from './apiserver-client.js';
import { synthesizeInput } from './arbitraries.js';
import { edgeFixtures, environmentFor } from './fixtures.js';

/**
 * The edge corpus against the real kube-apiserver 1.36: what synth accepts at the edge of
 * each project rule, the server accepts too (no false rejection hides behind a rule that
 * is stricter than needed), and the Kubernetes rules the workload schema mirrors are
 * the server's own (it refuses exactly what synth refuses).
 */
describe('edge corpus (real API server)', () => {
  const server = useApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'edges-apiserver-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const apply = (name: string, objects: readonly unknown[]) => {
    const file = join(dir, `${name.replace(/\W/g, '_')}.yaml`);
    writeFileSync(file, objects.map((o) => toYaml(o)).join('---\n'));
    return dryRunApply(server(), file);
  };

  const inside = edgeFixtures('inside');
  const results = new Map<string, DryRunResult>();
  beforeAll(async () => {
    const runs = await mapLimit(inside, 3, (f) => apply(f.name, synthesizeInput(environmentFor(f))));
    inside.forEach((f, i) => results.set(f.name, runs[i]!));
  });

  it.each(inside.map((f) => [f.name, f] as const))('GIVEN %s WHEN every rendered object is applied with --dry-run=server --validate=strict THEN all are accepted', (name) => {
    const r = results.get(name)!;
    expect({ ok: r.ok, stderr: r.stderr.trim(), warnings: r.warnings }).toEqual({ ok: true, stderr: '', warnings: [] });
  });

  /** The workload-edges Deployment, changed by `edit`, as the server sees it. */
  async function deploymentWith(edit: (container: Record<string, any>) => void): Promise<DryRunResult> {
    const f = inside.find((x) => x.name === 'inside/workload-edges.yaml')!;
    const deployment = structuredClone(synthesizeInput(environmentFor(f)).find((o) => o.kind === 'Deployment' && o.metadata.name === 'api')) as Manifest & { spec: any };
    edit(deployment.spec.template.spec.containers[0]);
    return apply(`deployment-${Math.random().toString(36).slice(2)}`, [deployment]);
  }

  it.each([
    ['an env var name with "="', (c: any) => c.env.push({ name: 'A=B', value: 'x' }), "a valid environment variable name must consist only of printable ASCII characters other than '='"],
    ['an unknown resource name', (c: any) => (c.resources.requests.cpus = '1'), 'must be a standard resource for containers'],
    ['a request above its limit', (c: any) => (c.resources.requests.memory = '2Gi'), 'must be less than or equal to memory limit of 1Gi'],
    ['a negative request', (c: any) => (c.resources.requests['ephemeral-storage'] = '-1'), 'must be greater than or equal to 0'],
  ])('GIVEN the Deployment with %s THEN the API server refuses it as synth does', async (_what, edit, message) => {
    const r = await deploymentWith(edit);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(message);
  });
});
