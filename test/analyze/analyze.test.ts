import { describe, expect, it } from 'vitest';
import { analyzeEnvironment } from '../../analyze/analyze.js';
import { synthesize } from '../../charts/synth.js';
import { REPO } from '../support/repo.js';
import { CATALOGUE, RAW, analyzeDoc, analyzePool, expected, label, num } from './support.js';

/**
 * Each expectation is computed here from the raw catalogue JSON with a plain filter on the
 * labels (not the analyzer's requirement algebra), following Karpenter v1.13's rules as
 * documented: well-known labels a type lacks count as absent; NotIn and DoesNotExist admit
 * absence; Gt/Lt/Gte/Lte compare integers and never match a non-integer value.
 */
describe('analyzer: one requirement operator at a time, against the vendored catalogue', () => {
  it('In: category c or m, arm64 only', () => {
    const { names } = analyzePool([
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
    ]);
    expect(names).toEqual(expected((l) => ['c', 'm'].includes(label(l, 'instance-category')!) && l['kubernetes.io/arch'] === 'arm64'));
    expect(names.length).toBeGreaterThan(50);
  });

  it('NotIn on a label every type has', () => {
    const { names } = analyzePool([{ key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['nano', 'micro', 'small', 'medium', 'large'] }]);
    expect(names).toEqual(expected((l) => !['nano', 'micro', 'small', 'medium', 'large'].includes(label(l, 'instance-size')!)));
  });

  it('NotIn on a label most types lack admits the types without it', () => {
    const { names } = analyzePool([{ key: 'karpenter.k8s.aws/instance-gpu-name', operator: 'NotIn', values: ['t4'] }]);
    const withT4 = Object.keys(RAW).filter((n) => label(RAW[n]!.labels, 'instance-gpu-name') === 't4');
    expect(withT4.length).toBeGreaterThan(0);
    expect(names).toHaveLength(1204 - withT4.length);
    expect(names).toContain('m5.large'); // no GPU label at all
  });

  it('Exists: only the types that have local NVMe', () => {
    const { names } = analyzePool([{ key: 'karpenter.k8s.aws/instance-local-nvme', operator: 'Exists' }]);
    expect(names).toEqual(expected((l) => label(l, 'instance-local-nvme') !== undefined));
    expect(names).toHaveLength(450);
  });

  it('DoesNotExist on karpenter.k8s.aws/instance-gpu-count: every type without a GPU', () => {
    const { names } = analyzePool([{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' }]);
    expect(names).toEqual(expected((l) => label(l, 'instance-gpu-count') === undefined));
    expect(names).toHaveLength(1204 - 68);
  });

  it('Gt and Lt compare integers and are exclusive', () => {
    expect(analyzePool([{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['64'] }]).names).toEqual(expected((l) => num(l, 'instance-cpu') > 64));
    expect(analyzePool([{ key: 'karpenter.k8s.aws/instance-memory', operator: 'Lt', values: ['4096'] }]).names).toEqual(expected((l) => num(l, 'instance-memory') < 4096));
  });

  it('Gte and Lte on one key intersect (generation exactly 7)', () => {
    const { names } = analyzePool([
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gte', values: ['7'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Lte', values: ['7'] },
    ]);
    expect(names).toEqual(expected((l) => label(l, 'instance-generation') === '7'));
  });

  it('Gt on a label whose values are not integers admits nothing, and synth would fail', () => {
    const { pool, analysis } = analyzePool([{ key: 'karpenter.k8s.aws/instance-size', operator: 'Gt', values: ['1'] }]);
    expect(pool.admitted).toEqual([]);
    expect(analysis.findings.filter((f) => f.code === 'admits-nothing')).toEqual([
      {
        severity: 'error',
        code: 'admits-nothing',
        path: 'nodePools[0]',
        message: 'NodePool "p" admits no instance type of the catalogue (requirements: karpenter.k8s.aws/instance-size Gt [1]; AMI family al2023): Karpenter can never launch a node for it',
      },
    ]);
  });

  it('a label of your own does not restrict instance types (Karpenter puts it on the node)', () => {
    expect(analyzePool([{ key: 'example.com/team', operator: 'In', values: ['a'] }]).names).toHaveLength(1204);
  });

  it('a deprecated key is normalized first: beta.kubernetes.io/arch is kubernetes.io/arch', () => {
    expect(analyzePool([{ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['arm64'] }]).names).toEqual(expected((l) => l['kubernetes.io/arch'] === 'arm64'));
  });

  it('a zone outside cluster.availabilityZones admits nothing', () => {
    const { pool } = analyzePool([{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1d'] }], {}, {});
    expect(pool.admitted).toHaveLength(1204); // no zones configured: every zone assumed
    const withZones = analyzeDoc({
      cluster: { name: 'karpenter-prod', region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-01234567', 'subnet-01234568'], availabilityZones: ['us-east-1a', 'us-east-1b'] },
      nodePools: [{ name: 'p', requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1d'] }], limits: { cpu: '1' } }],
    }).analysis;
    expect(withZones.pools[0]!.admitted).toEqual([]);
    expect(withZones.zones).toEqual({ list: ['us-east-1a', 'us-east-1b'], source: 'cluster.availabilityZones' });
  });

  it('capacity type reserved admits nothing: the catalogue has no capacity reservations', () => {
    expect(analyzePool([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved'] }]).names).toEqual([]);
  });

  it('a Windows AMI family admits amd64 types only (there is no Windows AMI for arm64)', () => {
    const { analysis } = analyzeDoc({
      nodeClasses: [{ name: 'default', amiSelectorTerms: [{ alias: 'windows2022@latest' }] }],
      nodePools: [{ name: 'p', requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] }], limits: { cpu: '10' } }],
    });
    expect(analysis.pools[0]!.amiFamily).toBe('windows2022');
    expect(analysis.pools[0]!.admitted.map((t) => t.name)).toEqual(expected((l) => label(l, 'instance-category') === 'm' && l['kubernetes.io/arch'] === 'amd64'));
  });
});

describe('analyzer: minValues', () => {
  it('across keys: family minValues 3 cannot be met when the category leaves two families', () => {
    const { analysis, pool } = analyzePool([
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'c6g', 'm5'], minValues: 3 },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c'] },
    ]);
    const families = new Set(expected((l) => ['c5', 'c6g'].includes(label(l, 'instance-family')!)).map((n) => label(RAW[n]!.labels, 'instance-family')));
    expect(families.size).toBe(2);
    expect(pool.admitted.length).toBe(expected((l) => ['c5', 'c6g'].includes(label(l, 'instance-family')!)).length);
    expect(analysis.findings.filter((f) => f.code === 'min-values-unsatisfiable')).toEqual([
      {
        severity: 'error',
        code: 'min-values-unsatisfiable',
        path: 'nodePools[0].requirements[0].minValues',
        message: `minValues 3 on karpenter.k8s.aws/instance-family cannot be met: the ${pool.admitted.length} admitted types have only 2 value(s) (c5, c6g), so Karpenter launches nothing for this pool`,
      },
    ]);
  });

  it('met: two families asked, two admitted', () => {
    const { analysis } = analyzePool([
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'c6g', 'm5'], minValues: 2 },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c'] },
    ]);
    expect(analysis.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('analyzer: cost ceiling and workload fit', () => {
  it('limits cpu 8 on m5: the cheapest and most expensive fill, On-Demand', () => {
    const { pool } = analyzePool([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }], { limits: { cpu: '8' } });
    const fills = expected((l) => label(l, 'instance-family') === 'm5' && num(l, 'instance-cpu') <= 8)
      .map((n) => ({ n, cost: (8 / num(RAW[n]!.labels, 'instance-cpu')) * RAW[n]!.onDemandPrice! }))
      .sort((a, b) => a.cost - b.cost);
    expect(pool.ceiling.limits).toEqual({ cpu: '8' });
    expect(pool.ceiling.onDemand!.low.type).toBe(fills[0]!.n);
    expect(pool.ceiling.onDemand!.low.perHour).toBeCloseTo(fills[0]!.cost, 2);
    expect(pool.ceiling.onDemand!.high.perHour).toBeCloseTo(fills.at(-1)!.cost, 2);
    expect(pool.ceiling.spot).toBeNull(); // the vendored catalogue has no Spot prices
  });

  it('no limits: no ceiling, and a warning', () => {
    const { analysis, pool } = analyzePool([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }], { limits: undefined });
    expect(pool.ceiling).toEqual({ limits: null, onDemand: null, spot: null });
    expect(analysis.findings.find((f) => f.code === 'no-limits')).toEqual({
      severity: 'warning',
      code: 'no-limits',
      path: 'nodePools[0]',
      message: 'NodePool "p" has no cpu or memory limits: nothing caps how many nodes, and how much cost, Karpenter may add',
    });
  });

  it('inflate x1 lands on the cheapest type with room for 1 CPU plus 0.125 CPU and 3 pods of DaemonSets', () => {
    const { analysis } = analyzePool([{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }]);
    const fits = expected((l, n) => ['c', 'm', 'r'].includes(label(l, 'instance-category')!) && cpuOf(RAW[n]!.resources.cpu!) >= 1.125 && Number(RAW[n]!.resources.pods) >= 4 && RAW[n]!.onDemandPrice !== null).sort(
      (a, b) => RAW[a]!.onDemandPrice! - RAW[b]!.onDemandPrice! || (a < b ? -1 : 1),
    );
    const one = analysis.workloads.find((w) => w.workload === 'inflate x1')!;
    expect(one.fit!.type).toBe(fits[0]);
    expect(analysis.workloads.map((w) => w.workload)).toEqual(['inflate x1', 'inflate x10', 'inflate x100']);
  });

  it('a workload larger than every admitted type fails synth, naming the largest', () => {
    const { analysis } = analyzeDoc({
      nodePools: [{ name: 'p', requirements: [{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['2'] }], limits: { cpu: '10' } }],
      workloads: [{ name: 'big', namespace: 'big', image: 'public.ecr.aws/docker/library/nginx:1.27', resources: { requests: { cpu: '3', memory: '1Gi' } }, nodePool: 'p' }],
    });
    const largest = expected((l) => num(l, 'instance-cpu') <= 2).sort((a, b) => cpuOf(RAW[b]!.resources.cpu!) - cpuOf(RAW[a]!.resources.cpu!) || memOf(RAW[b]!.resources.memory!) - memOf(RAW[a]!.resources.memory!))[0]!;
    const errors = analysis.findings.filter((f) => f.code === 'workload-fits-nowhere');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe('workloads[0]');
    expect(errors[0]!.message).toContain(`workload "big" needs 3 CPU and 1 GiB plus the DaemonSets per pod, which fits no type its NodePools (p) admit: the largest admitted type, ${largest}, has`);
  });
});

describe('analyzer: pools of one selection share their results, never across what differs', () => {
  // Same requirements (one selection), different limits, and a workload asked of both: the
  // shared per-selection results must key on the limits, the pod and the DaemonSets.
  const pools = [
    { name: 'wide', requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }], limits: { cpu: '100' }, weight: 2 },
    { name: 'tight', requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }], limits: { cpu: '4' }, weight: 1 },
  ];
  const alone = (pool: (typeof pools)[number]) => analyzeDoc({ nodePools: [{ ...pool, weight: 1 }] }).analysis;

  it('GIVEN two pools of one selection with different limits THEN each has the ceiling and inflate fit it has alone', () => {
    const { analysis } = analyzeDoc({ nodePools: pools });
    expect(analysis.pools[0]!.admitted).toBe(analysis.pools[1]!.admitted); // one selection
    for (const [i, pool] of pools.entries()) {
      const own = alone(pool);
      expect(analysis.pools[i]!.ceiling).toEqual(own.pools[0]!.ceiling);
    }
    expect(analysis.pools[0]!.ceiling).not.toEqual(analysis.pools[1]!.ceiling);
    // inflate x100, the tight pool first: were the limits not part of the key, the wide pool
    // would get the tight pool's answer.
    const tightFit = alone(pools[1]!).workloads.find((w) => w.workload === 'inflate x100')!.fit!;
    const wideFit = alone(pools[0]!).workloads.find((w) => w.workload === 'inflate x100')!.fit!;
    // A type over the 4-CPU limit would leave every pod pending: the tight pool's answer fits under it.
    expect(num(RAW[tightFit.type]!.labels, 'instance-cpu')).toBeLessThanOrEqual(4);
    expect(tightFit.type).not.toBe(wideFit.type);
    expect(analysis.workloads.find((w) => w.workload === 'inflate x100')!.fit).toEqual({ ...wideFit, pool: 'wide' });
  });

  it('GIVEN the same pool with other DaemonSets THEN the fit is computed again', () => {
    const plain = analyzeDoc({ nodePools: [pools[0]] }).analysis;
    const heavy = analyzeDoc({ nodePools: [pools[0]], daemonSets: [{ name: 'agent', requests: { cpu: '3', memory: '1Gi' } }] }).analysis;
    const fit = (a: typeof plain) => a.workloads.find((w) => w.workload === 'inflate x1')!.fit!;
    expect(plain.pools[0]!.admitted).toEqual(heavy.pools[0]!.admitted);
    expect(fit(heavy).type).not.toBe(fit(plain).type);
    expect(fit(analyzeDoc({ nodePools: [pools[0]] }).analysis)).toEqual(fit(plain));
  });
});

describe('analyzer: warnings and infos', () => {
  it('a Spot pool of one family is too narrow (thresholds from review:)', () => {
    const { analysis } = analyzePool([
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c6g'] },
    ]);
    const n = expected((l) => label(l, 'instance-family') === 'c6g').length;
    expect(analysis.findings.find((f) => f.code === 'spot-too-narrow')!.message).toBe(
      `Spot pool "p" admits ${n} types in 1 families (c6g), fewer than 10 types or 3 families: AWS's Spot best practices ask for flexibility across many instance types and families, so one reclaimed capacity pool does not stop scaling (thresholds: review.spotMinTypes, review.spotMinFamilies)`,
    );
    const relaxed = analyzePool(
      [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
        { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c6g'] },
      ],
      {},
      { review: { spotMinFamilies: 1, spotMinTypes: 1 } },
    );
    expect(relaxed.analysis.findings.filter((f) => f.code === 'spot-too-narrow')).toEqual([]);
  });

  it('issue 15: the old spot-small requirements admit Xen and sub-2 GiB types, listed', () => {
    const { analysis } = analyzePool([
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 't'] },
      { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['4'] },
    ]);
    const base = (l: Record<string, string>) => ['c', 'm', 't'].includes(label(l, 'instance-category')!) && num(l, 'instance-cpu') <= 4;
    const xen = expected((l) => base(l) && label(l, 'instance-hypervisor') === 'xen');
    const tiny = expected((l) => base(l) && num(l, 'instance-memory') < 2048);
    expect([xen.length, tiny.length]).toEqual([23, 11]);
    const finding = analysis.findings.find((f) => f.code === 'old-or-tiny-types')!;
    expect(finding.severity).toBe('warning');
    expect(finding.message).toContain(`admits 23 previous-generation Xen type(s) (${xen.slice(0, 5).join(', ')} and 18 more) and 11 type(s) with less than 2 GiB of memory (${tiny.slice(0, 5).join(', ')} and 6 more)`);
    const floor = analyzePool([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['t3'] }], {}, { review: { memoryFloor: '8Gi' } });
    expect(floor.analysis.findings.find((f) => f.code === 'old-or-tiny-types')!.message).toContain(`type(s) with less than 8 GiB of memory (${expected((l) => label(l, 'instance-family') === 't3' && num(l, 'instance-memory') < 8192).join(', ')})`);
  });

  it('@latest in production warns once, from here (moved from the environment loader)', () => {
    const { analysis } = analyzePool([], {}, { production: true });
    expect(analysis.findings.filter((f) => f.code === 'ami-latest-in-production')).toEqual([
      {
        severity: 'warning',
        code: 'ami-latest-in-production',
        path: 'nodeClasses[0].amiSelectorTerms (default)',
        message: '"al2023@latest" in a production environment: every new AMI release rolls all nodes of this class (drift); pin a version such as al2023@v20261115',
      },
    ]);
    expect(analyzePool([]).analysis.findings.filter((f) => f.code === 'ami-latest-in-production')).toEqual([]);
  });

  it('infos: only the default budget; two pools of equal weight admitting the same types', () => {
    const { analysis } = analyzeDoc({
      nodePools: [
        { name: 'a', requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5', 'm6i'] }], limits: { cpu: '10' } },
        { name: 'b', requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m6i', 'm7i'] }], limits: { cpu: '10' }, disruption: { budgets: [{ nodes: '1' }] } },
        { name: 'c', weight: 5, requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m6i'] }], limits: { cpu: '10' }, disruption: { budgets: [{ nodes: '1' }] } },
      ],
    });
    const m6i = expected((l) => label(l, 'instance-family') === 'm6i').length;
    expect(analysis.findings.filter((f) => f.severity === 'info')).toEqual([
      {
        severity: 'info',
        code: 'no-budgets',
        path: 'nodePools[0]',
        message: 'NodePool "a" has only Karpenter\'s default disruption budget (10% of its nodes at a time, at any hour): consolidation and drift may replace nodes during business hours',
      },
      {
        severity: 'info',
        code: 'overlapping-equal-weight',
        path: 'nodePools[1]',
        message: `NodePools "a" and "b" both admit ${m6i} of the same types with equal weight 0: for a pod both accept, which one Karpenter picks is not obvious (set weight, or taints, to make it explicit)`,
      },
    ]);
  });
});

describe('shipped environments', () => {
  const result = synthesize({ root: REPO });
  const pools = Object.fromEntries(result.environments.flatMap((e) => e.analysis!.pools.map((p) => [`${e.environment.name}/${p.name}`, p.admitted.map((t) => t.name)])));

  it('admitted counts, each recomputed from the raw catalogue', () => {
    const cat = (l: Record<string, string>) => label(l, 'instance-category')!;
    const fam = (l: Record<string, string>) => label(l, 'instance-family')!;
    const notTiny = (l: Record<string, string>) => !['nano', 'micro', 'small'].includes(label(l, 'instance-size')!);
    const want = {
      'dev/default': expected((l) => ['c', 'm', 't'].includes(cat(l)) && num(l, 'instance-cpu') <= 4 && label(l, 'instance-hypervisor') !== 'xen' && notTiny(l)),
      'prod/default': expected((l) => l['kubernetes.io/arch'] === 'amd64' && ['c', 'm', 'r'].includes(cat(l)) && num(l, 'instance-generation') > 5),
      'prod/critical': expected((l) => l['kubernetes.io/arch'] === 'amd64' && ['m', 'r'].includes(cat(l)) && num(l, 'instance-generation') > 5),
      'staging/spot-compute': expected((l) => ['c5', 'c6g', 'm5', 'm6g', 'r5', 'r6g'].includes(fam(l)) && notTiny(l)),
      'staging/batch': expected((l) => ['c5', 'c6a', 'c6g', 'c6i', 'c7a', 'c7g', 'c7i'].includes(fam(l)) && notTiny(l) && label(l, 'instance-size') !== 'medium'),
    };
    expect(pools).toEqual(want);
    expect(Object.fromEntries(Object.entries(pools).map(([k, v]) => [k, v.length]))).toEqual({
      'dev/default': 144,
      'prod/default': 406,
      'prod/critical': 264,
      'staging/spot-compute': 54,
      'staging/batch': 68,
    });
  });

  it('only prod warns (its deliberate @latest), nothing fails, and the analysis is deterministic', () => {
    expect(result.environments.flatMap((e) => e.analysis!.findings.filter((f) => f.severity !== 'info').map((f) => `${e.environment.name}: ${f.code}`))).toEqual(['prod: ami-latest-in-production']);
    const prod = result.environments.find((e) => e.environment.name === 'prod')!;
    expect(analyzeEnvironment(prod.environment, prod.objects, CATALOGUE)).toEqual(prod.analysis);
  });
});

function cpuOf(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}
function memOf(q: string): number {
  const units: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024 };
  const m = /^(\d+)(Ki|Mi|Gi)$/.exec(q)!;
  return Number(m[1]) * units[m[2]!]!;
}
