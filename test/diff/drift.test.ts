import { describe, expect, it } from 'vitest';
import { amiFamily, differences, goDuration, hashView, nodeClassChanges, nodePoolChanges } from '../../diff/drift.js';
import { admits, narrowing } from '../../diff/requirements.js';
import { describePacing, windowText } from '../../diff/budgets.js';
import { catalogueUniverse } from '../../diff/universe.js';

const pool = (template: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'p' },
  spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [], ...template } }, ...rest },
});

describe('hash semantics (hashstructure v2: SlicesAsSets, IgnoreZeroValue, ZeroNil)', () => {
  it('GIVEN taints reordered, an equal duration in other units, an empty plain string WHEN compared THEN none is a change', () => {
    const t = [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', value: '', effect: 'NoSchedule' }];
    expect(nodePoolChanges(pool({ taints: t, expireAfter: '720h' }), pool({ taints: [t[1], { ...t[0], value: '' }], expireAfter: '43200m' }))).toEqual([]);
  });

  it('GIVEN an expireAfter that is really different WHEN compared THEN every node drifts', () => {
    expect(nodePoolChanges(pool({ expireAfter: '720h' }), pool({ expireAfter: '168h' })).map((c) => [c.path, c.effect])).toEqual([['spec.template.spec.expireAfter', 'replaces']]);
  });

  it('GIVEN an empty list written out WHEN compared with none THEN it is a change (a non-nil empty slice is hashed)', () => {
    expect(differences({ spec: {} }, { spec: { taints: [] } })).toEqual([{ path: 'spec.taints', before: undefined, after: [] }]);
  });

  it('GIVEN a list with the same element twice WHEN hashed THEN the pair cancels out, as XOR of set members does', () => {
    expect(hashView(['a', 'a', 'b'])).toEqual(['b']);
  });

  it('GIVEN Go durations WHEN parsed THEN they are nanoseconds, and text that is not one is undefined', () => {
    expect([goDuration('1h30m'), goDuration('90m'), goDuration('0'), goDuration('1.5h'), goDuration('Never')]).toEqual([5.4e12, 5.4e12, 0, 5.4e12, undefined]);
  });
});

describe('NodePool fields', () => {
  it('GIVEN weight, limits, disruption and metadata changes WHEN compared THEN none drifts', () => {
    const a = { ...pool({}, { weight: 1, limits: { cpu: '1' }, disruption: { consolidateAfter: '1m' } }), metadata: { name: 'p', labels: { x: '1' } } };
    const b = { ...pool({}, { weight: 2, limits: { cpu: '2' }, disruption: { consolidateAfter: '5m' } }), metadata: { name: 'p', labels: { x: '2' } } };
    expect(nodePoolChanges(a, b).map((c) => [c.path, c.effect])).toEqual([
      ['metadata.labels.x', 'none'],
      ['spec.disruption.consolidateAfter', 'none'],
      ['spec.limits.cpu', 'none'],
      ['spec.weight', 'none'],
    ]);
  });

  it('GIVEN template labels changed WHEN compared THEN every node drifts', () => {
    const a = pool({});
    const b = { ...a, spec: { template: { ...a.spec.template, metadata: { labels: { team: 'x' } } } } };
    expect(nodePoolChanges(a, b).map((c) => [c.path, c.effect])).toEqual([['spec.template.metadata', 'replaces']]);
  });

  it('GIVEN only minValues changed WHEN compared THEN nothing drifts, and the reason says so', () => {
    const r = { key: 'karpenter.k8s.aws/instance-family', operator: 'Exists' };
    const changes = nodePoolChanges(pool({ requirements: [r] }), pool({ requirements: [{ ...r, minValues: 3 }] }));
    expect(changes.map((c) => [c.effect, c.why])).toEqual([['none', 'only `minValues` changed: it shapes new launches and is not part of the compatibility check, no drift']]);
  });

  it('GIVEN replicas changed on a static pool WHEN compared THEN it scales, no drift', () => {
    expect(nodePoolChanges(pool({}, { replicas: 2 }), pool({}, { replicas: 3 })).map((c) => c.effect)).toEqual(['scales']);
  });
});

describe('requirement compatibility (areRequirementsDrifted)', () => {
  it('GIVEN each operator WHEN a node label is tested THEN it matches Karpenter: Gt needs an integer, NotIn admits a missing label', () => {
    expect(admits({ key: 'k', operator: 'Gt', values: ['5'] }, '6')).toBe(true);
    expect(admits({ key: 'k', operator: 'Gt', values: ['5'] }, 'six')).toBe(false);
    expect(admits({ key: 'k', operator: 'Gt', values: ['5'] }, undefined)).toBe(false);
    expect(admits({ key: 'k', operator: 'Gte', values: ['5'] }, '5')).toBe(true);
    expect(admits({ key: 'k', operator: 'Lte', values: ['5'] }, '6')).toBe(false);
    expect(admits({ key: 'k', operator: 'NotIn', values: ['a'] }, undefined)).toBe(true);
    expect(admits({ key: 'k', operator: 'DoesNotExist' }, 'x')).toBe(false);
    expect(() => admits({ key: 'k', operator: 'Equals' }, 'x')).toThrow('requirement k: operator must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got "Equals"');
  });

  it('GIVEN a new requirement on a key the old ones left open WHEN compared THEN nodes without the label and with other values drift', () => {
    expect(narrowing([], [{ key: 'team', operator: 'In', values: ['a'] }])).toEqual([{ key: 'team', excluded: [undefined], excludesOtherValues: true }]);
  });

  it('GIVEN a DoesNotExist added on the GPU count WHEN compared with catalogue values THEN exactly the GPU counts drift', () => {
    const known = (k: string) => (k === 'karpenter.k8s.aws/instance-gpu-count' ? ['1', '8'] : []);
    expect(narrowing([], [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' }], known)).toEqual([
      { key: 'karpenter.k8s.aws/instance-gpu-count', excluded: ['1', '8'], excludesOtherValues: true },
    ]);
  });

  it('GIVEN a deprecated key replaced by its normalized form WHEN compared THEN nothing drifts', () => {
    expect(narrowing([{ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['amd64'] }], [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }])).toEqual([]);
  });

  it('GIVEN Gt 5 becoming Gte 7 WHEN compared THEN generation 6 drifts and nothing else', () => {
    expect(narrowing([{ key: 'g', operator: 'Gt', values: ['5'] }], [{ key: 'g', operator: 'Gte', values: ['7'] }])).toEqual([{ key: 'g', excluded: ['6'], excludesOtherValues: false }]);
  });
});

describe('EC2NodeClass fields', () => {
  const nc = (spec: Record<string, unknown>) => ({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'default' }, spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], role: 'r', ...spec } });

  it('GIVEN selector terms and ipPrefixCount changed WHEN compared THEN selectors are dynamic drift and ipPrefixCount none', () => {
    const a = nc({ subnetSelectorTerms: [{ id: 'subnet-1' }], securityGroupSelectorTerms: [{ id: 'sg-1' }], ipPrefixCount: 1 });
    const b = nc({ subnetSelectorTerms: [{ id: 'subnet-2' }], securityGroupSelectorTerms: [{ id: 'sg-2' }], ipPrefixCount: 2 });
    expect(nodeClassChanges(a, b).map((c) => [c.path, c.effect, c.cite.split(' ').pop()])).toEqual([
      ['spec.ipPrefixCount', 'none', '`areStaticFieldsDrifted`'],
      ['spec.securityGroupSelectorTerms', 'replaces-some', '`areSecurityGroupsDrifted`'],
      ['spec.subnetSelectorTerms', 'replaces-some', '`isSubnetDrifted`'],
    ]);
  });

  it('GIVEN amiFamily written out equal to the alias family WHEN compared THEN nothing drifts (the resolved family is hashed, not the field)', () => {
    const changes = nodeClassChanges(nc({}), nc({ amiFamily: 'AL2023' }));
    expect(changes.map((c) => [c.path, c.effect])).toEqual([['spec.amiFamily', 'none']]);
    expect([amiFamily(nc({})), amiFamily(nc({ amiSelectorTerms: [{ id: 'ami-1' }] }))]).toEqual(['AL2023', 'Custom']);
  });

  it('GIVEN role, userData and a false detailedMonitoring written out WHEN compared THEN each is hashed: every node drifts', () => {
    expect(nodeClassChanges(nc({}), nc({ role: 'other', userData: 'x', detailedMonitoring: false })).map((c) => [c.path, c.effect])).toEqual([
      ['spec.detailedMonitoring', 'replaces'],
      ['spec.role', 'replaces'],
      ['spec.userData', 'replaces'],
    ]);
  });
});

describe('budget pacing', () => {
  it('GIVEN the shipped budgets WHEN described THEN it reads as a reviewer would say it', () => {
    expect(describePacing([{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }])).toBe("10% of the pool's nodes (rounded up) at a time; none Mon-Fri 09:00-17:00 UTC");
  });

  it('GIVEN budgets for other reasons only WHEN described THEN drift has no limit', () => {
    expect(describePacing([{ nodes: '0', reasons: ['Underutilized'] }])).toBe('no budget applies to drift: drifted nodes are replaced without a limit');
  });

  it('GIVEN no budgets WHEN described THEN the CRD default of 10% applies', () => {
    expect(describePacing(undefined)).toBe("10% of the pool's nodes (rounded up) at a time");
  });

  it('GIVEN windows past midnight, descriptors and steps WHEN described THEN common shapes are spelled out and others quoted', () => {
    expect(windowText('30 22 * * 5,6', '4h')).toBe('Fri, Sat 22:30-02:30 next day UTC');
    expect(windowText('0 0 * * *', '10m')).toBe('every day 00:00-00:10 UTC');
    expect(windowText('@daily', '10m')).toBe('for 10m from each `@daily` (UTC)');
    expect(windowText('*/5 * * * *', '1m')).toBe('for 1m from each `*/5 * * * *` (UTC)');
  });
});

describe('CRD defaults', () => {
  it('GIVEN expireAfter and metadataOptions left to the API server on one side and written out on the other WHEN compared THEN nothing changes', () => {
    const np = pool({});
    delete (np.spec.template.spec as Record<string, unknown>).expireAfter;
    expect(nodePoolChanges(np, pool({ expireAfter: '720h' }))).toEqual([]);
    const nc = (spec: Record<string, unknown>) => ({ kind: 'EC2NodeClass', metadata: { name: 'd' }, spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], ...spec } });
    expect(nodeClassChanges(nc({}), nc({ metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' } }))).toEqual([]);
    expect(nodeClassChanges(nc({}), nc({ metadataOptions: { httpPutResponseHopLimit: 2 } })).map((c) => [c.path, c.effect])).toEqual([['spec.metadataOptions.httpPutResponseHopLimit', 'replaces']]);
  });
});

describe('nodes that can exist (catalogue universe)', () => {
  const t = (family: string, category: string) => ({ labels: { 'karpenter.k8s.aws/instance-family': family, 'karpenter.k8s.aws/instance-category': category }, resources: {}, onDemandPrice: null });
  const catalogue = { origin: 'test', region: 'us-east-1', pricesAsOf: '2026-11-30', zones: ['us-east-1a'], instanceTypes: { 'c5.large': t('c5', 'c'), 'm5.large': t('m5', 'm') } };
  const before = [
    { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'm5'] },
    { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c'] },
  ];
  const after = [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5'] }, before[1]!];

  it('GIVEN a family dropped that another key already excluded WHEN compared with the catalogue THEN no node drifts', () => {
    const np = (reqs: unknown[]) => pool({ requirements: reqs });
    expect(nodePoolChanges(np(before), np(after), catalogueUniverse(catalogue)).map((c) => c.effect)).toEqual(['none']);
  });

  it('GIVEN the same change without a catalogue WHEN compared THEN the dropped family is reported, as nothing says it could not exist', () => {
    expect(narrowing(before, after)).toEqual([{ key: 'karpenter.k8s.aws/instance-family', excluded: ['m5'], excludesOtherValues: false }]);
  });

  it('GIVEN a zone dropped WHEN compared with the catalogue THEN nodes in that zone drift (zones are not type labels)', () => {
    const u = catalogueUniverse({ ...catalogue, zones: ['us-east-1a', 'us-east-1b'] });
    const z = (values: string[]) => [{ key: 'topology.kubernetes.io/zone', operator: 'In', values }];
    expect(narrowing(z(['us-east-1a', 'us-east-1b']), z(['us-east-1a']), u.values, u.reachable(z(['us-east-1a', 'us-east-1b'])))).toEqual([
      { key: 'topology.kubernetes.io/zone', excluded: ['us-east-1b'], excludesOtherValues: false },
    ]);
  });
});
