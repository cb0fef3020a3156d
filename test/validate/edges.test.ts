import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/errors.js';
import { ManifestValidator } from '../../validate/validator.js';
import { synthesizeInput } from './arbitraries.js';
import { edgeFixtures, environmentFor, ROOT } from './fixtures.js';

/**
 * The differential test of the project's own rules, both ways: for each rule beyond the
 * CRDs, a fixture just inside it (synth and the in-process CRD validator accept it; the
 * apiserver twin of this file proves the real API server does too) and one just outside
 * (synth refuses it with the expected message; the fixture names the rule's source).
 */
const validator = new ManifestValidator({ root: ROOT });

describe('edge corpus: just inside each project rule, accepted', () => {
  const inside = edgeFixtures('inside');
  it('has a fixture per rule family', () => expect(inside.length).toBeGreaterThanOrEqual(12));

  it.each(inside.map((f) => [f.name, f] as const))('GIVEN %s WHEN synthesized THEN it is accepted and every custom resource passes the CRDs', (_name, f) => {
    const objects = synthesizeInput(environmentFor(f));
    expect(objects.filter((o) => validator.handles(o)).flatMap((o) => validator.validate(o))).toEqual([]);
  });

  it('GIVEN node-role.kubernetes.io/spot: "" on a pool THEN the label reaches the NodePool template (and so the nodes)', () => {
    const f = inside.find((x) => x.name === 'inside/labels-kubernetes-io-domains.yaml')!;
    const pool = synthesizeInput(environmentFor(f)).find((o) => o.kind === 'NodePool') as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } };
    expect(pool.spec.template.metadata.labels).toMatchObject({ 'node-role.kubernetes.io/spot': '', 'example.k8s.io/tier': 'gold', 'node-restriction.kubernetes.io/team': 'a' });
  });
});

describe('edge corpus: just outside each project rule, refused by synth with its message', () => {
  const outside = edgeFixtures('outside');
  it.each(outside.map((f) => [f.name, f] as const))('GIVEN %s WHEN synthesized THEN synth refuses it', (_name, f) => {
    let error: unknown;
    try {
      synthesizeInput(environmentFor(f));
    } catch (err) {
      error = err;
    }
    expect(error, `${f.name} was accepted; rule: ${f.rule} (${f.source})`).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(f.expect);
  });

  it('every outside fixture names an inside one at the same edge, and every inside fixture has one outside it', () => {
    const inside = edgeFixtures('inside').map((f) => f.name);
    expect(outside.map((f) => f.inside).filter((i) => !inside.includes(i!))).toEqual([]);
    expect(inside.filter((i) => !outside.some((f) => f.inside === i))).toEqual([]);
  });
});
