import { describe, expect, it } from 'vitest';
import { karpenterChartValues } from '../../charts/argocd/karpenter-values.js';
import { ConfigError } from '../../config/errors.js';
import { parseEnvironment } from '../../config/environment.js';
import { validateManifests } from '../../validate/manifests.js';
import { examplesText, FILE, synthExamples } from '../fixtures/workload-examples.js';
import { parse, stringify } from 'yaml';

/** The examples environment with `nodeOverlays` (and no workloads). */
const withOverlays = (nodeOverlays: unknown[]) => stringify({ ...parse(examplesText([])), nodeOverlays });
function errorsFor(nodeOverlays: unknown[]): string[] {
  try {
    parseEnvironment(FILE, withOverlays(nodeOverlays));
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}

/** Karpenter's NodeOverlay docs: a Savings Plan discount on a family, and hugepages on large instances. */
const SAVINGS_PLAN = {
  name: 'savings-plan-m7i',
  metadata: { annotations: { 'kubernetes.io/description': 'Compute Savings Plan, 3 years, no upfront' } },
  requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
  priceAdjustment: '-28%',
  weight: 10,
};
const HUGEPAGES = {
  name: 'hugepages',
  requirements: [{ key: 'karpenter.k8s.aws/instance-memory', operator: 'Gte', values: ['65536'] }],
  capacity: { 'hugepages-2Mi': '1Gi' },
};

describe('nodeOverlays in an environment file', () => {
  it('GIVEN a price adjustment and an extended resource THEN two NodeOverlays, in the pools\' wave, that the vendored CRD accepts', () => {
    const { objects } = synthExamples(withOverlays([SAVINGS_PLAN, HUGEPAGES]));
    const overlays = objects.filter((o) => o.kind === 'NodeOverlay');
    expect(overlays).toEqual([
      {
        apiVersion: 'karpenter.sh/v1alpha1',
        kind: 'NodeOverlay',
        metadata: {
          name: 'savings-plan-m7i',
          labels: { 'app.kubernetes.io/managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': 'examples' },
          annotations: { 'kubernetes.io/description': 'Compute Savings Plan, 3 years, no upfront', 'argocd.argoproj.io/sync-wave': '1' },
        },
        spec: { requirements: SAVINGS_PLAN.requirements, priceAdjustment: '-28%', weight: 10 },
      },
      {
        apiVersion: 'karpenter.sh/v1alpha1',
        kind: 'NodeOverlay',
        metadata: {
          name: 'hugepages',
          labels: { 'app.kubernetes.io/managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': 'examples' },
          annotations: { 'argocd.argoproj.io/sync-wave': '1' },
        },
        spec: { requirements: HUGEPAGES.requirements, capacity: { 'hugepages-2Mi': '1Gi' } },
      },
    ]);
    expect(() => validateManifests([{ dir: 'dist/examples', objects: overlays as never }])).not.toThrow();
  });

  it('GIVEN an overlay the schema would have refused THEN the in-process CRD check refuses it too (the validator knows the kind)', () => {
    const bad = { apiVersion: 'karpenter.sh/v1alpha1', kind: 'NodeOverlay', metadata: { name: 'bad' }, spec: { requirements: [], price: '1', priceAdjustment: '-1%' } };
    expect(() => validateManifests([{ dir: 'dist/examples', objects: [bad] as never }])).toThrow("dist/examples/NodeOverlay.bad.k8s.yaml: spec: cannot set both 'price' and 'priceAdjustment'");
  });

  it('GIVEN overlays that fit the pools THEN no warning; one on a key only a pool requirement (not a label) defines, or on a family no pool launches, THEN a warning each', () => {
    expect(parseEnvironment(FILE, withOverlays([SAVINGS_PLAN, HUGEPAGES])).warnings).toEqual([]);
    const spread = { name: 'spread', requirements: [{ key: 'capacity-spread', operator: 'In', values: ['1'] }], priceAdjustment: '-10%' };
    const cpuLabel = { name: 'graviton-label', requirements: [{ key: 'example.com/cpu', operator: 'In', values: ['graviton'] }], priceAdjustment: '-10%' };
    const onlyGraviton = stringify({ ...parse(withOverlays([spread, cpuLabel])), nodePools: [{ name: 'graviton', labels: { 'example.com/cpu': 'graviton' } }] });
    expect(parseEnvironment(FILE, onlyGraviton).warnings).toEqual([
      `${FILE}: nodeOverlays[0] "spread": matches no instance type any NodePool can launch, so it never applies: NodePool "graviton": label "capacity-spread" does not have known values`,
    ]);
    const family = { name: 'c7g', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], price: '0.01' };
    const amd64Only = stringify({ ...parse(withOverlays([family])), nodePools: [{ name: 'general', preset: 'spot-with-on-demand-fallback' }] });
    expect(parseEnvironment(FILE, amd64Only).warnings).toEqual([
      `${FILE}: nodeOverlays[0] "c7g": matches no instance type any NodePool can launch, so it never applies: NodePool "general": kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]`,
    ]);
  });

  it('GIVEN overlays THEN the Helm values turn the nodeOverlay feature gate on; without, the values say nothing about gates', () => {
    const cluster = { clusterName: 'examples', interruptionQueue: 'karpenter-examples' };
    const on = parseEnvironment(FILE, withOverlays([HUGEPAGES])).config;
    const off = parseEnvironment(FILE, withOverlays([])).config;
    expect(karpenterChartValues(on, cluster).settings).toEqual({ ...cluster, featureGates: { nodeOverlay: true } });
    expect(karpenterChartValues(off, cluster).settings).toEqual(cluster);
  });

  it('GIVEN both price and priceAdjustment, a standard resource and a restricted key THEN one error each, at its field', () => {
    expect(
      errorsFor([
        { name: 'a', requirements: [{ key: 'karpenter.sh/nodeclaim', operator: 'Exists' }], price: '0.1', priceAdjustment: '-10%' },
        { name: 'b', requirements: [], capacity: { cpu: '2' } },
      ]),
    ).toEqual([
      `${FILE}: nodeOverlays[0].requirements[0].key: label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type and karpenter.sh/nodepool may be used), got "karpenter.sh/nodeclaim"`,
      `${FILE}: nodeOverlays[0].priceAdjustment: must not be set together with price, got "-10%"`,
      `${FILE}: nodeOverlays[1].capacity.cpu: must not be cpu, memory, ephemeral-storage, pods: an overlay only adds extended resources, got "2"`,
    ]);
  });

  it('GIVEN a percentage below -100% or an overlay that changes nothing THEN refused', () => {
    expect(errorsFor([{ name: 'a', requirements: [], priceAdjustment: '-150%' }, { name: 'b', requirements: [] }])).toEqual([
      `${FILE}: nodeOverlays[0].priceAdjustment: must be a signed amount such as "-0.01" or a percentage from "-100%" such as "-15%" or "+10%", got "-150%"`,
      `${FILE}: nodeOverlays[1]: must set price, priceAdjustment or capacity: an overlay without one changes nothing, got {"name":"b","requirements":[]}`,
    ]);
  });
});
