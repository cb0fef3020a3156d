import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadEnvironment, loadEnvironments, parseEnvironment, quantityValue } from '../../config/environment.js';
import { ConfigError } from '../../config/errors.js';
import { REPO } from '../support/repo.js';
import { daemonSetsFor } from '../../config/daemonset-overhead.js';

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
      'environments/prod.yaml: (top level): unknown field "clustr"; allowed: production, cluster, karpenter, nodeClasses, nodePools, review, workloads, nodeOverlays, daemonSets',
    ],
    [
      'a DaemonSet request that is not a quantity (npm run simulate)',
      (e: any) => (e.daemonSets = [{ name: 'aws-node', requests: { cpu: 'lots' } }]),
      'environments/prod.yaml: daemonSets[0].requests.cpu: must be a Kubernetes quantity such as "100", 500m or 1000Gi, got "lots"',
    ],
    [
      'a DaemonSet named twice',
      (e: any) => (e.daemonSets = [{ name: 'a' }, { name: 'a' }]),
      'environments/prod.yaml: daemonSets[1].name: must be unique among daemonSets; "a" is already used at index 0, got "a"',
    ],
    [
      'unknown key in a node pool',
      (e: any) => (e.nodePools[0].expireAfterr = '1h'),
      'environments/prod.yaml: nodePools[0]: unknown field "expireAfterr"; allowed: name, preset, nodeClass, requirements, metadata, labels, annotations, taints, startupTaints, expireAfter, terminationGracePeriod, limits, weight, replicas, disruption',
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
    // Karpenter's RuntimeValidate (sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/nodepool_validation.go):
    // the CRD accepts these, Karpenter marks the NodePool not ready.
    [
      'a label name over 63 characters (IsQualifiedName, validateLabels)',
      (e: any) => (e.nodePools[1].labels[`example.com/${'n'.repeat(64)}`] = 'x'),
      `environments/prod.yaml: nodePools[1].labels["example.com/${'n'.repeat(64)}"]: key must have a name part (after the "/") of at most 63 characters (Kubernetes' IsQualifiedName); this one has 64, got "example.com/${'n'.repeat(64)}"`,
    ],
    [
      'a taint value over 63 characters (IsQualifiedName, validateTaintsField)',
      (e: any) => (e.nodePools[1].taints[0].value = 'v'.repeat(64)),
      `environments/prod.yaml: nodePools[1].taints[0].value: must have a name part (after the "/") of at most 63 characters (Kubernetes' IsQualifiedName); this one has 64, got "${'v'.repeat(64)}"`,
    ],
    [
      'a taint key and effect repeated in startupTaints (validateTaintsField)',
      (e: any) => (e.nodePools[1].startupTaints = [{ key: 'workload-class', effect: 'NoSchedule' }]),
      'environments/prod.yaml: nodePools[1].startupTaints[0]: must not repeat the key and effect of taints[0] (workload-class:NoSchedule): Karpenter refuses duplicate taint key/effect pairs across taints and startupTaints, got {"key":"workload-class","effect":"NoSchedule"}',
    ],
    [
      'capacity-type In [spott] (validateWellKnownValues)',
      (e: any) => (e.nodePools[1].requirements[0].values = ['spott']),
      'environments/prod.yaml: nodePools[1].requirements[0].values: must include one of on-demand, spot, reserved for karpenter.sh/capacity-type (Karpenter refuses the NodePool otherwise), got ["spott"]',
    ],
    [
      'capacity-type minValues above its known values (validateWellKnownValues)',
      (e: any) => Object.assign(e.nodePools[1].requirements[0], { values: ['spot', 'spott'], minValues: 2 }),
      'environments/prod.yaml: nodePools[1].requirements[0].values: must include at least minValues (2) of on-demand, spot, reserved for karpenter.sh/capacity-type, has 1, got ["spot","spott"]',
    ],
    [
      'instance-tenancy In [shared] (the AWS provider\'s well-known values)',
      (e: any) => e.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/instance-tenancy', operator: 'In', values: ['shared'] }),
      'environments/prod.yaml: nodePools[1].requirements[4].values: must include one of dedicated, default for karpenter.k8s.aws/instance-tenancy (Karpenter refuses the NodePool otherwise), got ["shared"]',
    ],
    [
      'a capacity-type label no offering has (labels are requirements too)',
      (e: any) => (e.nodePools[1].labels = { 'karpenter.sh/capacity-type': 'spott' }),
      'environments/prod.yaml: nodePools[1].labels["karpenter.sh/capacity-type"]: must be one of on-demand, spot, reserved: the label is also a requirement, and no instance or offering has another value, got "spott"\n' +
        'environments/prod.yaml: nodePools[1].requirements[0]: must leave at least one value for karpenter.sh/capacity-type: In [on-demand] and label "spott" admit none (Karpenter intersects them), so the NodePool can never launch a node, got {"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}',
    ],
    [
      'kubernetes.io/arch In [x86_64] (no AWS instance type carries it)',
      (e: any) => (e.nodePools[1].requirements[1].values = ['x86_64']),
      'environments/prod.yaml: nodePools[1].requirements[1].values: must include amd64 or arm64 for kubernetes.io/arch: no AWS instance type carries any other value (x86_64 is EC2\'s name for amd64), got ["x86_64"]',
    ],
    [
      'two requirements on one key with no value in common (Requirement.Intersection)',
      (e: any) => e.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/instance-category', operator: 'NotIn', values: ['m', 'r'] }),
      'environments/prod.yaml: nodePools[1].requirements[4]: must leave at least one value for karpenter.k8s.aws/instance-category: In [m, r] and NotIn [m, r] admit none (Karpenter intersects them), so the NodePool can never launch a node, got {"key":"karpenter.k8s.aws/instance-category","operator":"NotIn","values":["m"...',
    ],
    [
      'numeric bounds that cross (Gte 9, Lte 8)',
      (e: any) => e.nodePools[1].requirements.push({ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['9'] }, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['8'] }),
      'environments/prod.yaml: nodePools[1].requirements[5]: must leave at least one value for karpenter.k8s.aws/instance-cpu: Gte [9] and Lte [8] admit none (Karpenter intersects them), so the NodePool can never launch a node, got {"key":"karpenter.k8s.aws/instance-cpu","operator":"Lte","values":["8"]}',
    ],
    [
      'a label that contradicts the preset\'s requirement on its key',
      (e: any) => (e.nodePools[0].labels = { 'karpenter.sh/capacity-type': 'reserved' }),
      'environments/prod.yaml: nodePools[0].labels["karpenter.sh/capacity-type"]: must leave at least one value for karpenter.sh/capacity-type: In [spot, on-demand] and label "reserved" admit none (Karpenter intersects them), so the NodePool can never launch a node, got "reserved"',
    ],
    [
      'a misspelt limit (the cap would silently not exist)',
      (e: any) => (e.nodePools[1].limits = { cpus: '32' }),
      'environments/prod.yaml: nodePools[1].limits.cpus: key must be a resource name: cpu, memory, ephemeral-storage, pods, nodes, or an extended resource with its domain such as nvidia.com/gpu, got "cpus"',
    ],
    [
      'a negative limit',
      (e: any) => (e.nodePools[1].limits = { memory: '-1Gi' }),
      'environments/prod.yaml: nodePools[1].limits.memory: must be a Kubernetes quantity of 0 or more such as "100", 500m or 1000Gi, got "-1Gi"',
    ],
    [
      'expireAfter beyond Go\'s time.ParseDuration range',
      (e: any) => (e.nodePools[1].expireAfter = '9999999999h'),
      'environments/prod.yaml: nodePools[1].expireAfter: must be at most 2562047h47m16s (Go\'s time.ParseDuration limit of 2^63-1 ns: Karpenter cannot decode a longer duration), got "9999999999h"',
    ],
    [
      'terminationGracePeriod beyond Go\'s time.ParseDuration range',
      (e: any) => (e.nodePools[1].terminationGracePeriod = '99999999999999999999s'),
      'environments/prod.yaml: nodePools[1].terminationGracePeriod: must be at most 2562047h47m16s (Go\'s time.ParseDuration limit of 2^63-1 ns: Karpenter cannot decode a longer duration), got "99999999999999999999s"',
    ],
    [
      'a budget duration one second beyond Go\'s range',
      (e: any) => (e.nodePools[1].disruption.budgets[1].duration = '2562047h48m'),
      'environments/prod.yaml: nodePools[1].disruption.budgets[1].duration: must be at most 2562047h47m16s (Go\'s time.ParseDuration limit of 2^63-1 ns: Karpenter cannot decode a longer duration), got "2562047h48m"',
    ],
    // AWS limits EC2 and EKS apply when Karpenter launches (sources in config/karpenter-schema.ts).
    [
      'gp3 iops above the volume type\'s range (AWS EBS volume types)',
      (e: any) => Object.assign(e.nodeClasses[0].blockDeviceMappings[0].ebs, { iops: 80001 }),
      'environments/prod.yaml: nodeClasses[0].blockDeviceMappings[0].ebs.iops: must be from 3000 to 80000 for volumeType gp3 (AWS EBS volume types), got 80001',
    ],
    [
      'gp3 throughput below the range',
      (e: any) => Object.assign(e.nodeClasses[0].blockDeviceMappings[0].ebs, { throughput: 124 }),
      'environments/prod.yaml: nodeClasses[0].blockDeviceMappings[0].ebs.throughput: must be from 125 to 2000 for volumeType gp3 (AWS EBS volume types), got 124',
    ],
    [
      'io1 iops above 64000',
      (e: any) => Object.assign(e.nodeClasses[0].blockDeviceMappings[0].ebs, { volumeType: 'io1', iops: 64001 }),
      'environments/prod.yaml: nodeClasses[0].blockDeviceMappings[0].ebs.iops: must be from 100 to 64000 for volumeType io1 (AWS EBS volume types), got 64001',
    ],
    [
      'throughput on an io2 volume',
      (e: any) => Object.assign(e.nodeClasses[0].blockDeviceMappings[0].ebs, { volumeType: 'io2', iops: 1000, throughput: 500 }),
      'environments/prod.yaml: nodeClasses[0].blockDeviceMappings[0].ebs.throughput: can only be set for volumeType gp3, not io2 (AWS EBS volume types), got 500',
    ],
    [
      'iops on a gp2 volume',
      (e: any) => Object.assign(e.nodeClasses[0].blockDeviceMappings[0].ebs, { volumeType: 'gp2', iops: 3000 }),
      'environments/prod.yaml: nodeClasses[0].blockDeviceMappings[0].ebs.iops: can only be set for volumeType gp3, io1, io2, not gp2 (AWS EBS volume types), got 3000',
    ],
    [
      'a clusterDNS entry that is not an IP address (the kubelet drops it)',
      (e: any) => (e.nodeClasses[0].kubelet = { clusterDNS: ['10.100.0.10', 'kube-dns.kube-system'] }),
      'environments/prod.yaml: nodeClasses[0].kubelet.clusterDNS[1]: must be an IP address such as 10.100.0.10 or fd00::a, got "kube-dns.kube-system"',
    ],
    [
      'an EC2 tag key over 128 characters',
      (e: any) => (e.nodeClasses[0].tags = { ['k'.repeat(129)]: 'v' }),
      `environments/prod.yaml: nodeClasses[0].tags.${'k'.repeat(129)}: key must be at most 128 characters (EC2 tag restrictions), has 129, got "v"`,
    ],
    [
      'an EC2 tag value over 256 characters',
      (e: any) => (e.nodeClasses[0].tags = { team: 'v'.repeat(257) }),
      `environments/prod.yaml: nodeClasses[0].tags.team: must be at most 256 characters (EC2 tag restrictions), has 257, got "${'v'.repeat(76)}...`,
    ],
    [
      'an EC2 tag key in the reserved aws: prefix',
      (e: any) => (e.nodeClasses[0].tags = { 'aws:team': 'a' }),
      'environments/prod.yaml: nodeClasses[0].tags["aws:team"]: key must not start with "aws:", which AWS reserves (EC2 tag restrictions), got "a"',
    ],
    [
      'an al2 alias on Kubernetes 1.33 (EKS publishes no AL2 AMIs there)',
      (e: any) => {
        e.cluster.kubernetesVersion = '1.33';
        e.nodeClasses[0].amiSelectorTerms = [{ alias: 'al2@v20250505' }];
      },
      'environments/prod.yaml: nodeClasses[0].amiSelectorTerms[0].alias: must not be an al2 alias on Kubernetes 1.33: EKS publishes AL2 AMIs up to 1.32 only; use al2023@... or bottlerocket@..., got "al2@v20250505"',
    ],
    [
      'a leftover ${...} placeholder in a selector',
      (e: any) => (e.nodeClasses[0].subnetSelectorTerms = [{ tags: { 'karpenter.sh/discovery': '${CLUSTER_NAME}' } }]),
      'environments/prod.yaml: nodeClasses[0].subnetSelectorTerms[0].tags["karpenter.sh/discovery"]: must not contain the placeholder "${CLUSTER_NAME}": environment files are not templated, so it would reach the cluster as written; write the value itself, got "${CLUSTER_NAME}"',
    ],
    [
      'a leftover ${...} placeholder in role (an error, like every other field)',
      (e: any) => (e.nodeClasses[0].role = 'KarpenterNodeRole-${CLUSTER}'),
      'environments/prod.yaml: nodeClasses[0].role: must not contain the placeholder "${CLUSTER}": environment files are not templated, so it would reach the cluster as written; write the value itself, got "KarpenterNodeRole-${CLUSTER}"',
    ],
    [
      'a leftover ${...} placeholder in a tag key',
      (e: any) => (e.nodeClasses[0].tags = { '${TAG}': 'a' }),
      'environments/prod.yaml: nodeClasses[0].tags["${TAG}"]: key must not contain the placeholder "${TAG}": environment files are not templated; write the value itself, got "a"',
    ],
    [
      'an availability zone without its letter',
      (e: any) => (e.cluster.availabilityZones = ['us-east-1']),
      'environments/prod.yaml: cluster.availabilityZones[0]: must be an availability zone such as us-east-1a, got "us-east-1"',
    ],
    [
      'a review threshold that is not a whole number',
      (e: any) => (e.review = { spotMinTypes: 2.5 }),
      'environments/prod.yaml: review.spotMinTypes: must be an integer, got number 2.5',
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

  it('labels and requirements in the kubernetes.io and k8s.io domains are allowed, as Karpenter v1.13 allows them', () => {
    // Karpenter restricts only karpenter.sh, karpenter.k8s.aws and kubernetes.io/hostname
    // (pkg/apis/v1/labels.go IsRestrictedLabel); the AWS provider keeps kubernetes.io/k8s.io
    // labels off the kubelet's --node-labels only (RejectForbiddenLabels), the controller sets them.
    const env = prod();
    env.nodePools[1].labels['node-role.kubernetes.io/spot'] = '';
    env.nodePools[1].labels['example.k8s.io/tier'] = 'gold';
    env.nodePools[1].labels['node.kubernetes.io/lifecycle'] = 'karpenter';
    env.nodePools[1].labels['node-restriction.kubernetes.io/team'] = 'a';
    env.nodePools[1].labels['example.com/team'] = 'platform';
    env.nodePools[1].requirements.push({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] });
    env.nodePools[1].requirements.push({ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5.large'] });
    env.nodePools[1].requirements.push({ key: 'example.k8s.io/tier', operator: 'Exists' });
    env.nodePools[1].requirements.push({ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['amd64'] });
    env.nodeClasses[0].kubelet = { evictionSoft: { 'memory.available': '5%' }, evictionSoftGracePeriod: { 'memory.available': '1.5m' } };
    const pool = parseEnvironment(FILE, stringify(env)).config.nodePools[1]!;
    expect(pool.labels).toMatchObject({ 'node-role.kubernetes.io/spot': '', 'example.k8s.io/tier': 'gold' });
  });

  it('values at the edge of each Karpenter runtime rule are allowed', () => {
    const env = prod();
    const pool = env.nodePools[1];
    // A 253-character prefix and a 63-character name: 317 characters, the longest qualified name.
    pool.labels[`${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.${'g'.repeat(61)}/${'n'.repeat(63)}`] = 'v'.repeat(63);
    pool.requirements.push({ key: `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.${'g'.repeat(60)}/${'n'.repeat(63)}`, operator: 'Exists' });
    pool.taints[0].value = `example.com/${'v'.repeat(63)}`;
    // Same key, other effect: not a duplicate.
    pool.startupTaints = [{ key: 'workload-class', effect: 'NoExecute' }];
    pool.requirements[0] = { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spott'], minValues: 1 };
    pool.requirements.push({ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['8'] }, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['8'] });
    pool.limits = { cpu: '0', memory: '0Gi', nodes: '10', 'nvidia.com/gpu': '4', 'example.com/widget': '1' };
    pool.expireAfter = '2562047h47m16s';
    pool.terminationGracePeriod = '9223372036s';
    pool.disruption.budgets[1].duration = '2562047h47m';
    expect(() => parseEnvironment(FILE, stringify(env))).not.toThrow();
  });

  it('values at the edge of each AWS rule, and ${...} in free-text fields, are allowed', () => {
    const env = prod();
    const nc = env.nodeClasses[0];
    nc.blockDeviceMappings = [
      { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi', volumeType: 'gp3', iops: 80000, throughput: 2000 } },
      { deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi', volumeType: 'gp3', iops: 3000, throughput: 125 } },
      { deviceName: '/dev/xvdc', ebs: { volumeSize: '100Gi', volumeType: 'io2', iops: 256000 } },
      { deviceName: '/dev/xvdd', ebs: { volumeSize: '100Gi', volumeType: 'io1', iops: 100 } },
    ];
    nc.kubelet = { clusterDNS: ['10.100.0.10', '169.254.20.10', 'fd00:10:96::a', '010.000.000.010'] };
    nc.tags = { ['k'.repeat(128)]: 'v'.repeat(256), 'team:aws': 'x' };
    nc.userData = '#!/bin/bash\necho "${HOSTNAME}"\n';
    env.nodePools[1].annotations = { 'example.com/note': 'uses ${VAR} literally' };
    env.cluster.kubernetesVersion = '1.32';
    nc.amiSelectorTerms = [{ alias: 'al2@v20250505' }];
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
      'environments/prod.yaml:2:1: (top level): is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]\n' +
        'environments/prod.yaml:2:4: (top level): is not valid YAML: Nested mappings are not allowed in compact mappings',
    );
  });

  it('YAML that is not a map', () => {
    expect(() => parseEnvironment(FILE, '- a\n- b\n')).toThrow('environments/prod.yaml: (top level): must be a YAML map with cluster, nodeClasses and nodePools, got ["a","b"]');
  });

  it('a duplicate key in the YAML', () => {
    expect(() => parseEnvironment(FILE, 'production: true\nproduction: false\n')).toThrow('environments/prod.yaml:2:1: (top level): is not valid YAML: Map keys must be unique');
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

  it('leaves the unpinned-AMI warning to the analyzer, its one place (test/analyze/analyze.test.ts)', () => {
    expect(loadEnvironment(join(REPO, FILE), FILE).warnings).toEqual([]);
  });

  it('review defaults: Spot thresholds and the 2 GiB floor; DaemonSets default to the EKS add-ons', () => {
    const config = loadEnvironment(join(REPO, FILE), FILE).config;
    expect(config.review).toEqual({ spotMinTypes: 10, spotMinFamilies: 3, memoryFloor: '2Gi' });
    expect(config.daemonSets).toBeUndefined();
    expect(daemonSetsFor(config)).toEqual({
      source: 'EKS add-on defaults',
      daemonSets: [
        { name: 'aws-node', namespace: 'kube-system', requests: { cpu: '25m' } },
        { name: 'kube-proxy', namespace: 'kube-system', requests: { cpu: '100m' } },
        { name: 'eks-pod-identity-agent', namespace: 'kube-system', requests: {} },
      ],
    });
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
      `environments/prod.yaml: cluster.systemNodeGroup.labels["example.com/${'n'.repeat(64)}"]: key must have a name part (after the "/") of at most 63 characters (Kubernetes' IsQualifiedName); this one has 64, got "example.com/${'n'.repeat(64)}"`,
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
