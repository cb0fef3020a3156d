import { App } from 'cdk8s';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { EnvironmentChart } from '../../charts/environment-chart.js';
import type { Manifest } from '../../charts/render.js';
import { validateConstructs } from '../support/constructs.js';
import { parseEnvironment } from '../../config/environment.js';
import { NODE_POOL_PRESETS } from '../../config/karpenter-schema.js';
import type { InfraOutputs } from '../../config/outputs.js';

/**
 * fast-check arbitraries over the important fields of an environment file, as a user
 * writes them (the zod input), limited to what Karpenter accepts: presets, requirements
 * with every operator, labels, taints, budgets, limits, static pools and node classes.
 */

export const CLUSTER = {
  name: 'karpenter-prop',
  region: 'us-east-1',
  kubernetesVersion: '1.36',
  vpcId: 'vpc-0123456789abcdef0',
  privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
};

export const OUTPUTS: InfraOutputs = {
  clusterName: CLUSTER.name,
  region: CLUSTER.region,
  accountId: '111122223333',
  kubernetesVersion: CLUSTER.kubernetesVersion,
  nodeRoleName: 'KarpenterNodeRole-karpenter-prop',
  nodeRoleArn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-karpenter-prop',
  controllerRoleArn: 'arn:aws:iam::111122223333:role/KarpenterController-karpenter-prop',
  interruptionQueueName: 'karpenter-prop',
  interruptionQueueArn: 'arn:aws:sqs:us-east-1:111122223333:karpenter-prop',
  karpenterChartVersion: '1.13.1',
  kubeconfigCommand: 'aws eks update-kubeconfig --region us-east-1 --name karpenter-prop',
};

const labelValue = fc.constantFrom('a', 'spot', 'on-demand', 'amd64', 'arm64', 'c5', 'm6g', 'x.y_z-1', 'team-a');
const REQUIREMENT_KEYS = [
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'karpenter.sh/capacity-type',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-cpu',
  'topology.kubernetes.io/zone',
  'node.kubernetes.io/instance-type',
  'example.com/team',
];

/** Keys whose In values Karpenter checks (config/karpenter-runtime.ts): draw from the values it knows. */
const KNOWN_VALUES: Record<string, fc.Arbitrary<string>> = {
  'karpenter.sh/capacity-type': fc.constantFrom('spot', 'on-demand', 'reserved'),
  'kubernetes.io/arch': fc.constantFrom('amd64', 'arm64'),
};

const requirement = fc.constantFrom(...REQUIREMENT_KEYS).chain((key) =>
  fc.oneof(
    fc
      .record({ operator: fc.constantFrom('In', 'NotIn'), values: fc.uniqueArray(KNOWN_VALUES[key] ?? labelValue, { minLength: 1, maxLength: 5 }) })
      .chain((r) => fc.record({ minValues: fc.option(fc.integer({ min: 1, max: r.values.length }), { nil: undefined }) }).map((m) => ({ key, ...r, ...(r.operator === 'In' ? m : {}) }))),
    fc.record({ operator: fc.constantFrom('Exists', 'DoesNotExist') }).map((r) => ({ key, ...r })),
    fc.record({ operator: fc.constantFrom('Gt', 'Lt', 'Gte', 'Lte'), values: fc.nat({ max: 1000 }).map((n) => [String(n)]) }).map((r) => ({ key, ...r })),
  ),
);

const budget = fc.record(
  {
    nodes: fc.oneof(fc.nat({ max: 100 }).map((n) => `${n}%`), fc.nat({ max: 1000 }).map(String)),
    window: fc.constantFrom({ schedule: '0 9 * * mon-fri', duration: '8h' }, { schedule: '@daily', duration: '1h30m' }, { schedule: '*/15 * * * *', duration: '10m' }),
    reasons: fc.subarray(['Underutilized', 'Empty', 'Drifted'], { minLength: 1 }),
  },
  { requiredKeys: ['nodes'] },
).map(({ window, ...b }) => ({ ...b, ...window }));

const disruption = fc.record(
  {
    consolidationPolicy: fc.constantFrom('WhenEmpty', 'WhenEmptyOrUnderutilized'),
    consolidateAfter: fc.constantFrom('0s', '30s', '5m', '1h30m', 'Never'),
    budgets: fc.array(budget, { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

const taint = (keys: string[]) =>
  fc.record({ key: fc.constantFrom(...keys), value: labelValue, effect: fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute') }, { requiredKeys: ['key', 'effect'] });
/** Karpenter refuses a key+effect pair twice across taints and startupTaints: draw them unique. */
const byKeyAndEffect = (t: { key: string; effect: string }) => `${t.key}:${t.effect}`;

const poolCommon = {
  requirements: fc.uniqueArray(requirement, { selector: (r) => r.key, maxLength: 4 }),
  // Keys no requirement or preset constrains: a label is also a requirement In [value], and
  // one that contradicts the pool's requirement on its key is refused (empty intersection).
  labels: fc.dictionary(fc.constantFrom('example.com/owner', 'workload-class', 'node-role.kubernetes.io/spot', 'karpenter.k8s.aws/instance-hypervisor'), labelValue, { maxKeys: 3 }),
  taints: fc.uniqueArray(taint(['example.com/dedicated', 'workload-class', 'nvidia.com/gpu']), { selector: byKeyAndEffect, maxLength: 2 }),
  startupTaints: fc.array(taint(['example.com/not-ready', 'node.cilium.io/agent-not-ready']), { maxLength: 1 }),
  expireAfter: fc.constantFrom('720h', '168h', 'Never', '1h30m'),
  terminationGracePeriod: fc.constantFrom('48h', '30m'),
  disruption,
};

const dynamicPool = fc.record(
  {
    ...poolCommon,
    preset: fc.constantFrom(...NODE_POOL_PRESETS),
    limits: fc.record({ cpu: fc.constantFrom('16', '100', '1000'), memory: fc.constantFrom('64Gi', '1000Gi') }, { requiredKeys: [] }),
    weight: fc.integer({ min: 1, max: 100 }),
  },
  { requiredKeys: [] },
);

/** Static pools take neither weight nor limits other than nodes; no preset, whose limits set cpu. */
const staticPool = fc.record(
  { ...poolCommon, replicas: fc.nat({ max: 20 }), limits: fc.record({ nodes: fc.constantFrom('5', '20') }) },
  { requiredKeys: ['replicas'] },
);

const amiChoice = fc.constantFrom(
  {},
  { amiSelectorTerms: [{ alias: 'al2023@latest' }] },
  { amiSelectorTerms: [{ alias: 'al2023@v20250505' }], amiFamily: 'AL2023' },
  { amiSelectorTerms: [{ alias: 'bottlerocket@v1.20.0' }] },
  { amiSelectorTerms: [{ alias: 'windows2022@latest' }], amiFamily: 'Windows2022' },
  { amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }], amiFamily: 'AL2023' },
  { amiSelectorTerms: [{ tags: { Name: 'my-ami' } }, { name: 'my-ami-*', owner: 'self' }], amiFamily: 'Custom' },
);

const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;

const nodeClassFields = fc.record(
  {
    instanceProfile: fc.constant('KarpenterNodeInstanceProfile'),
    tags: fc.dictionary(fc.constantFrom('team', 'cost-center', 'example.com/owner'), fc.constantFrom('platform', '1234', 'a b')),
    kubelet: fc.record(
      {
        maxPods: fc.integer({ min: 1, max: 250 }),
        gc: fc.integer({ min: 1, max: 99 }).chain((low) => fc.integer({ min: low + 1, max: 100 }).map((high) => ({ imageGCLowThresholdPercent: low, imageGCHighThresholdPercent: high }))),
        // Every key: the zod layer rejects partial maps (see KNOWN_ZOD_GAPS in properties.test.ts).
        soft: fc.constant(EVICTION_SIGNALS),
        systemReserved: fc.record({ cpu: fc.constantFrom('100m', '1'), memory: fc.constantFrom('100Mi', '1Gi'), 'ephemeral-storage': fc.constant('1Gi'), pid: fc.constant('100') }),
      },
      { requiredKeys: [] },
    ).map(({ gc, soft, ...k }) => ({
      ...k,
      ...gc,
      ...(soft && { evictionSoft: Object.fromEntries(soft.map((s) => [s, '10%'])), evictionSoftGracePeriod: Object.fromEntries(soft.map((s) => [s, '1m'])) }),
    })),
    blockDeviceMappings: fc.constant([{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi', volumeType: 'gp3', encrypted: true } }]),
    metadataOptions: fc.constant({ httpTokens: 'required', httpPutResponseHopLimit: 2 }),
  },
  { requiredKeys: [] },
);

/** A whole environment file's content (before zod), valid by construction. */
export const environmentInput = fc
  .record({
    classNames: fc.uniqueArray(fc.constantFrom('default', 'gpu', 'arm', 'windows'), { minLength: 1, maxLength: 3 }),
    poolNames: fc.uniqueArray(fc.constantFrom('default', 'spot', 'batch', 'critical', 'static-a'), { minLength: 1, maxLength: 4 }),
  })
  .chain(({ classNames, poolNames }) =>
    fc.record({
      production: fc.boolean(),
      cluster: fc.constant(CLUSTER),
      nodeClasses: fc.tuple(...classNames.map((name) => fc.tuple(amiChoice, nodeClassFields).map(([ami, rest]) => ({ name, ...ami, ...rest })))),
      nodePools: fc.tuple(
        ...poolNames.map((name) =>
          fc.tuple(fc.oneof({ weight: 4, arbitrary: dynamicPool }, { weight: 1, arbitrary: staticPool }), fc.constantFrom(...classNames)).map(([pool, nodeClass]) => ({ name, nodeClass, ...pool })),
        ),
      ),
    }),
  );

export type EnvironmentInput = Record<string, unknown>;

/** Environment input -> rendered objects, through the real zod layer and charts (nothing written). */
export function synthesizeInput(input: unknown): Manifest[] {
  const environment = parseEnvironment('environments/prop.yaml', stringify(input));
  const chart = new EnvironmentChart(new App(), { environment, outputs: OUTPUTS });
  validateConstructs(chart);
  return chart.toJson() as Manifest[];
}

type Env = { nodeClasses: Array<Record<string, unknown>>; nodePools: Array<Record<string, unknown>> };

/** Changes Karpenter forbids, each applied to one pool or class of a valid input. */
export const FORBIDDEN_MUTATIONS: ReadonlyArray<readonly [string, (env: Env, i: number) => void]> = [
  ['unknown requirement operator', (e, i) => pool(e, i).requirements = [...list(pool(e, i).requirements), { key: 'example.com/x', operator: 'Equals', values: ['a'] }]],
  ['restricted label domain', (e, i) => (pool(e, i).labels = { ...(pool(e, i).labels as object), 'karpenter.sh/team': 'a' })],
  ['restricted requirement key', (e, i) => pool(e, i).requirements = [...list(pool(e, i).requirements), { key: 'kubernetes.io/hostname', operator: 'Exists' }]],
  ['weight over 100', (e, i) => (pool(e, i).weight = 101)],
  ['budget over 100%', (e, i) => (pool(e, i).disruption = { consolidateAfter: '1m', budgets: [{ nodes: '110%' }] })],
  ['budget schedule without duration', (e, i) => (pool(e, i).disruption = { consolidateAfter: '1m', budgets: [{ nodes: '1', schedule: '@daily' }] })],
  ['unknown pool field', (e, i) => (pool(e, i).nodeclass = 'default')],
  ['expireAfter in days', (e, i) => (pool(e, i).expireAfter = '30d')],
  ['minValues above the values', (e, i) => pool(e, i).requirements = [...list(pool(e, i).requirements).filter((r) => (r as { key: string }).key !== 'example.com/mv'), { key: 'example.com/mv', operator: 'In', values: ['a'], minValues: 2 }]],
  ['static pool on a preset with cpu limits', (e, i) => {
    const p = pool(e, i);
    delete p.weight;
    delete p.limits;
    Object.assign(p, { replicas: 3, preset: 'spot-multi-arch' });
  }],
  ['restricted tag', (e, i) => (cls(e, i).tags = { 'kubernetes.io/cluster/karpenter-prop': 'owned' })],
  ['role and instanceProfile', (e, i) => Object.assign(cls(e, i), { role: 'r', instanceProfile: 'p' })],
  ['image GC high not above low', (e, i) => (cls(e, i).kubelet = { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 50 })],
  ['unknown AMI alias family', (e, i) => {
    const c = cls(e, i);
    delete c.amiFamily;
    c.amiSelectorTerms = [{ alias: 'ubuntu@latest' }];
  }],
  ['AMI id without amiFamily', (e, i) => {
    const c = cls(e, i);
    delete c.amiFamily;
    c.amiSelectorTerms = [{ id: 'ami-0123456789abcdef0' }];
  }],
  ['alias with an amiFamily of another family', (e, i) => Object.assign(cls(e, i), { amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], amiFamily: 'AL2023' })],
  ['taint key and effect repeated in startupTaints', (e, i) => {
    const p = pool(e, i);
    p.taints = [{ key: 'example.com/dup', effect: 'NoSchedule' }];
    p.startupTaints = [{ key: 'example.com/dup', value: 'x', effect: 'NoSchedule' }];
  }],
  ['capacity type no instance offers', (e, i) => (pool(e, i).requirements = [...list(pool(e, i).requirements).filter((r) => (r as { key: string }).key !== 'karpenter.sh/capacity-type'), { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spott'] }])],
  ['requirements on one key with nothing in common', (e, i) => (pool(e, i).requirements = [...list(pool(e, i).requirements).filter((r) => (r as { key: string }).key !== 'example.com/x'), { key: 'example.com/x', operator: 'In', values: ['a'] }, { key: 'example.com/x', operator: 'NotIn', values: ['a'] }])],
  ['misspelt limit', (e, i) => {
    const p = pool(e, i);
    if (p.replicas !== undefined) p.limits = { nodez: '5' };
    else p.limits = { cpus: '10' };
  }],
  ['expireAfter beyond Go\'s duration range', (e, i) => (pool(e, i).expireAfter = '2562048h')],
  ['two root volumes', (e, i) => (cls(e, i).blockDeviceMappings = [1, 2].map((n) => ({ deviceName: `/dev/xvd${n}`, rootVolume: true, ebs: { volumeSize: '20Gi' } })))],
];

const pool = (e: Env, i: number) => e.nodePools[i % e.nodePools.length]!;
const cls = (e: Env, i: number) => e.nodeClasses[i % e.nodeClasses.length]!;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
