import { describe, expect, it } from 'vitest';
import { environmentOrigin, synthesize } from '../../charts/synth.js';
import type { Manifest } from '../../charts/render.js';
import { ManifestError, parsePath, validateManifests } from '../../validate/manifests.js';
import { REPO } from '../support/repo.js';

/** The shipped prod environment, rendered; `break_` then spoils one object the way only the CRD notices. */
function violations(break_: (objects: any[]) => void): string[] {
  const prod = synthesize({ root: REPO, only: ['prod'] }).environments[0]!;
  const objects = structuredClone(prod.objects) as Manifest[];
  break_(objects);
  try {
    validateManifests([{ dir: 'dist/prod', objects, origin: environmentOrigin(prod.environment) }]);
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as Error).message.split('\n');
  }
  throw new Error('expected a ManifestError');
}
const pool = (objects: any[], name: string) => objects.find((o) => o.kind === 'NodePool' && o.metadata.name === name);
const nodeClass = (objects: any[], name: string) => objects.find((o) => o.kind === 'EC2NodeClass' && o.metadata.name === name);

describe('CRD and CEL violations are reported where the user wrote the field', () => {
  it('GIVEN a pool\'s own requirement the CRD rejects WHEN validated THEN the line names the environment file, the requirement the user wrote, the CRD message and the value', () => {
    const lines = violations((o) => {
      pool(o, 'critical').spec.template.spec.requirements[2].minValues = 99;
    });
    expect(lines).toEqual([
      'environments/prod.yaml: nodePools[1].requirements[2].minValues: Invalid value: 99: should be less than or equal to 50 (NodePool/critical spec.template.spec.requirements[2].minValues)',
    ]);
  });

  it('GIVEN a requirement that came from the preset WHEN the CRD rejects it THEN the line points at the pool\'s preset', () => {
    const lines = violations((o) => {
      pool(o, 'default').spec.template.spec.requirements[0].operator = 'Within';
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^environments\/prod\.yaml: nodePools\[0\]\.preset: Unsupported value: "Within": supported values: .* \(NodePool\/default spec\.template\.spec\.requirements\[0\]\.operator\)$/);
  });

  it('GIVEN an EC2NodeClass field and NodePool limits the CRD rejects WHEN validated THEN each maps to its field, with the value where the message lacks it', () => {
    expect(
      violations((o) => {
        nodeClass(o, 'default').spec.tags = { 'kubernetes.io/cluster/x': 'owned' };
        pool(o, 'critical').spec.limits = { cpu: 'lots' };
      }),
    ).toEqual([
      expect.stringMatching(/^environments\/prod\.yaml: nodeClasses\[0\]\.tags: .* \(EC2NodeClass\/default spec\.tags\), got \{"kubernetes\.io\/cluster\/x":"owned"\}$/),
      expect.stringMatching(/^environments\/prod\.yaml: nodePools\[1\]\.limits\.cpu: Invalid value: "lots": should match '.*': must be a Kubernetes quantity: a number with an optional suffix, such as 100, 500m, 1\.5 or 1000Gi \(NodePool\/critical spec\.limits\.cpu\)$/),
    ]);
  });

  it('GIVEN an object the environment file does not describe field by field WHEN the CRD rejects it THEN it stays reported at its dist/ file', () => {
    const lines = violations((o) => {
      pool(o, 'critical').metadata.annotations = { 'bad key!': 'x' };
    });
    expect(lines).toEqual([expect.stringMatching(/^dist\/prod\/NodePool\.critical\.k8s\.yaml: metadata\.annotations: /)]);
  });

  it.each([
    ['spec.template.spec.requirements[0].values', ['spec', 'template', 'spec', 'requirements', 0, 'values']],
    ['spec.template.metadata.labels[karpenter.sh/x]', ['spec', 'template', 'metadata', 'labels', 'karpenter.sh/x']],
    ['', []],
  ])('parsePath(%s)', (path, segments) => {
    expect(parsePath(path)).toEqual(segments);
  });
});
