import { describe, expect, it } from 'vitest';
import { ManifestValidator } from '../../validate/validator.js';
import { ROOT } from './fixtures.js';

describe('CEL rules of the vendored CRDs', () => {
  it('GIVEN every CRD WHEN its x-kubernetes-validations are compiled THEN all 92 parse and type-check', () => {
    const rules = new ManifestValidator({ root: ROOT }).compileAllRules();
    const perCrd = Object.fromEntries(
      [...new Set(rules.map((r) => r.crd))].sort().map((crd) => [crd, rules.filter((r) => r.crd === crd).length]),
    );
    // A Karpenter upgrade that adds or drops rules changes these numbers: review the
    // new rules (and add fixtures for them) before updating the counts.
    expect(perCrd).toEqual({
      'EC2NodeClass.karpenter.k8s.aws/v1': 54,
      'NodeClaim.karpenter.sh/v1': 10,
      'NodeOverlay.karpenter.sh/v1alpha1': 8,
      'NodePool.karpenter.sh/v1': 20,
    });
    expect(rules).toHaveLength(92);
  });

  it('GIVEN a NodeClaim WHEN validated as a create THEN its transition rule (self == oldSelf) is skipped', () => {
    const validator = new ManifestValidator({ root: ROOT });
    const claim = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'claim' },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
      },
    };
    expect(validator.validate(claim)).toEqual([]);
  });

  it('GIVEN a requirement whose Gt value is not a number WHEN validated THEN the CEL evaluation error rejects it, naming the rule', () => {
    const validator = new ManifestValidator({ root: ROOT });
    const pool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'gt' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['five'] }],
          },
        },
      },
    };
    const [issue, ...rest] = validator.validate(pool);
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ object: 'NodePool/gt', path: 'spec.template.spec.requirements' });
    expect(issue!.message).toMatch(/^type conversion error from 'string' to 'int' evaluating rule: self\.all\(x, \(x\.operator == 'Gt'/);
  });
});
