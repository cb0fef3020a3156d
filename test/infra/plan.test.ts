import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../../config/environment.js';
import { MANAGED, desiredFrom, ownerTags, type DesiredState } from '../../infra/desired.js';
import type { Observed } from '../../infra/model.js';
import { CONTROLLER_POLICY_NAME, RULE_TARGET_ID, podIdentityTrust, serviceTrust } from '../../infra/policies.js';
import { R, controllerPolicyFor, desiredQueueAttributes, managedArn, planApply, planDestroy, queueArn, renderPlan } from '../../infra/plan.js';

const yaml = `
cluster:
  name: demo
  region: us-east-1
  vpcId: vpc-0123456789abcdef0
  privateSubnetIds: [subnet-0000000000000000a, subnet-0000000000000000b]
nodeClasses: [{ name: default }]
nodePools: [{ name: default, nodeClass: default }]
`;
const desired: DesiredState = desiredFrom(parseEnvironment('environments/demo.yaml', yaml));
const acct = { accountId: '111122223333', partition: 'aws' };

/** Nothing exists yet but the VPC's subnets. */
function empty(): Observed {
  return {
    ...acct,
    subnets: {
      'subnet-0000000000000000a': { id: 'subnet-0000000000000000a', vpcId: 'vpc-0123456789abcdef0', az: 'us-east-1a', tagged: false },
      'subnet-0000000000000000b': { id: 'subnet-0000000000000000b', vpcId: 'vpc-0123456789abcdef0', az: 'us-east-1b', tagged: false },
    },
    strayTaggedSubnets: [],
    taggedSecurityGroups: [],
    roles: {},
    cluster: null,
    nodeGroup: null,
    accessEntry: null,
    queue: null,
    rules: {},
    oidcProviderArn: null,
    oidcProviderTags: {},
    addon: false,
    podIdentityAssociation: null,
    spotServiceLinkedRole: false,
    karpenter: { instances: [], launchTemplates: [], instanceProfiles: [] },
  };
}

/** Everything as apply leaves it. */
function converged(): Observed {
  const role = (trust: object, managed: readonly string[], inline: Record<string, string> = {}) => ({
    arn: 'arn:aws:iam::111122223333:role/x',
    trust: JSON.stringify(trust),
    attached: managed.map((m) => managedArn('aws', m)),
    inline,
    tags: ours,
  });
  const ours = ownerTags(desired);
  const e = empty();
  return {
    ...e,
    subnets: Object.fromEntries(Object.entries(e.subnets).map(([k, s]) => [k, { ...s!, tagged: true }])),
    taggedSecurityGroups: ['sg-0aaaaaaaaaaaaaaaa'],
    roles: {
      [desired.names.clusterRole]: role(serviceTrust('eks.amazonaws.com'), MANAGED.cluster),
      [desired.names.systemNodeRole]: role(serviceTrust('ec2.amazonaws.com'), MANAGED.systemNode),
      [desired.names.nodeRole]: role(serviceTrust('ec2.amazonaws.com'), MANAGED.karpenterNode),
      [desired.names.controllerRole]: role(podIdentityTrust(), [], { [CONTROLLER_POLICY_NAME]: controllerPolicyFor(desired, acct) }),
    },
    cluster: { status: 'ACTIVE', version: '1.36', securityGroupId: 'sg-0aaaaaaaaaaaaaaaa', authenticationMode: 'API', issuer: 'https://oidc.eks.us-east-1.amazonaws.com/id/ABC', tags: ours },
    nodeGroup: { status: 'ACTIVE', min: 2, max: 2, desired: 2, labels: { 'node-role': 'system' }, tags: ours },
    accessEntry: 'EC2_LINUX',
    queue: { url: 'https://sqs/demo', arn: queueArn(desired, acct), attributes: { ...desiredQueueAttributes(desired, acct), QueueArn: queueArn(desired, acct) }, tags: ours },
    rules: Object.fromEntries(
      desired.names.rules.map((n, i) => [
        n,
        {
          pattern: JSON.stringify({ source: [i === 0 ? 'aws.health' : 'aws.ec2'], 'detail-type': [['AWS Health Event', 'EC2 Spot Instance Interruption Warning', 'EC2 Instance Rebalance Recommendation', 'EC2 Instance State-change Notification', 'EC2 Capacity Reservation Instance Interruption Warning'][i]] }),
          state: 'ENABLED',
          targets: [{ id: RULE_TARGET_ID, arn: queueArn(desired, acct) }],
          tags: ours,
        },
      ]),
    ),
    addon: true,
    podIdentityAssociation: { id: 'a-1', roleArn: `arn:aws:iam::111122223333:role/${desired.names.controllerRole}` },
    spotServiceLinkedRole: true,
  };
}

const kinds = (o: Observed) => Object.fromEntries(planApply(desired, o).actions.map((a) => [a.resource, a.kind]));

describe('planApply', () => {
  it('GIVEN an empty account WHEN planned THEN every resource is created and tags are added, with names known up front', () => {
    const plan = planApply(desired, empty());
    expect(plan.blockers).toEqual([]);
    expect(plan.actions.filter((a) => a.kind === 'create')).toHaveLength(16);
    expect(plan.actions.filter((a) => a.kind === 'update').map((a) => a.resource)).toEqual([R.subnetTags, R.sgTag]);
    expect(plan.names).toMatchObject({ cluster: 'demo', nodeRole: 'KarpenterNodeRole-demo', controllerRole: 'KarpenterController-demo', queue: 'demo' });
    expect(renderPlan(plan)).toContain('16 to create, 2 to update, 0 to delete, 0 unchanged.');
  });

  it('GIVEN an empty account WHEN planned THEN dependents come after what they need', () => {
    const after = Object.fromEntries(planApply(desired, empty()).actions.map((a) => [a.resource, a.after]));
    expect(after[R.cluster('demo')]).toEqual([R.role('EKSClusterRole-demo')]);
    expect(after[R.nodeGroup('demo', 'system')]).toEqual([R.cluster('demo'), R.role('EKSSystemNodeRole-demo')]);
    expect(after[R.rule('demo-health')]).toEqual([R.queue('demo')]);
    expect(after[R.podIdentity('kube-system', 'karpenter')]).toEqual([R.cluster('demo'), R.role('KarpenterController-demo')]);
  });

  it('GIVEN everything as apply leaves it WHEN planned THEN every action is a noop', () => {
    const plan = planApply(desired, converged());
    expect(plan.actions.filter((a) => a.kind !== 'noop')).toEqual([]);
    expect(plan.blockers).toEqual([]);
  });

  it('GIVEN the queue retention was changed by hand WHEN planned THEN only the queue is updated, with the attribute and the reason', () => {
    const o = converged();
    const changed = { ...o, queue: { ...o.queue!, attributes: { ...o.queue!.attributes, MessageRetentionPeriod: '345600' } } };
    const plan = planApply(desired, changed);
    const updates = plan.actions.filter((a) => a.kind !== 'noop');
    expect(updates).toEqual([
      { kind: 'update', resource: R.queue('demo'), reason: 'MessageRetentionPeriod is 345600, want 300', after: [], step: { type: 'queue', create: false, attributes: { MessageRetentionPeriod: '300' } } },
    ]);
  });

  it('GIVEN a statement was removed from the controller inline policy WHEN planned THEN the policy is put again', () => {
    const o = converged();
    const doc = JSON.parse(o.roles[desired.names.controllerRole]!.inline[CONTROLLER_POLICY_NAME]!);
    doc.Statement.pop();
    const drifted = { ...o, roles: { ...o.roles, [desired.names.controllerRole]: { ...o.roles[desired.names.controllerRole]!, inline: { [CONTROLLER_POLICY_NAME]: JSON.stringify(doc) } } } };
    const action = planApply(desired, drifted).actions.find((a) => a.kind !== 'noop')!;
    expect(action.resource).toBe(R.role('KarpenterController-demo'));
    expect(action.reason).toBe(`inline policy ${CONTROLLER_POLICY_NAME} differs`);
    expect(action.step).toMatchObject({ type: 'role', create: false, putInline: { name: CONTROLLER_POLICY_NAME, document: controllerPolicyFor(desired, acct) } });
  });

  /** A team attached AmazonEBSCSIDriverPolicy and an inline policy of its own to the node role. */
  const withForeignPolicies = (): Observed => {
    const o = converged();
    const node = o.roles[desired.names.nodeRole]!;
    return { ...o, roles: { ...o.roles, [desired.names.nodeRole]: { ...node, attached: [...node.attached, managedArn('aws', 'AmazonEBSCSIDriverPolicy')], inline: { 'team-s3': '{}' } } } };
  };

  it('GIVEN a team attached AmazonEBSCSIDriverPolicy and an inline policy to the node role WHEN planned THEN both stay, with a warning, and nothing changes', () => {
    const extra = withForeignPolicies();
    const plan = planApply(desired, extra);
    expect(plan.actions.filter((a) => a.kind !== 'noop')).toEqual([]);
    expect(plan.warnings).toEqual([
      'role KarpenterNodeRole-demo: managed policies AmazonEBSCSIDriverPolicy not managed by this tool, left in place; --prune-iam removes them',
      'role KarpenterNodeRole-demo: inline policies team-s3 not managed by this tool, left in place; --prune-iam removes them',
    ]);
  });

  it('GIVEN foreign policies on the node role WHEN planned with --prune-iam THEN they are detached and deleted', () => {
    const extra = withForeignPolicies();
    const plan = planApply(desired, extra, { pruneIam: true });
    expect(plan.warnings).toEqual([]);
    expect(plan.actions.filter((a) => a.kind !== 'noop')).toEqual([
      {
        kind: 'update',
        resource: R.role('KarpenterNodeRole-demo'),
        reason: 'unexpected managed policies AmazonEBSCSIDriverPolicy; unexpected inline policies team-s3',
        after: [],
        step: { type: 'role', name: 'KarpenterNodeRole-demo', create: false, attach: [], detach: [managedArn('aws', 'AmazonEBSCSIDriverPolicy')], deleteInline: ['team-s3'] },
      },
    ]);
  });

  it('GIVEN a second security group carries the discovery tag WHEN planned THEN the tag is removed from it', () => {
    const o = { ...converged(), taggedSecurityGroups: ['sg-0aaaaaaaaaaaaaaaa', 'sg-0bbbbbbbbbbbbbbbb'] };
    expect(planApply(desired, o).actions.find((a) => a.resource === R.sgTag)).toMatchObject({
      kind: 'update',
      reason: "tag on security groups other than the cluster's: sg-0bbbbbbbbbbbbbbbb",
      step: { type: 'tagSecurityGroups', add: null, remove: ['sg-0bbbbbbbbbbbbbbbb'] },
    });
  });

  it('GIVEN a configured subnet does not exist WHEN planned THEN apply is refused with the field and id', () => {
    const o = empty();
    const plan = planApply(desired, { ...o, subnets: { ...o.subnets, 'subnet-0000000000000000b': null } });
    expect(plan.blockers).toEqual(['cluster.privateSubnetIds: subnet subnet-0000000000000000b does not exist in us-east-1']);
  });

  it('GIVEN both subnets in one AZ WHEN planned THEN apply is refused', () => {
    const o = empty();
    const b = { ...o.subnets['subnet-0000000000000000b']!, az: 'us-east-1a' };
    expect(planApply(desired, { ...o, subnets: { ...o.subnets, [b.id]: b } }).blockers).toEqual([
      'cluster.privateSubnetIds: must span at least two availability zones, got us-east-1a',
    ]);
  });

  it('GIVEN irsa identity and no cluster yet WHEN planned THEN the controller trust is resolved after the cluster exists', () => {
    const irsa = { ...desired, identity: 'irsa' as const };
    const plan = planApply(irsa, empty());
    const ctrl = plan.actions.find((a) => a.resource === R.role('KarpenterController-demo'))!;
    expect(ctrl.after).toEqual([R.cluster('demo'), R.oidc('demo')]);
    expect(ctrl.step).toMatchObject({ trust: { irsa: { namespace: 'kube-system', serviceAccount: 'karpenter' } } });
    expect(kinds(empty())[R.oidc('demo')]).toBeUndefined();
    expect(plan.actions.find((a) => a.resource === R.oidc('demo'))?.kind).toBe('create');
  });
});

describe('planApply: cluster state, version and endpoint', () => {
  const withCluster = (c: Partial<NonNullable<Observed['cluster']>>, ng: Partial<NonNullable<Observed['nodeGroup']>> = {}): Observed => {
    const o = converged();
    return { ...o, cluster: { ...o.cluster!, ...c }, nodeGroup: { ...o.nodeGroup!, ...ng } };
  };
  const action = (o: Observed, r: string, d: DesiredState = desired) => planApply(d, o).actions.find((a) => a.resource === r)!;

  it('GIVEN the cluster is CREATING WHEN planned THEN a wait step stands in for it, so dependents run once it is ACTIVE', () => {
    const plan = planApply(desired, withCluster({ status: 'CREATING' }));
    expect(plan.actions.find((a) => a.resource === R.cluster('demo'))).toEqual({
      kind: 'wait',
      resource: R.cluster('demo'),
      reason: 'cluster is CREATING: waiting',
      after: [R.role('EKSClusterRole-demo')],
      step: { type: 'waitCluster' },
    });
    expect(renderPlan(plan)).toContain('0 to create, 0 to update, 0 to delete, 1 to wait for, 17 unchanged.');
  });

  it('GIVEN the node group is UPDATING WHEN planned THEN it is waited for', () => {
    expect(action(withCluster({}, { status: 'UPDATING' }), R.nodeGroup('demo', 'system'))).toMatchObject({ kind: 'wait', reason: 'node group is UPDATING: waiting', step: { type: 'waitNodeGroup' } });
  });

  it('GIVEN the cluster is FAILED or DELETING WHEN planned THEN apply is refused with what to do', () => {
    expect(planApply(desired, withCluster({ status: 'FAILED' })).blockers).toEqual([
      'cluster demo is FAILED; apply cannot use it: wait for the deletion to finish, or delete it (npm run infra -- destroy --env demo) and apply again',
    ]);
    expect(planApply(desired, withCluster({ status: 'DELETING' })).blockers).toEqual([
      'cluster demo is DELETING; apply cannot use it: wait for the deletion to finish, or delete it (npm run infra -- destroy --env demo) and apply again',
    ]);
  });

  it('GIVEN the cluster runs two minors behind the config WHEN planned THEN the jump is refused with the next step', () => {
    expect(planApply(desired, withCluster({ version: '1.34' }, { version: '1.34' })).blockers).toEqual([
      'cluster.kubernetesVersion: cluster runs 1.34, config says 1.36; EKS upgrades one minor version at a time: set 1.35, apply, then go on',
    ]);
  });

  it('GIVEN the cluster and nodes run one minor behind WHEN planned THEN the control plane is upgraded, and the node group after it', () => {
    const o = withCluster({ version: '1.35' }, { version: '1.35' });
    expect(action(o, R.cluster('demo'))).toMatchObject({ kind: 'update', reason: 'version 1.35, want 1.36', step: { type: 'cluster', create: false, version: '1.36' } });
    const ng = action(o, R.nodeGroup('demo', 'system'));
    expect(ng).toMatchObject({ kind: 'update', reason: 'nodes run Kubernetes 1.35, want 1.36 (after the control plane)', step: { type: 'nodeGroup', create: false, version: '1.36' } });
    expect(ng.after).toContain(R.cluster('demo'));
  });

  it('GIVEN publicAccessCidrs is [] but the public endpoint is on WHEN planned THEN public access is turned off, private on, in one update', () => {
    const privateOnly = { ...desired, publicAccessCidrs: [] };
    const o = withCluster({ endpointPublicAccess: true, endpointPrivateAccess: true, publicAccessCidrs: ['0.0.0.0/0'] });
    expect(action(o, R.cluster('demo'), privateOnly)).toMatchObject({
      kind: 'update',
      reason: 'public endpoint on, want off',
      step: { type: 'cluster', create: false, endpoint: { public: false, private: true, publicAccessCidrs: [] } },
    });
  });

  it('GIVEN CIDRs in the config but the public endpoint off and private off WHEN planned THEN all three are sent together', () => {
    const open = { ...desired, publicAccessCidrs: ['203.0.113.0/24'] };
    const o = withCluster({ endpointPublicAccess: false, endpointPrivateAccess: false, publicAccessCidrs: [] });
    expect(action(o, R.cluster('demo'), open)).toMatchObject({
      kind: 'update',
      reason: 'public endpoint off, want on; private endpoint off, want on; public access CIDRs none, want 203.0.113.0/24',
      step: { type: 'cluster', create: false, endpoint: { public: true, private: true, publicAccessCidrs: ['203.0.113.0/24'] } },
    });
  });

  it('GIVEN the endpoint matches WHEN planned THEN the cluster is unchanged', () => {
    const o = withCluster({ endpointPublicAccess: false, endpointPrivateAccess: true, publicAccessCidrs: ['0.0.0.0/0'] });
    expect(action(o, R.cluster('demo'), { ...desired, publicAccessCidrs: [] }).kind).toBe('noop');
  });
});

describe('ownership', () => {
  const untagged = (): Observed => {
    const o = converged();
    return { ...o, roles: { ...o.roles, [desired.names.nodeRole]: { ...o.roles[desired.names.nodeRole]!, tags: {} } }, queue: { ...o.queue!, tags: { team: 'x' } } };
  };

  it('GIVEN a same-named role and queue without our tags WHEN planned THEN apply refuses each with the exact message', () => {
    expect(planApply(desired, untagged()).blockers).toEqual([
      'iam:role/KarpenterNodeRole-demo exists but was not created by karpenter-gitops (no managed-by=karpenter-gitops tag); pass --adopt to tag it and manage it',
      'sqs:queue/demo exists but was not created by karpenter-gitops (no managed-by=karpenter-gitops tag); pass --adopt to tag it and manage it',
    ]);
  });

  it('GIVEN the same WHEN planned with --adopt THEN each gets a tag-only update and nothing is refused', () => {
    const plan = planApply(desired, untagged(), { adopt: true });
    expect(plan.blockers).toEqual([]);
    expect(plan.actions.filter((a) => a.kind !== 'noop')).toEqual([
      {
        kind: 'update',
        resource: R.role('KarpenterNodeRole-demo'),
        reason: 'adopt: add managed-by=karpenter-gitops and the environment tags',
        after: [],
        step: { type: 'role', name: 'KarpenterNodeRole-demo', create: false, attach: [], detach: [], deleteInline: [], adopt: true },
      },
      { kind: 'update', resource: R.queue('demo'), reason: 'adopt: add managed-by=karpenter-gitops and the environment tags', after: [], step: { type: 'queue', create: false, attributes: {}, adopt: true } },
    ]);
  });

  it('GIVEN a cluster in CONFIG_MAP mode WHEN planned THEN apply refuses to switch it without --adopt, and with it moves one step to API_AND_CONFIG_MAP', () => {
    const o = { ...converged(), cluster: { ...converged().cluster!, authenticationMode: 'CONFIG_MAP' } };
    expect(planApply(desired, o).blockers).toEqual(["cluster demo uses authentication mode CONFIG_MAP; Karpenter's access entry needs API, and apply switches it only with --adopt"]);
    expect(planApply(desired, o, { adopt: true }).actions.find((a) => a.resource === R.cluster('demo'))).toMatchObject({
      kind: 'update',
      reason: 'authentication mode CONFIG_MAP, want API (now API_AND_CONFIG_MAP)',
      step: { authenticationMode: 'API_AND_CONFIG_MAP' },
    });
  });

  it('GIVEN an untagged cluster and queue WHEN destroy is planned THEN they, and what lives in the cluster, are left in place and listed', () => {
    const o = converged();
    const plan = planDestroy(desired, { ...o, cluster: { ...o.cluster!, tags: {} }, queue: { ...o.queue!, tags: {} } }, { terminateKarpenterInstances: false });
    const a = (r: string) => plan.actions.find((x) => x.resource === r)!;
    expect(a(R.cluster('demo'))).toEqual({ kind: 'noop', resource: R.cluster('demo'), reason: 'not created by karpenter-gitops, left in place', after: expect.any(Array) });
    expect(a(R.queue('demo')).kind).toBe('noop');
    expect(a(R.addon).kind).toBe('noop');
    expect(a(R.accessEntry('KarpenterNodeRole-demo')).kind).toBe('noop');
    expect(a(R.sweep).reason).toBe('the cluster is not ours and stays: its Karpenter resources are left alone');
    expect(plan.warnings).toEqual(['the EC2 Spot service-linked role is account-wide and is kept', 'not created by karpenter-gitops, left in place: eks:cluster/demo, sqs:queue/demo']);
  });
});

describe('system node group architecture', () => {
  const withTypes = (types: string[]) => ({ ...desired, systemNodeGroup: { ...desired.systemNodeGroup, instanceTypes: types } });
  const ngStep = (d: DesiredState) => planApply(d, empty()).actions.find((a) => a.resource === R.nodeGroup('demo', 'system'))!.step;

  it('GIVEN Graviton instance types WHEN planned THEN the node group uses the ARM AMI; x86 types keep the x86 AMI', () => {
    expect(ngStep(withTypes(['m7g.large', 'c7gn.large', 't4g.medium']))).toMatchObject({ amiType: 'AL2023_ARM_64_STANDARD' });
    expect(ngStep(withTypes(['t3.medium', 'g5.xlarge', 'm5dn.large']))).toMatchObject({ amiType: 'AL2023_x86_64_STANDARD' });
  });

  it('GIVEN mixed architectures WHEN planned THEN apply is refused naming each type', () => {
    expect(planApply(withTypes(['t3.medium', 't4g.medium']), empty()).blockers).toEqual([
      'cluster.systemNodeGroup.instanceTypes: must all be one architecture, got t3.medium (x86_64), t4g.medium (arm64)',
    ]);
  });
});

describe('planDestroy', () => {
  const withKarpenter = (): Observed => ({
    ...converged(),
    karpenter: {
      instances: [{ id: 'i-0123', state: 'running' }],
      launchTemplates: [{ id: 'lt-1', name: 'karpenter.k8s.aws/123' }],
      instanceProfiles: [{ name: 'demo_123', roles: ['KarpenterNodeRole-demo'] }],
    },
  });

  it('GIVEN a running Karpenter instance WHEN destroy is planned without the flag THEN it is refused naming the instance', () => {
    expect(planDestroy(desired, withKarpenter(), { terminateKarpenterInstances: false }).blockers).toEqual([
      '1 Karpenter instance(s) of cluster demo still exist (i-0123 running); delete the NodePools first so Karpenter drains them, or pass --terminate-karpenter-instances',
    ]);
  });

  it('GIVEN everything exists WHEN destroy is planned THEN the controller is cut off first, Karpenter leftovers go next, and the cluster goes after what lives in it', () => {
    const plan = planDestroy(desired, withKarpenter(), { terminateKarpenterInstances: true });
    expect(plan.blockers).toEqual([]);
    const index = (r: string) => plan.actions.findIndex((a) => a.resource === r);
    const after = (r: string) => plan.actions.find((a) => a.resource === r)!.after;
    const cut = R.controllerPolicy('KarpenterController-demo');
    const pia = R.podIdentity('kube-system', 'karpenter');
    expect(plan.actions.slice(0, 5).map((a) => a.resource)).toEqual([cut, pia, R.instances, R.launchTemplates, R.instanceProfiles]);
    expect(plan.actions.find((a) => a.resource === cut)).toEqual({
      kind: 'delete',
      resource: cut,
      reason: `controller policy ${CONTROLLER_POLICY_NAME} exists`,
      after: [],
      step: { type: 'cutController', role: 'KarpenterController-demo', policy: CONTROLLER_POLICY_NAME },
    });
    expect(after(pia)).toEqual([]);
    expect(after(R.instances)).toEqual([cut, pia]);
    expect(after(R.launchTemplates)).toEqual([R.instances]);
    expect(after(R.cluster('demo'))).toEqual([R.nodeGroup('demo', 'system'), R.addon, pia, R.accessEntry('KarpenterNodeRole-demo'), R.sgTag]);
    expect(after(R.nodeGroup('demo', 'system'))).toEqual([R.instances, R.launchTemplates, R.instanceProfiles]);
    expect(after(R.queue('demo'))).toEqual(desired.names.rules.map(R.rule));
    expect(after(R.role('EKSClusterRole-demo'))).toEqual([R.cluster('demo')]);
    for (const a of plan.actions) for (const dep of a.after) expect(index(dep)).toBeLessThan(index(a.resource));
    expect(plan.actions.filter((a) => a.kind === 'delete')).toHaveLength(22);
  });

  it('GIVEN everything exists WHEN destroy is planned THEN the security group is untagged before the cluster (EKS deletes it with the cluster)', () => {
    const plan = planDestroy(desired, withKarpenter(), { terminateKarpenterInstances: true });
    const sg = plan.actions.find((a) => a.resource === R.sgTag)!;
    expect(sg.after).toEqual([R.controllerPolicy('KarpenterController-demo'), R.podIdentity('kube-system', 'karpenter')]);
    expect(sg.step).toEqual({ type: 'tagSecurityGroups', add: null, remove: ['sg-0aaaaaaaaaaaaaaaa'] });
  });

  it('GIVEN everything exists WHEN destroy is planned THEN a second Karpenter sweep runs after the cluster is gone and before the node role goes', () => {
    const plan = planDestroy(desired, converged(), { terminateKarpenterInstances: false });
    expect(plan.actions.find((a) => a.resource === R.sweep)).toEqual({
      kind: 'delete',
      resource: R.sweep,
      reason: 'after the cluster is gone: Karpenter instances, launch templates and instance profiles that appeared meanwhile',
      after: [R.cluster('demo'), R.instances, R.launchTemplates, R.instanceProfiles],
      step: { type: 'sweepKarpenter' },
    });
    expect(plan.actions.find((a) => a.resource === R.role('KarpenterNodeRole-demo'))!.after).toContain(R.sweep);
  });

  it('GIVEN nothing exists WHEN destroy is planned THEN every action is a noop, the sweep included', () => {
    const plan = planDestroy(desired, empty(), { terminateKarpenterInstances: false });
    expect(plan.actions.every((a) => a.kind === 'noop')).toBe(true);
    expect(plan.actions.find((a) => a.resource === R.sweep)!.reason).toBe('nothing to sweep: no cluster, no Karpenter resources');
  });
});

describe('node role access entry type follows the environment file (Windows node classes)', () => {
  const windowsYaml = yaml.replace('nodeClasses: [{ name: default }]', 'nodeClasses: [{ name: default }, { name: win, amiSelectorTerms: [{ alias: windows2022@latest }] }]');
  const windows: DesiredState = desiredFrom(parseEnvironment('environments/demo.yaml', windowsYaml));
  const entry = (d: DesiredState, o: Observed) => planApply(d, o).actions.find((a) => a.resource === R.accessEntry('KarpenterNodeRole-demo'))!;

  it('GIVEN only Linux node classes WHEN planned THEN the entry is EC2_LINUX', () => {
    expect(desired.nodeAccessEntryType).toBe('EC2_LINUX');
    expect(entry(desired, converged()).kind).toBe('noop');
  });

  it('GIVEN a node class with a Windows alias WHEN planned on an empty cluster THEN an EC2_WINDOWS entry is created, saying why', () => {
    expect(windows.nodeAccessEntryType).toBe('EC2_WINDOWS');
    const o = { ...converged(), accessEntry: null };
    expect(entry(windows, o)).toMatchObject({
      kind: 'create',
      reason: 'EC2_WINDOWS access entry for the node role does not exist (a node class uses a Windows AMI)',
      step: { type: 'accessEntry', entryType: 'EC2_WINDOWS', replace: false },
    });
  });

  it('GIVEN an existing EC2_LINUX entry and a new Windows node class WHEN planned THEN the entry is replaced (EKS cannot change its type)', () => {
    expect(entry(windows, converged())).toMatchObject({
      kind: 'update',
      reason:
        'access entry is EC2_LINUX, want EC2_WINDOWS (a node class uses a Windows AMI); EKS cannot change the type: deleted and created again (nodes joining in between are refused)',
      step: { type: 'accessEntry', entryType: 'EC2_WINDOWS', replace: true },
    });
  });

  it.each([
    ['amiFamily Windows2025 with explicit AMI ids', '{ name: win, amiFamily: Windows2025, amiSelectorTerms: [{ id: ami-0123456789abcdef0 }] }', 'EC2_WINDOWS'],
    ['amiFamily Custom with AMI ids (Karpenter writes no Windows user data)', '{ name: win, amiFamily: Custom, amiSelectorTerms: [{ id: ami-0123456789abcdef0 }] }', 'EC2_LINUX'],
    ['a Windows class on another role (that role needs its own entry)', '{ name: win, role: OtherRole, amiSelectorTerms: [{ alias: windows2022@latest }] }', 'EC2_LINUX'],
    ['a Windows class naming the infra node role', '{ name: win, role: KarpenterNodeRole-demo, amiSelectorTerms: [{ alias: windows2019@latest }] }', 'EC2_WINDOWS'],
  ])('GIVEN %s WHEN desired THEN the entry type is as expected', (_, nodeClass, type) => {
    const d = desiredFrom(parseEnvironment('environments/demo.yaml', yaml.replace('nodeClasses: [{ name: default }]', `nodeClasses: [{ name: default }, ${nodeClass}]`)));
    expect(d.nodeAccessEntryType).toBe(type);
  });
});

describe('interruption rules reach the queue only', () => {
  it('GIVEN a rule with an extra target (another account\'s queue) WHEN planned THEN it is drift: the rule is updated and the target removed', () => {
    const o = converged();
    const name = desired.names.rules[1]!;
    const rule = o.rules[name]!;
    const drifted = { ...o, rules: { ...o.rules, [name]: { ...rule, targets: [...rule.targets, { id: 'exfil', arn: 'arn:aws:sqs:us-east-1:999999999999:elsewhere' }] } } };
    const changed = planApply(desired, drifted).actions.filter((a) => a.kind !== 'noop');
    expect(changed).toEqual([
      {
        kind: 'update',
        resource: R.rule(name),
        reason: 'extra target(s) exfil -> arn:aws:sqs:us-east-1:999999999999:elsewhere (drift): removed',
        after: [R.queue('demo')],
        step: { type: 'rule', name, pattern: expect.any(String), putRule: false, putTarget: false, removeTargets: ['exfil'] },
      },
    ]);
  });
});
