import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseEnvironment } from '../../config/environment.js';
import { ConfigError } from '../../config/errors.js';

/**
 * Workload rules the API server applies to the Deployment after synth (so a bad value would
 * fail at sync time), mirrored in the environment schema. Sources in config/workload-schema.ts.
 */
const FILE = 'environments/test.yaml';
const CLUSTER = { name: 'c', region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] };
const ON_DEMAND_POOLS = [
  { name: 'ondemand', requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] },
  { name: 'batch', preset: 'spot-multi-arch', taints: [{ key: 'workload-class', value: 'batch', effect: 'NoSchedule' }] },
];

function load(workload: Record<string, unknown>, nodePools: unknown[] = ON_DEMAND_POOLS) {
  return parseEnvironment(FILE, stringify({ cluster: CLUSTER, nodeClasses: [{ name: 'default' }], nodePools, workloads: [{ name: 'api', image: 'example/api:1', ...workload }] }));
}

function errors(workload: Record<string, unknown>, nodePools?: unknown[]): string[] {
  try {
    load(workload, nodePools);
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}

describe('workload resources, as the API server checks a container (validateResourceRequirements)', () => {
  it.each([
    [
      'an unknown resource name',
      { requests: { cpus: '1' } },
      `${FILE}: workloads[0].resources.requests.cpus: key must be a container resource: cpu, memory, ephemeral-storage, hugepages-<size>, or an extended resource with its domain such as nvidia.com/gpu, got "cpus"`,
    ],
    [
      'a resource in the kubernetes.io domain',
      { limits: { 'example.kubernetes.io/widget': '1' } },
      `${FILE}: workloads[0].resources.limits["example.kubernetes.io/widget"]: key must be a container resource: cpu, memory, ephemeral-storage, hugepages-<size>, or an extended resource with its domain such as nvidia.com/gpu, got "example.kubernetes.io/widget"`,
    ],
    ['a negative request', { requests: { memory: '-1Mi' } }, `${FILE}: workloads[0].resources.requests.memory: must be a Kubernetes quantity of 0 or more such as "100", 500m or 1000Gi, got "-1Mi"`],
    ['a request above its limit', { requests: { cpu: '1001m' }, limits: { cpu: '1' } }, `${FILE}: workloads[0].resources.requests.cpu: must be at most its limit 1, got "1001m"`],
    ['a request above its limit, in other units', { requests: { memory: '1Gi' }, limits: { memory: '1G' } }, `${FILE}: workloads[0].resources.requests.memory: must be at most its limit 1G, got "1Gi"`],
    [
      'an extended resource requested without a limit',
      { requests: { 'nvidia.com/gpu': '1' } },
      `${FILE}: workloads[0].resources.requests["nvidia.com/gpu"]: needs a limit too (resources.limits["nvidia.com/gpu"], equal to the request): nvidia.com/gpu cannot be overcommitted, got "1"`,
    ],
    [
      'an extended resource requested below its limit',
      { requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '2' } },
      `${FILE}: workloads[0].resources.requests["nvidia.com/gpu"]: must equal its limit 2: nvidia.com/gpu cannot be overcommitted, got "1"`,
    ],
  ])('GIVEN %s THEN it is refused at its field', (_what, resources, message) => {
    expect(errors({ resources })).toEqual([message]);
  });

  it('GIVEN values at the edges (request equal to limit in other units, zero, hugepages, an extended resource with equal request and limit) THEN they are accepted', () => {
    const resources = {
      requests: { cpu: '0.5', memory: '1024Mi', 'ephemeral-storage': '0', 'hugepages-2Mi': '2Mi', 'nvidia.com/gpu': '1' },
      limits: { cpu: '500m', memory: '1Gi', 'hugepages-2Mi': '2Mi', 'nvidia.com/gpu': '1' },
    };
    expect(load({ resources }).config.workloads[0]!.resources).toEqual(resources);
  });
});

describe('workload env var names, as the 1.36 API server accepts them (IsRelaxedEnvVarName)', () => {
  it('GIVEN names starting with a digit, with spaces, colons and other printable ASCII THEN they are accepted', () => {
    const env = { '1PASSWORD_TOKEN': 'a', 'my var': 'b', 'A:B!~': 'c', '{x}': 'd' };
    expect(load({ env }).config.workloads[0]!.env).toEqual(env);
  });

  it.each([
    ['"="', 'A=B'],
    ['a non-ASCII letter', 'CAFÉ'],
    ['a tab', 'A\tB'],
  ])('GIVEN a name with %s THEN it is refused', (_what, name) => {
    expect(errors({ env: { [name]: 'x' } })).toEqual([
      `${FILE}: workloads[0].env${JSON.stringify([name])}: key must be an environment variable name: printable ASCII characters other than "=", got ${JSON.stringify(name)}`,
    ]);
  });
});

describe('capacityType without a nodePool', () => {
  it('GIVEN capacityType spot and no untainted pool that can launch Spot THEN it is refused, naming the pools', () => {
    expect(errors({ capacityType: 'spot' })).toEqual([
      `${FILE}: workloads[0].capacityType: must be a capacity type an untainted NodePool can launch, or pods never schedule; NodePools: "ondemand" (on-demand), "batch" (tainted), got "spot"`,
    ]);
  });

  it('GIVEN one untainted pool that can launch Spot THEN it is accepted', () => {
    const pools = [...ON_DEMAND_POOLS, { name: 'mixed', preset: 'spot-with-on-demand-fallback' }];
    expect(load({ capacityType: 'spot' }, pools).config.workloads[0]!.capacityType).toBe('spot');
  });
});
