import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../charts/render.js';
import { ManifestError, validateManifests } from '../../validate/manifests.js';

const pool = (name: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: {
    template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
    ...spec,
  },
});

describe('validateManifests (the synth step)', () => {
  it('GIVEN rendered objects of two environments with violations WHEN validated THEN one ManifestError lists every violation by dist file and field path', () => {
    const run = () =>
      validateManifests([
        { dir: 'dist/dev', objects: [pool('ok', {})] },
        { dir: 'dist/prod', objects: [pool('default', { weight: 101 }), pool('static', { replicas: 2, weight: 5 })] },
      ]);
    expect(run).toThrow(ManifestError);
    try {
      run();
    } catch (err) {
      expect((err as ManifestError).message).toBe(
        [
          'dist/prod/NodePool.default.k8s.yaml: spec.weight: Invalid value: 101: should be less than or equal to 100',
          "dist/prod/NodePool.static.k8s.yaml: spec: 'weight' is not supported on static NodePools",
        ].join('\n'),
      );
      expect((err as ManifestError).code).toBe('E_CONFIG');
    }
  });

  it('GIVEN core kinds (Deployment, PodDisruptionBudget) WHEN validated THEN they are left to the API server suite', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { nonsense: true } } as Manifest;
    expect(() => validateManifests([{ dir: 'dist/dev', objects: [deployment] }])).not.toThrow();
  });
});
