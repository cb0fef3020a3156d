import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConfigError } from '../../config/errors.js';
import { parseEnvironment } from '../../config/environment.js';
import { examplesText, FILE, synthExamples } from '../fixtures/workload-examples.js';

/** One pool and one node class, as given, in the examples environment. */
const envWith = (pool: Record<string, unknown>, nodeClass: Record<string, unknown> = {}) =>
  stringify({ ...parse(examplesText([])), nodeClasses: [{ name: 'default', ...nodeClass }], nodePools: [{ name: 'general', ...pool }] });
const COMMON = { 'app.kubernetes.io/managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': 'examples' };

describe('metadata: of the NodePool and EC2NodeClass objects themselves', () => {
  it('GIVEN metadata on a pool and a class THEN they label and annotate the objects, and the node template keeps its own labels and annotations', () => {
    const text = envWith(
      {
        metadata: { labels: { 'example.com/team': 'platform' }, annotations: { 'kubernetes.io/description': 'General purpose, Spot first' } },
        labels: { 'example.com/tier': 'general' },
        annotations: { 'example.com/scrape': 'true' },
      },
      { metadata: { annotations: { 'example.com/cost-centre': 'cc-1234' } } },
    );
    const { environment, objects } = synthExamples(text);
    const pool = objects.find((o) => o.kind === 'NodePool')!;
    const nodeClass = objects.find((o) => o.kind === 'EC2NodeClass')!;
    expect(pool.metadata).toEqual({
      name: 'general',
      labels: { 'example.com/team': 'platform', ...COMMON },
      annotations: { 'kubernetes.io/description': 'General purpose, Spot first', 'argocd.argoproj.io/sync-wave': '1' },
    });
    expect(pool.spec.template.metadata).toEqual({ labels: { 'example.com/tier': 'general' }, annotations: { 'example.com/scrape': 'true' } });
    expect(nodeClass.metadata).toEqual({ name: 'default', labels: COMMON, annotations: { 'example.com/cost-centre': 'cc-1234', 'argocd.argoproj.io/sync-wave': '0' } });
    expect(environment.warnings).toEqual([]);
  });

  it('GIVEN kubernetes.io/description in the node template\'s annotations THEN a warning pointing at metadata:', () => {
    const { environment, objects } = synthExamples(envWith({ annotations: { 'kubernetes.io/description': 'General purpose' } }));
    expect(objects.find((o) => o.kind === 'NodePool')!.spec.template.metadata.annotations).toEqual({ 'kubernetes.io/description': 'General purpose' });
    expect(environment.warnings).toEqual([
      `${FILE}: nodePools[0].annotations["kubernetes.io/description"]: annotations: is the node template's (spec.template.metadata.annotations), so this lands on every node "general" launches, not on the NodePool; ` +
        'to describe the NodePool itself, write it under metadata: {annotations: {kubernetes.io/description: ...}}',
    ]);
  });

  it('GIVEN a label or annotation the toolchain sets THEN an error', () => {
    let message = '';
    try {
      parseEnvironment(FILE, envWith({ metadata: { labels: { 'karpenter-gitops/environment': 'x' }, annotations: { 'argocd.argoproj.io/sync-wave': '5' } } }));
    } catch (err) {
      message = (err as ConfigError).message;
    }
    expect(message.split('\n')).toEqual([
      `${FILE}: nodePools[0].metadata.labels["karpenter-gitops/environment"]: must not be set: the toolchain sets it on every object it writes, got "x"`,
      `${FILE}: nodePools[0].metadata.annotations["argocd.argoproj.io/sync-wave"]: must not be set: the toolchain sets it on every object it writes, got "5"`,
    ]);
  });

  it('GIVEN an unknown key under metadata THEN the allowed ones are listed', () => {
    expect(() => parseEnvironment(FILE, envWith({}, { metadata: { name: 'x' } }))).toThrow(`${FILE}: nodeClasses[0].metadata: unknown field "name"; allowed: labels, annotations`);
  });
});
