import { describe, expect, it } from 'vitest';
import { atoi, describeRequirement, firstConflict, hasIntersection, incompatibility, intersection, requirementsOf, toRequirement } from '../../config/node-requirements.js';

/**
 * Cases from sigs.k8s.io/karpenter v1.13.0 pkg/scheduling/requirement_test.go and
 * requirements_test.go (Intersection, HasIntersection, Compatible), in this port's terms.
 */
const r = (operator: string, ...values: string[]) => toRequirement({ key: 'k', operator, values });

describe('Karpenter requirement semantics', () => {
  it('canonicalises Gt N to >= N+1 and Lt N to <= N-1, Gte/Lte as given', () => {
    expect(describeRequirement(r('Gt', '5'))).toBe('k Exists >=6');
    expect(describeRequirement(r('Lt', '5'))).toBe('k Exists <=4');
    expect(describeRequirement(r('Gte', '5'))).toBe('k Exists >=5');
    expect(describeRequirement(r('Lte', '5'))).toBe('k Exists <=5');
  });

  it('intersects In with bounds by dropping values outside them, and non-integers', () => {
    expect(describeRequirement(intersection(r('In', '1', '5', '9', 'x'), r('Gt', '4')))).toBe('k In [5 9]');
    expect(describeRequirement(intersection(r('In', '1', '5', '9'), r('Lte', '5')))).toBe('k In [1 5]');
  });

  it('empty bounds become DoesNotExist: Gt 5 and Lt 6 share nothing, Gte 5 and Lte 5 share 5', () => {
    expect(describeRequirement(intersection(r('Gt', '5'), r('Lt', '6')))).toBe('k DoesNotExist');
    expect(hasIntersection(r('Gte', '5'), r('Lte', '5'))).toBe(true);
    expect(hasIntersection(r('Gt', '5'), r('Lt', '6'))).toBe(false);
  });

  it('In/NotIn/Exists/DoesNotExist as sets', () => {
    expect(hasIntersection(r('In', 'a'), r('NotIn', 'a'))).toBe(false);
    expect(hasIntersection(r('In', 'a', 'b'), r('NotIn', 'a'))).toBe(true);
    expect(hasIntersection(r('Exists'), r('DoesNotExist'))).toBe(false);
    expect(hasIntersection(r('NotIn', 'a'), r('NotIn', 'b'))).toBe(true);
    expect(describeRequirement(intersection(r('NotIn', 'a'), r('NotIn', 'b')))).toBe('k NotIn [a b]');
  });

  it('reads deprecated keys as their stable names, as NormalizedLabels does', () => {
    expect(toRequirement({ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['arm64'] }).key).toBe('kubernetes.io/arch');
  });

  it('several entries for one key intersect (Gte 2 and Lte 8)', () => {
    const reqs = requirementsOf([
      { key: 'gen', operator: 'Gte', values: ['2'] },
      { key: 'gen', operator: 'Lte', values: ['8'] },
    ]);
    expect(describeRequirement(reqs.get('gen')!)).toBe('gen Exists >=2 <=8');
  });

  it('Gt MaxInt matches nothing; an unknown operator reads as Exists (NewRequirementWithFlexibility)', () => {
    expect(describeRequirement(r('Gt', '9223372036854775807'))).toBe('k DoesNotExist');
    expect(describeRequirement(r('Bogus', 'a'))).toBe('k Exists');
  });

  it('bounds read as Go\'s strconv.Atoi reads them: a sign and digits, nothing else', () => {
    expect([atoi('+5'), atoi('-5'), atoi('007')]).toEqual([5, -5, 7]);
    expect([atoi(' 5'), atoi('1.0'), atoi('0x1'), atoi('')]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('intersection keeps the larger minValues (requirement_test.go "with minValues"); messages leave it out', () => {
    // GIVEN In [A B] with minValues 2 and NotIn [A] with minValues 1
    const inAB = toRequirement({ key: 'k', operator: 'In', values: ['A', 'B'], minValues: 2 });
    const notInA = toRequirement({ key: 'k', operator: 'NotIn', values: ['A'], minValues: 1 });
    // WHEN they intersect THEN B remains, with minValues 2, and the message reads as without it
    const both = intersection(notInA, inAB);
    expect(both.minValues).toBe(2);
    expect(intersection(inAB, notInA).minValues).toBe(2);
    expect(describeRequirement(both)).toBe('k In [B]');
    expect(intersection(inAB, r('Gt', '1')).minValues).toBe(2);
  });

  it('Requirements.Intersects: the first shared key with no common value; one-sided keys and two negatives pass', () => {
    const type = requirementsOf([], { arch: 'arm64', zone: 'a' });
    expect(firstConflict(type, requirementsOf([{ key: 'arch', operator: 'In', values: ['amd64'] }]))).toBe('arch');
    expect(firstConflict(type, requirementsOf([{ key: 'gpu', operator: 'In', values: ['a100'] }]))).toBeUndefined();
    const lacksGpu = requirementsOf([{ key: 'gpu', operator: 'DoesNotExist' }]);
    expect(firstConflict(lacksGpu, requirementsOf([{ key: 'gpu', operator: 'NotIn', values: ['a100'] }]))).toBeUndefined();
    expect(firstConflict(lacksGpu, requirementsOf([{ key: 'gpu', operator: 'Exists' }]))).toBe('gpu');
  });

  describe('Compatible(pod, AllowUndefinedWellKnownLabels)', () => {
    const wellKnown = new Set(['kubernetes.io/arch']);
    const node = requirementsOf([{ key: 'team', operator: 'Exists' }], { tier: 'web' });

    it('a custom key the node does not define: refused unless NotIn/DoesNotExist', () => {
      expect(incompatibility(node, requirementsOf([], { gpu: 'a100' }), wellKnown)).toBe('label "gpu" does not have known values');
      expect(incompatibility(node, requirementsOf([{ key: 'gpu', operator: 'DoesNotExist' }]), wellKnown)).toBeUndefined();
      expect(incompatibility(node, requirementsOf([{ key: 'gpu', operator: 'NotIn', values: ['a100'] }]), wellKnown)).toBeUndefined();
    });

    it('a well-known key the node does not define: allowed (instance types define it)', () => {
      expect(incompatibility(node, requirementsOf([], { 'kubernetes.io/arch': 'arm64' }), wellKnown)).toBeUndefined();
    });

    it('keys both define must intersect; two negative requirements never conflict', () => {
      expect(incompatibility(node, requirementsOf([], { team: 'a' }), wellKnown)).toBeUndefined();
      expect(incompatibility(node, requirementsOf([], { tier: 'batch' }), wellKnown)).toBe('tier In [batch] not in tier In [web]');
      const notIn = requirementsOf([{ key: 'x', operator: 'NotIn', values: ['a'] }]);
      expect(incompatibility(notIn, requirementsOf([{ key: 'x', operator: 'DoesNotExist' }]), wellKnown)).toBeUndefined();
    });
  });
});
