import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadEnvironment, loadEnvironments, parseEnvironment, quantityValue } from '../../config/environment.js';
import { ConfigError } from '../../config/errors.js';
import { REPO } from '../support/repo.js';

const FILE = 'environments/prod.yaml';
const prod = () => parse(readFileSync(join(REPO, FILE), 'utf8'));

/** GIVEN the shipped prod environment, WHEN `edit` breaks it, THEN parsing fails with exactly `message`. */
function rejects(edit: (env: any) => void): string {
  const env = prod();
  edit(env);
  try {
    parseEnvironment(FILE, stringify(env));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('environment files: bad input is named by file, field path, value and what is allowed', () => {
  it.each([
    [
      'unknown key at the top level',
      (e: any) => (e.clustr = 1),
      'environments/prod.yaml: (top level): unknown field "clustr"; allowed: production, cluster, karpenter, nodeClasses, nodePools, workloads',
    ],
    [
      'unknown key in a node pool',
      (e: any) => (e.nodePools[0].expireAfterr = '1h'),
      'environments/prod.yaml: nodePools[0]: unknown field "expireAfterr"; allowed: name, preset, nodeClass, requirements, labels, annotations, taints, startupTaints, expireAfter, terminationGracePeriod, limits, weight, replicas, disruption',
    ],
    [
      'a cluster name too long for the IAM role and EventBridge rule names made from it',
      (e: any) => (e.cluster.name = 'k'.repeat(44)),
      `environments/prod.yaml: cluster.name: must be a cluster name of letters, digits, "-" and "_", at most 43 characters (it becomes part of IAM role and EventBridge rule names, 64 characters max), got "${'k'.repeat(44)}"`,
    ],
    ['wrong type', (e: any) => (e.karpenter.replicas = 'two'), 'environments/prod.yaml: karpenter.replicas: must be a number, got string "two"'],
    ['wrong type (boolean)', (e: any) => (e.nodePools[1].weight = true), 'environments/prod.yaml: nodePools[1].weight: must be a number, got boolean true'],
    [
      'duration Karpenter rejects: 1x',
      (e: any) => (e.nodePools[0].expireAfter = '1x'),
      'environments/prod.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
    ],
    [
      'duration Karpenter rejects: -5m',
      (e: any) => (e.nodePools[0].disruption = { consolidateAfter: '-5m' }),
      'environments/prod.yaml: nodePools[0].disruption.consolidateAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "-5m"',
    ],
    [
      'budget nodes above 100%',
      (e: any) => (e.nodePools[1].disruption.budgets[0].nodes = '150%'),
      'environments/prod.yaml: nodePools[1].disruption.budgets[0].nodes: must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%), got "150%"',
    ],
    [
      'budget nodes not an integer',
      (e: any) => (e.nodePools[1].disruption.budgets[0].nodes = 1.5),
      'environments/prod.yaml: nodePools[1].disruption.budgets[0].nodes: must be a whole number of nodes (e.g. 5) or a percentage from 0% to 100% (e.g. 10%), got 1.5',
    ],
    [
      'budget with schedule but no duration',
      (e: any) => (e.nodePools[1].disruption.budgets[1] = { nodes: '0', schedule: '0 9 * * mon-fri' }),
      'environments/prod.yaml: nodePools[1].disruption.budgets[1].duration: is required when schedule is set (a budget window needs both a start and a length), got nothing',
    ],
    [
      'invalid cron: hour out of range',
      (e: any) => (e.nodePools[1].disruption.budgets[1].schedule = '0 25 * * mon-fri'),
      'environments/prod.yaml: nodePools[1].disruption.budgets[1].schedule: must be a cron schedule such as "0 9 * * mon-fri" or @daily (hour field "25": "25" is not a valid hour (0-23)), got "0 25 * * mon-fri"',
    ],
    [
      'invalid cron: not five fields',
      (e: any) => (e.nodePools[1].disruption.budgets[1].schedule = 'every day'),
      'environments/prod.yaml: nodePools[1].disruption.budgets[1].schedule: must be a cron schedule such as "0 9 * * mon-fri" or @daily (has 2 fields, needs 5 (minute hour day-of-month month day-of-week)), got "every day"',
    ],
    [
      'a cron schedule with a non-breaking space (JavaScript and robfig accept it, the API server does not)',
      (e: any) => (e.nodePools[1].disruption.budgets[1].schedule = '0 9 * *\u00a0mon-fri'),
      'environments/prod.yaml: nodePools[1].disruption.budgets[1].schedule: must be a cron schedule such as "0 9 * * mon-fri" or @daily (contains "\u00a0" (U+00A0); use plain spaces), got "0 9 * *\u00a0mon-fri"',
    ],
    [
      'requirement operator outside the allowed set',
      (e: any) => (e.nodePools[1].requirements[0].operator = 'Equals'),
      'environments/prod.yaml: nodePools[1].requirements[0].operator: must be one of "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", got "Equals"',
    ],
    [
      'Gt with a non-integer value',
      (e: any) => (e.nodePools[1].requirements[3].values = ['five']),
      'environments/prod.yaml: nodePools[1].requirements[3].values: must be a single non-negative integer for operator Gt, got ["five"]',
    ],
    [
      'In with no values',
      (e: any) => (e.nodePools[1].requirements[0].values = []),
      'environments/prod.yaml: nodePools[1].requirements[0].values: must list at least one value for operator In, got []',
    ],
    [
      'minValues larger than the number of values',
      (e: any) => (e.nodePools[1].requirements[2].minValues = 3),
      'environments/prod.yaml: nodePools[1].requirements[2].minValues: must not exceed the number of values (2) of this requirement, got 3',
    ],
    [
      'a NodePool pointing at a node class that does not exist',
      (e: any) => (e.nodePools[1].nodeClass = 'gpu'),
      'environments/prod.yaml: nodePools[1].nodeClass: must name one of the nodeClasses (default), got "gpu"',
    ],
    [
      'duplicate node pool names',
      (e: any) => (e.nodePools[1].name = 'default'),
      'environments/prod.yaml: nodePools[1].name: must be unique among node pools; "default" is already used at index 0, got "default"',
    ],
    [
      'a node pool name longer than a label value (it labels every node)',
      (e: any) => (e.nodePools[1].name = 'p'.repeat(64)),
      `environments/prod.yaml: nodePools[1].name: must be at most 63 characters: it becomes a label value on every node, got "${'p'.repeat(64)}"`,
    ],
    [
      'duplicate node class names',
      (e: any) => e.nodeClasses.push({ name: 'default' }),
      'environments/prod.yaml: nodeClasses[1].name: must be unique among node classes; "default" is already used at index 0, got "default"',
    ],
    [
      'restricted requirement key kubernetes.io/hostname',
      (e: any) => e.nodePools[1].requirements.push({ key: 'kubernetes.io/hostname', operator: 'Exists' }),
      'environments/prod.yaml: nodePools[1].requirements[4].key: label "kubernetes.io/hostname" is restricted: Karpenter sets it per node, got "kubernetes.io/hostname"',
    ],
    [
      'restricted label karpenter.sh/nodepool',
      (e: any) => (e.nodePools[1].labels['karpenter.sh/nodepool'] = 'x'),
      'environments/prod.yaml: nodePools[1].labels["karpenter.sh/nodepool"]: key label "karpenter.sh/nodepool" is restricted: Karpenter sets it to the NodePool name, got "karpenter.sh/nodepool"',
    ],
    [
      'restricted label domain karpenter.k8s.aws',
      (e: any) => e.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/made-up', operator: 'Exists' }),
      'environments/prod.yaml: nodePools[1].requirements[4].key: label domain "karpenter.k8s.aws" is restricted to its well-known labels (instance-category, instance-family, instance-generation, instance-size, ...), got "karpenter.k8s.aws/made-up"',
    ],
    [
      'a label in the kubernetes.io domain (Karpenter refuses it at run time, no CRD rule does)',
      (e: any) => (e.nodePools[1].labels['node-role.kubernetes.io/spot'] = ''),
      'environments/prod.yaml: nodePools[1].labels["node-role.kubernetes.io/spot"]: key label domain "kubernetes.io" is restricted: Karpenter refuses the NodePool at run time; use a well-known label (topology.kubernetes.io/zone, kubernetes.io/arch, node.kubernetes.io/instance-type, ...), node.kubernetes.io/*, or a domain of your own, got "node-role.kubernetes.io/spot"',
    ],
    [
      'a requirement in the k8s.io domain',
      (e: any) => e.nodePools[1].requirements.push({ key: 'example.k8s.io/tier', operator: 'Exists' }),
      'environments/prod.yaml: nodePools[1].requirements[4].key: label domain "k8s.io" is restricted: Karpenter refuses the NodePool at run time; use a well-known label (topology.kubernetes.io/zone, kubernetes.io/arch, node.kubernetes.io/instance-type, ...), node.kubernetes.io/*, or a domain of your own, got "example.k8s.io/tier"',
    ],
    [
      'role and instanceProfile together',
      (e: any) => Object.assign(e.nodeClasses[0], { role: 'a', instanceProfile: 'b' }),
      'environments/prod.yaml: nodeClasses[0].instanceProfile: must not be set together with role (Karpenter takes one or the other), got "b"',
    ],
  ])('%s', (_name, edit, message) => {
    expect(rejects(edit)).toBe(message);
  });

  it('several requirements on one key are allowed: Karpenter intersects them (a range)', () => {
    const env = prod();
    env.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['2'] });
    env.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['8'] });
    expect(parseEnvironment(FILE, stringify(env)).config.nodePools[1]!.requirements!.filter((r) => r.key === 'karpenter.k8s.aws/instance-cpu')).toHaveLength(2);
  });

  it('well-known labels and the exception domains stay allowed', () => {
    const env = prod();
    env.nodePools[1].requirements.push({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] });
    env.nodePools[1].requirements.push({ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5.large'] });
    env.nodePools[1].labels['node.kubernetes.io/lifecycle'] = 'karpenter';
    env.nodePools[1].labels['example.com/team'] = 'platform';
    // Deprecated keys Karpenter normalizes in requirements (not in labels).
    env.nodePools[1].requirements.push({ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['amd64'] });
    env.nodeClasses[0].kubelet = { evictionSoft: { 'memory.available': '5%' }, evictionSoftGracePeriod: { 'memory.available': '1.5m' } };
    expect(() => parseEnvironment(FILE, stringify(env))).not.toThrow();
  });

  it('lists every problem of a file at once', () => {
    const message = rejects((e) => {
      e.nodePools[0].expireAfter = '1x';
      e.karpenter.replicas = 0;
    });
    expect(message.split('\n')).toEqual([
      'environments/prod.yaml: karpenter.replicas: must be at least 1, got 0',
      'environments/prod.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
    ]);
  });

  it('an environment file that is not YAML', () => {
    expect(() => parseEnvironment(FILE, 'cluster: [a\nb: : c')).toThrow(
      'environments/prod.yaml: (top level): is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1\n' +
        'environments/prod.yaml: (top level): is not valid YAML: Nested mappings are not allowed in compact mappings at line 2, column 4',
    );
  });

  it('YAML that is not a map', () => {
    expect(() => parseEnvironment(FILE, '- a\n- b\n')).toThrow('environments/prod.yaml: (top level): must be a YAML map with cluster, nodeClasses and nodePools, got ["a","b"]');
  });

  it('a duplicate key in the YAML', () => {
    expect(() => parseEnvironment(FILE, 'production: true\nproduction: false\n')).toThrow('environments/prod.yaml: (top level): is not valid YAML: Map keys must be unique at line 2, column 1');
  });

  it('an unknown environment name', () => {
    expect(() => loadEnvironments(join(REPO, 'environments'), ['qa'], REPO)).toThrow('environments: (top level): has no environment "qa"; environments are: dev, prod, staging');
  });
});

describe('shipped environments', () => {
  it.each(['dev', 'staging', 'prod'])('%s is valid', (env) => {
    const loaded = loadEnvironment(join(REPO, 'environments', `${env}.yaml`), `environments/${env}.yaml`);
    expect(loaded.name).toBe(env);
    expect(loaded.config.cluster.name).toBe(`karpenter-${env}`);
  });

  it('fills SPEC defaults: Kubernetes 1.36, 2 x t3.medium system nodes labelled node-role=system, pod identity, chart 1.13.1, controller resources', () => {
    const { config } = parseEnvironment('environments/x.yaml', stringify({ cluster: { name: 'c', region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-01234567', 'subnet-01234568'] }, nodeClasses: [{ name: 'default' }], nodePools: [{ name: 'default' }] }));
    expect(config.cluster).toMatchObject({ kubernetesVersion: '1.36', identity: 'podIdentity', systemNodeGroup: { instanceTypes: ['t3.medium'], size: 2, labels: { 'node-role': 'system' } } });
    expect(config.karpenter).toEqual({
      chartVersion: '1.13.1',
      namespace: 'kube-system',
      replicas: 2,
      resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '512Mi' } },
    });
  });

  it('warns (does not fail) on an unpinned AMI alias in production', () => {
    const loaded = loadEnvironment(join(REPO, FILE), FILE);
    expect(loaded.warnings).toEqual([
      'environments/prod.yaml: nodeClasses[0].amiSelectorTerms[0].alias: "al2023@latest" in a production environment: every new AMI release rolls all nodes of this class (drift); pin a version such as al2023@v20261115',
    ]);
    const staging = loadEnvironment(join(REPO, 'environments/staging.yaml'), 'environments/staging.yaml');
    expect(staging.warnings).toEqual([]);
  });
});

describe('cluster and karpenter sections: what EKS, the API server or the chart would refuse later', () => {
  it.each([
    [
      'more controller replicas than system nodes (the chart requires one per node)',
      (e: any) => (e.karpenter.replicas = 3),
      'environments/prod.yaml: karpenter.replicas: must be at most cluster.systemNodeGroup.size (2): the chart\'s required anti-affinity puts one controller per system node, the rest would stay Pending, got 3',
    ],
    [
      'controller cpu request above its limit',
      (e: any) => (e.karpenter.resources = { requests: { cpu: '2', memory: '512Mi' }, limits: { cpu: '1500m', memory: '512Mi' } }),
      'environments/prod.yaml: karpenter.resources.requests.cpu: must be at most the limit 1500m (limits.cpu), got "2"',
    ],
    [
      'controller memory request above its limit, in other units',
      (e: any) => (e.karpenter.resources = { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1000M' } }),
      'environments/prod.yaml: karpenter.resources.requests.memory: must be at most the limit 1000M (limits.memory), got "1Gi"',
    ],
    [
      'a subnet listed twice',
      (e: any) => e.cluster.privateSubnetIds.push(e.cluster.privateSubnetIds[0]),
      'environments/prod.yaml: cluster.privateSubnetIds[3]: must not repeat a subnet (already at index 0), got "subnet-0a1b2c3d4e5f60001"',
    ],
    [
      'a CIDR octet above 255',
      (e: any) => (e.cluster.publicAccessCidrs = ['203.0.113.256/24']),
      'environments/prod.yaml: cluster.publicAccessCidrs[0]: must be an IPv4 CIDR such as 203.0.113.0/24 (four octets 0-255, prefix 0-32), got "203.0.113.256/24"',
    ],
    [
      'a CIDR prefix above 32',
      (e: any) => (e.cluster.publicAccessCidrs = ['203.0.113.0/33']),
      'environments/prod.yaml: cluster.publicAccessCidrs[0]: must be an IPv4 CIDR such as 203.0.113.0/24 (four octets 0-255, prefix 0-32), got "203.0.113.0/33"',
    ],
    [
      'a CIDR listed twice',
      (e: any) => (e.cluster.publicAccessCidrs = ['203.0.113.0/24', '203.0.113.0/24']),
      'environments/prod.yaml: cluster.publicAccessCidrs[1]: must not repeat a CIDR (already at index 0), got "203.0.113.0/24"',
    ],
    [
      'a system node group label value with a space',
      (e: any) => (e.cluster.systemNodeGroup.labels = { 'node-role': 'system nodes' }),
      'environments/prod.yaml: cluster.systemNodeGroup.labels.node-role: must be a label value: letters, digits, "-", "_" or ".", starting and ending alphanumeric, got "system nodes"',
    ],
    [
      'a system node group label key that is not a label key',
      (e: any) => (e.cluster.systemNodeGroup.labels = { 'Node Role': 'system' }),
      'environments/prod.yaml: cluster.systemNodeGroup.labels["Node Role"]: key must be a label key: an optional DNS prefix and "/", then letters, digits, "-", "_" or ".", got "Node Role"',
    ],
    [
      'a system node group label name over 63 characters',
      (e: any) => (e.cluster.systemNodeGroup.labels = { [`example.com/${'n'.repeat(64)}`]: 'system' }),
      `environments/prod.yaml: cluster.systemNodeGroup.labels["example.com/${'n'.repeat(64)}"]: key must have a name part (after the last "/") of at most 63 characters, got "example.com/${'n'.repeat(64)}"`,
    ],
    [
      'no system node group label (nothing to pin the controller to)',
      (e: any) => (e.cluster.systemNodeGroup.labels = {}),
      'environments/prod.yaml: cluster.systemNodeGroup.labels: must have at least one label: the Karpenter controller is pinned to the system node group by its labels, got {}',
    ],
  ])('%s', (_, edit, message) => {
    expect(rejects(edit)).toBe(message);
  });

  it('GIVEN replicas equal to the system group size and requests equal to limits WHEN parsed THEN accepted', () => {
    const env = prod();
    env.cluster.systemNodeGroup.size = 3;
    env.karpenter.replicas = 3;
    env.karpenter.resources = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1024Mi' } };
    env.cluster.publicAccessCidrs = ['0.0.0.0/0', '255.255.255.255/32'];
    expect(parseEnvironment(FILE, stringify(env)).config.karpenter.replicas).toBe(3);
  });

  it.each([
    ['500m', 0.5],
    ['1', 1],
    ['1.5', 1.5],
    ['1Gi', 2 ** 30],
    ['1000M', 1e9],
    ['1e3', 1000],
    ['2k', 2000],
  ])('quantityValue(%s) = %d', (q, v) => {
    expect(quantityValue(q)).toBe(v);
  });
});

describe('values are shown as written in the file', () => {
  /** GIVEN the shipped prod text WHEN `from` is replaced by `to` THEN parsing fails with the returned message. */
  function rejectsText(from: string | RegExp, to: string): string {
    const text = readFileSync(join(REPO, FILE), 'utf8');
    const edited = text.replace(from, to);
    expect(edited).not.toBe(text);
    try {
      parseEnvironment(FILE, edited);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('expected a ConfigError');
  }

  it.each([
    ['a version YAML reads as the number 1.3', /kubernetesVersion: "?1\.\d+"?/, 'kubernetesVersion: 1.30', 'environments/prod.yaml: cluster.kubernetesVersion: must be a string, got number 1.30'],
    ['a number in exponent form above its maximum', 'weight: 10\n', 'weight: 1e3\n', 'environments/prod.yaml: nodePools[1].weight: must be an integer from 1 to 100, got 1e3'],
    ['a hexadecimal number where a string belongs', /region: us-east-1/, 'region: 0x1F', 'environments/prod.yaml: cluster.region: must be a string, got number 0x1F'],
    ['a !!binary scalar where a string belongs', /region: us-east-1/, 'region: !!binary dXMtZWFzdC0x', 'environments/prod.yaml: cluster.region: must be a string, got a !!binary scalar "dXMtZWFzdC0x"'],
  ])('%s', (_, from, to, message) => {
    expect(rejectsText(from, to)).toBe(message);
  });
});
