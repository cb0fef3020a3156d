import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateLaunchTemplateCommand, DescribeInstancesCommand, DescribeLaunchTemplatesCommand, DescribeSecurityGroupsCommand, DescribeSubnetsCommand, EC2Client, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { EKSClient, DescribeClusterCommand, DescribeNodegroupCommand, ListClustersCommand } from '@aws-sdk/client-eks';
import { EventBridgeClient, ListRulesCommand, ListTargetsByRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  AddRoleToInstanceProfileCommand,
  AttachRolePolicyCommand,
  CreateRoleCommand,
  CreateInstanceProfileCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  IAMClient,
  ListAttachedRolePoliciesCommand,
  ListInstanceProfilesCommand,
  ListOpenIDConnectProvidersCommand,
  ListRolesCommand,
} from '@aws-sdk/client-iam';
import type { ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-sqs';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueuesCommand, SQSClient, UntagQueueCommand } from '@aws-sdk/client-sqs';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OUTPUT_KEYS, readOutputs } from '../../config/outputs.js';
import type { AwsClients } from '../../infra/clients.js';
import { CONTROLLER_POLICY_NAME, controllerPolicyJson, queuePolicy } from '../../infra/policies.js';
import { startMoto, useDummyCredentials, type Moto } from './support/moto.js';
import { CLUSTER, infra, makeWorld, type World } from './support/harness.js';

// End to end against a real moto server. Only EKS access entries, pod identity
// associations and add-ons, which moto does not implement, go to the in-memory stand-in
// (test/infra/support/eks-stand-in.ts); everything else is moto.

let moto: Moto;
let world: World;
const region = 'us-east-1';
const ACCOUNT = '123456789012';
const cfg = () => ({ region, endpoint: moto.endpoint });

beforeAll(async () => {
  useDummyCredentials();
  moto = await startMoto();
});
afterAll(async () => {
  await moto?.stop();
});
beforeEach(async () => {
  await moto.reset();
  world = await makeWorld(moto.endpoint);
});

const queueArn = `arn:aws:sqs:${region}:${ACCOUNT}:${CLUSTER}`;
const nodeRoleArn = `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-${CLUSTER}`;

async function discoveryTagged() {
  const ec2 = new EC2Client(cfg());
  const filter = [{ Name: 'tag:karpenter.sh/discovery', Values: [CLUSTER] }];
  const subnets = (await ec2.send(new DescribeSubnetsCommand({ Filters: filter }))).Subnets!.map((s) => s.SubnetId).sort();
  const sgs = (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: filter }))).SecurityGroups!.map((s) => s.GroupId);
  return { subnets, sgs };
}

describe('apply, apply again, outputs, destroy, destroy again (moto)', () => {
  it('GIVEN an empty account WHEN applied THEN moto holds every resource as SPEC 3 says, and a second apply makes no mutating call', async () => {
    const first = await infra(world, 'apply');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Applied: \d+ mutating calls/);

    const iam = new IAMClient(cfg());
    const attached = async (role: string) => (await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: role }))).AttachedPolicies!.map((p) => p.PolicyName).sort();
    expect(await attached(`KarpenterNodeRole-${CLUSTER}`)).toEqual(['AmazonEC2ContainerRegistryPullOnly', 'AmazonEKSWorkerNodePolicy', 'AmazonEKS_CNI_Policy', 'AmazonSSMManagedInstanceCore']);
    expect(await attached(`EKSClusterRole-${CLUSTER}`)).toEqual(['AmazonEKSClusterPolicy']);
    expect(await attached(`KarpenterController-${CLUSTER}`)).toEqual([]);
    const inline = await iam.send(new GetRolePolicyCommand({ RoleName: `KarpenterController-${CLUSTER}`, PolicyName: CONTROLLER_POLICY_NAME }));
    const inlineDoc = decodeURIComponent(inline.PolicyDocument!);
    expect(inlineDoc).toBe(controllerPolicyJson({ partition: 'aws', region, accountId: ACCOUNT, clusterName: CLUSTER, nodeRoleArn, queueArn }));
    expect(JSON.parse(inlineDoc).Statement).toHaveLength(18);
    const trust = JSON.parse(decodeURIComponent((await iam.send(new GetRoleCommand({ RoleName: `KarpenterController-${CLUSTER}` }))).Role!.AssumeRolePolicyDocument!));
    expect(trust.Statement).toEqual([{ Effect: 'Allow', Principal: { Service: 'pods.eks.amazonaws.com' }, Action: ['sts:AssumeRole', 'sts:TagSession'] }]);
    expect((await iam.send(new ListRolesCommand({ PathPrefix: '/aws-service-role/spot.amazonaws.com/' }))).Roles).toHaveLength(1);

    const sqs = new SQSClient(cfg());
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: CLUSTER }))).QueueUrl!;
    const attrs = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes!;
    expect(attrs.MessageRetentionPeriod).toBe('300');
    expect(attrs.SqsManagedSseEnabled).toBe('true');
    expect(JSON.parse(attrs.Policy!)).toEqual(queuePolicy(queueArn));

    const events = new EventBridgeClient(cfg());
    const rules = (await events.send(new ListRulesCommand({ NamePrefix: CLUSTER }))).Rules!;
    expect(rules.map((r) => JSON.parse(r.EventPattern!)['detail-type'][0]).sort()).toEqual([
      'AWS Health Event',
      'EC2 Capacity Reservation Instance Interruption Warning',
      'EC2 Instance Rebalance Recommendation',
      'EC2 Instance State-change Notification',
      'EC2 Spot Instance Interruption Warning',
    ]);
    for (const r of rules) {
      expect((await events.send(new ListTargetsByRuleCommand({ Rule: r.Name! }))).Targets!.map((t) => t.Arn)).toEqual([queueArn]);
    }

    const eks = new EKSClient(cfg());
    expect((await eks.send(new DescribeClusterCommand({ name: CLUSTER }))).cluster).toMatchObject({ version: '1.36', status: 'ACTIVE', roleArn: `arn:aws:iam::${ACCOUNT}:role/EKSClusterRole-${CLUSTER}` });
    expect((await eks.send(new DescribeNodegroupCommand({ clusterName: CLUSTER, nodegroupName: 'system' }))).nodegroup).toMatchObject({
      scalingConfig: { minSize: 2, desiredSize: 2, maxSize: 2 },
      labels: { 'node-role': 'system' },
      instanceTypes: ['t3.medium'],
    });
    expect([...world.standIn.accessEntries]).toEqual([[nodeRoleArn, 'EC2_LINUX']]);
    expect([...world.standIn.addons]).toEqual(['eks-pod-identity-agent']);
    expect([...world.standIn.associations.values()]).toEqual([{ namespace: 'kube-system', serviceAccount: 'karpenter', roleArn: `arn:aws:iam::${ACCOUNT}:role/KarpenterController-${CLUSTER}` }]);

    // Exactly the private subnets and exactly the cluster's security group: the decoy lost its tag.
    expect(await discoveryTagged()).toEqual({ subnets: [...world.subnetIds].sort(), sgs: [world.clusterSgId] });

    const second = await infra(world, 'apply');
    expect(second.code).toBe(0);
    expect(second.mutatingCalls).toEqual([]);
    expect(second.stdout).toContain('0 to create, 0 to update, 0 to delete, 18 unchanged.');
    expect(second.stdout).toMatch(/No changes: 0 mutating calls/);
  });

  it('GIVEN a team attached AmazonEBSCSIDriverPolicy to the node role WHEN applied again THEN it stays attached and the plan warns; with --prune-iam it is detached', async () => {
    await infra(world, 'apply');
    const iam = new IAMClient(cfg());
    const role = `KarpenterNodeRole-${CLUSTER}`;
    await iam.send(new AttachRolePolicyCommand({ RoleName: role, PolicyArn: 'arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy' }));
    const again = await infra(world, 'apply');
    expect(again.code).toBe(0);
    expect(again.mutatingCalls).toEqual([]);
    expect(again.stdout).toContain(`warning: role ${role}: managed policies AmazonEBSCSIDriverPolicy not managed by this tool, left in place; --prune-iam removes them`);
    const names = async () => (await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: role }))).AttachedPolicies!.map((p) => p.PolicyName);
    expect(await names()).toContain('AmazonEBSCSIDriverPolicy');
    const pruned = await infra(world, 'apply', { extraArgs: ['--prune-iam'] });
    expect(pruned.mutatingCalls).toEqual(['DetachRolePolicy']);
    expect(await names()).not.toContain('AmazonEBSCSIDriverPolicy');
  });

  it('GIVEN publicAccessCidrs emptied in the environment file WHEN applied again THEN the public endpoint is turned off in one UpdateClusterConfig', async () => {
    await infra(world, 'apply');
    const file = join(world.envDir, 'test.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('publicAccessCidrs: [203.0.113.0/24]', 'publicAccessCidrs: []'));
    const res = await infra(world, 'apply');
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain(`~ update eks:cluster/${CLUSTER}`);
    expect(res.stdout).toContain('public endpoint on, want off');
    expect(res.mutatingCalls).toEqual(['UpdateClusterConfig']);
    const vpc = (await new EKSClient(cfg()).send(new DescribeClusterCommand({ name: CLUSTER }))).cluster!.resourcesVpcConfig!;
    expect(vpc).toMatchObject({ endpointPublicAccess: false, endpointPrivateAccess: true });
    expect((await infra(world, 'apply')).mutatingCalls).toEqual([]);
  });

  it('GIVEN an applied environment WHEN outputs runs THEN the file passes the shared contract with the real names', async () => {
    await infra(world, 'apply');
    const res = await infra(world, 'outputs');
    expect(res.code).toBe(0);
    expect(res.mutatingCalls).toEqual([]);
    const outputs = readOutputs(world.outputsFile);
    expect(Object.keys(JSON.parse(readFileSync(world.outputsFile, 'utf8')))).toEqual([...OUTPUT_KEYS]);
    expect(outputs).toEqual({
      clusterName: CLUSTER,
      region,
      accountId: ACCOUNT,
      kubernetesVersion: '1.36',
      nodeRoleName: `KarpenterNodeRole-${CLUSTER}`,
      nodeRoleArn,
      controllerRoleArn: `arn:aws:iam::${ACCOUNT}:role/KarpenterController-${CLUSTER}`,
      interruptionQueueName: CLUSTER,
      interruptionQueueArn: queueArn,
      karpenterChartVersion: '1.13.1',
      kubeconfigCommand: `aws eks update-kubeconfig --region ${region} --name ${CLUSTER}`,
    });
  });

  it('GIVEN nothing applied WHEN outputs runs THEN it fails naming what is missing and writes nothing', async () => {
    const res = await infra(world, 'outputs');
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `cannot write ${world.outputsFile}: cluster ${CLUSTER}, role KarpenterNodeRole-${CLUSTER}, role KarpenterController-${CLUSTER}, queue ${CLUSTER} missing; run \`npm run infra -- apply --env test\``,
    );
    expect(() => readFileSync(world.outputsFile)).toThrow();
  });

  it('GIVEN an applied environment WHEN destroyed THEN nothing is left, and a second destroy makes no call', async () => {
    await infra(world, 'apply');
    const res = await infra(world, 'destroy', { extraArgs: ['--yes'] });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const iam = new IAMClient(cfg());
    const roles = (await iam.send(new ListRolesCommand({}))).Roles!.map((r) => r.RoleName).filter((n) => n!.includes(CLUSTER));
    expect(roles).toEqual([]);
    expect((await new SQSClient(cfg()).send(new ListQueuesCommand({}))).QueueUrls ?? []).toEqual([]);
    expect((await new EventBridgeClient(cfg()).send(new ListRulesCommand({ NamePrefix: CLUSTER }))).Rules).toEqual([]);
    expect((await new EKSClient(cfg()).send(new ListClustersCommand({}))).clusters).toEqual([]);
    expect(await discoveryTagged()).toEqual({ subnets: [], sgs: [] });
    expect(world.standIn.accessEntries.size + world.standIn.addons.size + world.standIn.associations.size).toBe(0);

    const again = await infra(world, 'destroy', { extraArgs: ['--yes'] });
    expect(again.code).toBe(0);
    expect(again.mutatingCalls).toEqual([]);
    expect(again.stdout).toContain('Nothing to destroy: 0 mutating calls');
  });

  it('GIVEN an applied environment with its outputs file WHEN destroyed THEN the file becomes the tombstone synth refuses, and apply brings the outputs back', async () => {
    expect((await infra(world, 'apply')).code).toBe(0);
    expect(readOutputs(world.outputsFile).clusterName).toBe(CLUSTER);
    const res = await infra(world, 'destroy', { extraArgs: ['--yes'] });
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').at(-1)).toMatch(new RegExp(`^Destroyed: \\d+ mutating calls \\(\\d+\\.\\d s\\)\\. Marked ${world.outputsFile.replace(/[.]/g, '\\.')} destroyed\\.$`));
    expect(readFileSync(world.outputsFile, 'utf8')).toBe(`{\n  "destroyed": true,\n  "clusterName": "${CLUSTER}"\n}\n`);
    expect(() => readOutputs(world.outputsFile, 'infra/outputs/test.json')).toThrow(
      `infra/outputs/test.json: (top level): records that \`npm run infra -- destroy\` deleted cluster "${CLUSTER}", its roles and its queue: nothing can be synthesized against it; run \`npm run infra -- apply --env <env>\` to recreate them (it rewrites this file), or remove the environment`,
    );
    // apply brings the real outputs back.
    expect((await infra(world, 'apply')).code).toBe(0);
    expect(readOutputs(world.outputsFile).nodeRoleName).toBe(`KarpenterNodeRole-${CLUSTER}`);
  });

  it('GIVEN no --yes and no terminal WHEN destroy runs THEN it refuses and deletes nothing', async () => {
    await infra(world, 'apply');
    const res = await infra(world, 'destroy');
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('Refusing to destroy without a terminal to confirm on; pass --yes.');
    expect(res.mutatingCalls).toEqual([]);
  });
});

describe('resilience (moto)', () => {
  it('GIVEN an apply killed after 7 mutating calls WHEN run again THEN it converges, and a third run changes nothing', async () => {
    let n = 0;
    const abortAfter7 = (clients: AwsClients) => {
      for (const c of Object.values(clients) as EC2Client[]) {
        c.middlewareStack.add(
          (next, context) => async (args) => {
            if (!/^(Describe|Get|List)/.test(String(context.commandName)) && ++n > 7) throw Object.assign(new Error('killed'), { name: 'Killed' });
            return next(args);
          },
          { step: 'initialize', name: 'killSwitch' },
        );
      }
    };
    const killed = await infra(world, 'apply', { tweak: abortAfter7 });
    expect(killed.code).toBe(1);
    expect(killed.stderr).toMatch(/failed: .*: Killed: killed/);
    expect(killed.stderr).toMatch(/run the command again: it resumes where it stopped/);

    const resumed = await infra(world, 'apply');
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    // The resumed run saw the killed run's work as done and only did what was left.
    expect(resumed.stdout).toMatch(/ [1-9]\d* unchanged\./);
    const third = await infra(world, 'apply');
    expect(third.mutatingCalls).toEqual([]);
  });

  it('GIVEN SQS answers Throttling twice WHEN apply runs THEN the SDK retries with backoff and the queue is made', async () => {
    let attempts = 0;
    const throttleTwice = (clients: AwsClients) => {
      const inject: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
          if (context.commandName === 'CreateQueueCommand' && ++attempts <= 2) {
            throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
          }
          return next(args);
        };
      clients.sqs.middlewareStack.addRelativeTo(
        inject,
        // After the retry middleware: each retry attempt passes through here again.
        { relation: 'after', toMiddleware: 'retryMiddleware', name: 'injectThrottling' },
      );
    };
    const res = await infra(world, 'apply', { tweak: throttleTwice });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(attempts).toBe(3);
    expect(res.mutatingCalls.filter((c) => c === 'CreateQueue')).toEqual(['CreateQueue']);
  });

  it('GIVEN EKS does not see the fresh cluster role twice WHEN apply runs THEN CreateCluster is retried, the wait is printed, and the cluster is made', async () => {
    let attempts = 0;
    const notPropagated = (clients: AwsClients) =>
      clients.eks.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'CreateClusterCommand' && ++attempts <= 2) {
            throw Object.assign(new Error(`Role with arn: arn:aws:iam::${ACCOUNT}:role/EKSClusterRole-${CLUSTER} could not be assumed because it does not exist or the trusted entity is not correct`), {
              name: 'InvalidParameterException',
              $metadata: { httpStatusCode: 400 },
            });
          }
          return next(args);
        },
        { step: 'initialize', name: 'injectPropagationDelay' },
      );
    const res = await infra(world, 'apply', { tweak: notPropagated });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(attempts).toBe(3);
    expect(res.stdout).toMatch(new RegExp(`  CreateCluster ${CLUSTER}: IAM has not propagated the role yet \\(Role with arn: .* could not be assumed .*\\); retry 2 in \\d+\\.\\d s`));
    expect((await new EKSClient(cfg()).send(new DescribeClusterCommand({ name: CLUSTER }))).cluster?.status).toBe('ACTIVE');
  });
});

describe('drift the plan must not call unchanged (moto)', () => {
  it('GIVEN a second target on an interruption rule (another account\'s queue) WHEN planned THEN it is drift; apply removes it and a second apply changes nothing', async () => {
    expect((await infra(world, 'apply')).code).toBe(0);
    const events = new EventBridgeClient(cfg());
    const rule = `${CLUSTER}-spot-interruption`;
    const elsewhere = 'arn:aws:sqs:us-east-1:999999999999:elsewhere';
    await events.send(new PutTargetsCommand({ Rule: rule, Targets: [{ Id: 'exfil', Arn: elsewhere }] }));
    const plan = await infra(world, 'plan');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`~ update events:rule/${rule} +extra target\\(s\\) exfil -> ${elsewhere} \\(drift\\): removed`));
    const applied = await infra(world, 'apply');
    expect(applied.code).toBe(0);
    expect(applied.mutatingCalls).toEqual(['RemoveTargets']);
    expect((await events.send(new ListTargetsByRuleCommand({ Rule: rule }))).Targets!.map((t) => t.Arn)).toEqual([queueArn]);
    expect((await infra(world, 'apply')).mutatingCalls).toEqual([]);
  });

  it('GIVEN a Windows node class added to an applied Linux environment WHEN applied THEN the node role\'s entry becomes EC2_WINDOWS (one entry per principal), and removing the class turns it back', async () => {
    expect((await infra(world, 'apply')).code).toBe(0);
    expect([...world.standIn.accessEntries]).toEqual([[nodeRoleArn, 'EC2_LINUX']]);
    const file = join(world.envDir, 'test.yaml');
    const linux = readFileSync(file, 'utf8');
    writeFileSync(file, linux.replace('nodeClasses:\n', 'nodeClasses:\n  - name: windows\n    amiSelectorTerms: [{alias: windows2022@latest}]\n'));
    const windows = await infra(world, 'apply');
    expect(windows.code).toBe(0);
    expect(windows.mutatingCalls).toEqual(['DeleteAccessEntry', 'CreateAccessEntry']);
    expect([...world.standIn.accessEntries]).toEqual([[nodeRoleArn, 'EC2_WINDOWS']]);
    expect((await infra(world, 'apply')).mutatingCalls).toEqual([]);
    writeFileSync(file, linux);
    expect((await infra(world, 'apply')).mutatingCalls).toEqual(['DeleteAccessEntry', 'CreateAccessEntry']);
    expect([...world.standIn.accessEntries]).toEqual([[nodeRoleArn, 'EC2_LINUX']]);
  });

  it('GIVEN a Windows node class from the start WHEN applied to an empty account THEN the entry is created as EC2_WINDOWS', async () => {
    const file = join(world.envDir, 'test.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('nodeClasses:\n', 'nodeClasses:\n  - name: windows\n    amiFamily: Windows2019\n    amiSelectorTerms: [{alias: windows2019@latest}]\n'));
    expect((await infra(world, 'apply')).code).toBe(0);
    expect([...world.standIn.accessEntries]).toEqual([[nodeRoleArn, 'EC2_WINDOWS']]);
  });
});

describe('ownership tags (moto)', () => {
  it('GIVEN a same-named role someone else made WHEN applied THEN apply refuses; with --adopt it is tagged and managed; destroy then deletes it', async () => {
    const iam = new IAMClient(cfg());
    const role = `KarpenterNodeRole-${CLUSTER}`;
    await iam.send(new CreateRoleCommand({ RoleName: role, AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }) }));
    const refused = await infra(world, 'apply');
    expect(refused.code).toBe(1);
    // The refusal is an error (stderr); the plan that explains it stays on stdout.
    expect(refused.stderr).toBe(`refused: iam:role/${role} exists but was not created by karpenter-gitops (no managed-by=karpenter-gitops tag); pass --adopt to tag it and manage it`);
    expect(refused.stdout).not.toContain('refused:');
    expect(refused.mutatingCalls).toEqual([]);

    const adopted = await infra(world, 'apply', { extraArgs: ['--adopt'] });
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    const tags = Object.fromEntries((await iam.send(new GetRoleCommand({ RoleName: role }))).Role!.Tags!.map((t) => [t.Key, t.Value]));
    expect(tags).toEqual({ 'managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': 'test', 'karpenter-gitops/cluster': CLUSTER });
    expect((await infra(world, 'apply')).mutatingCalls).toEqual([]);
  });

  it('GIVEN a same-named queue someone else made WHEN destroy runs THEN it is left in place and listed', async () => {
    await infra(world, 'apply');
    const sqs = new SQSClient(cfg());
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: CLUSTER }))).QueueUrl!;
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['managed-by'] }));
    const res = await infra(world, 'destroy', { extraArgs: ['--yes'] });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`warning: not created by karpenter-gitops, left in place: sqs:queue/${CLUSTER}`);
    expect(res.mutatingCalls).not.toContain('DeleteQueue');
    expect((await sqs.send(new ListQueuesCommand({}))).QueueUrls).toEqual([url]);
  });
});

describe('destroy with Karpenter nodes (moto)', () => {
  it('GIVEN a running Karpenter instance WHEN destroy runs THEN it refuses; WITH --terminate-karpenter-instances it terminates it and removes its launch template and instance profile first', async () => {
    await infra(world, 'apply');
    const ec2 = new EC2Client(cfg());
    const tags = [
      { Key: 'karpenter.sh/nodepool', Value: 'default' },
      { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
    ];
    const run = await ec2.send(
      new RunInstancesCommand({ ImageId: 'ami-12c6146b', InstanceType: 'm5.large', MinCount: 1, MaxCount: 1, SubnetId: world.subnetIds[0], TagSpecifications: [{ ResourceType: 'instance', Tags: tags }] }),
    );
    const instanceId = run.Instances![0]!.InstanceId!;
    await ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'karpenter.k8s.aws/1234', LaunchTemplateData: {}, TagSpecifications: [{ ResourceType: 'launch-template', Tags: tags }] }));
    const iam = new IAMClient(cfg());
    await iam.send(
      new CreateInstanceProfileCommand({
        InstanceProfileName: `${CLUSTER}_1234`,
        Tags: [
          { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
          { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
        ],
      }),
    );
    await iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: `${CLUSTER}_1234`, RoleName: `KarpenterNodeRole-${CLUSTER}` }));
    // Not Karpenter's: must survive.
    await iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: 'someone-else' }));

    const refused = await infra(world, 'destroy', { extraArgs: ['--yes'] });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `refused: 1 Karpenter instance(s) of cluster ${CLUSTER} still exist (${instanceId} running); delete the NodePools first so Karpenter drains them, or pass --terminate-karpenter-instances`,
    );
    expect(refused.mutatingCalls).toEqual([]);

    const res = await infra(world, 'destroy', { extraArgs: ['--yes', '--terminate-karpenter-instances'] });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const order = res.mutatingCalls;
    // The controller loses its permissions before any of its nodes is touched.
    expect(order.slice(0, 2).sort()).toEqual(['DeletePodIdentityAssociation', 'DeleteRolePolicy']);
    expect(order.indexOf('TerminateInstances')).toBeGreaterThan(1);
    expect(order.indexOf('TerminateInstances')).toBeLessThan(order.indexOf('DeleteNodegroup'));
    expect(order.indexOf('DeleteTags')).toBeLessThan(order.indexOf('DeleteCluster'));
    expect(order.indexOf('DeleteLaunchTemplate')).toBeLessThan(order.indexOf('DeleteCluster'));
    expect(order.indexOf('DeleteInstanceProfile')).toBeLessThan(order.indexOf('DeleteCluster'));
    const state = (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations![0]!.Instances![0]!.State!.Name;
    expect(state).toBe('terminated');
    expect((await ec2.send(new DescribeLaunchTemplatesCommand({}))).LaunchTemplates).toEqual([]);
    expect((await iam.send(new ListInstanceProfilesCommand({}))).InstanceProfiles!.map((p) => p.InstanceProfileName)).toEqual(['someone-else']);
  });
});

describe('destroy sweeps what Karpenter launched during the teardown (moto)', () => {
  it('GIVEN Karpenter launches a node while the cluster is being deleted WHEN destroy runs THEN a second sweep after the cluster terminates it and removes its template and profile', async () => {
    await infra(world, 'apply');
    const ec2 = new EC2Client(cfg());
    const iam = new IAMClient(cfg());
    const tags = [
      { Key: 'karpenter.sh/nodepool', Value: 'default' },
      { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
    ];
    let launched: string | undefined;
    // Stands in for a controller that was still running: it launches a node as DeleteCluster is sent.
    const relaunchOnDeleteCluster = (clients: AwsClients) =>
      clients.eks.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'DeleteClusterCommand' && !launched) {
            launched = (
              await ec2.send(new RunInstancesCommand({ ImageId: 'ami-12c6146b', InstanceType: 'm5.large', MinCount: 1, MaxCount: 1, SubnetId: world.subnetIds[0], TagSpecifications: [{ ResourceType: 'instance', Tags: tags }] }))
            ).Instances![0]!.InstanceId!;
            await ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'karpenter.k8s.aws/late', LaunchTemplateData: {}, TagSpecifications: [{ ResourceType: 'launch-template', Tags: tags }] }));
            await iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: `${CLUSTER}_late`, Tags: [{ Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' }, tags[1]!] }));
            await iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: `${CLUSTER}_late`, RoleName: `KarpenterNodeRole-${CLUSTER}` }));
          }
          return next(args);
        },
        { step: 'initialize', name: 'lateLaunch' },
      );
    const res = await infra(world, 'destroy', { extraArgs: ['--yes'], tweak: relaunchOnDeleteCluster });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('  sweep: Karpenter left 1 instance(s), 1 launch template(s), 1 instance profile(s) after the cluster went; removing them');
    const order = res.mutatingCalls;
    expect(order.indexOf('TerminateInstances')).toBeGreaterThan(order.indexOf('DeleteCluster'));
    const state = (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [launched!] }))).Reservations![0]!.Instances![0]!.State!.Name;
    expect(state).toBe('terminated');
    expect((await ec2.send(new DescribeLaunchTemplatesCommand({}))).LaunchTemplates).toEqual([]);
    expect((await iam.send(new ListInstanceProfilesCommand({}))).InstanceProfiles).toEqual([]);
    expect((await iam.send(new ListRolesCommand({}))).Roles!.map((r) => r.RoleName).filter((n) => n!.includes(CLUSTER))).toEqual([]);
  });
});

describe('IRSA (moto)', () => {
  it('GIVEN --identity on the command line WHEN run THEN it is refused: the file is the one source the charts also read', async () => {
    const res = await infra(world, 'plan', { extraArgs: ['--identity', 'irsa'] });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('--identity is no longer accepted: set cluster.identity in the environment file (the charts read it from there too)');
  });

  it('GIVEN cluster.identity irsa WHEN applied THEN an OIDC provider for the cluster issuer exists and the controller trusts only its service account', async () => {
    world = await makeWorld(moto.endpoint, 'irsa');
    const res = await infra(world, 'apply');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const issuer = (await new EKSClient(cfg()).send(new DescribeClusterCommand({ name: CLUSTER }))).cluster!.identity!.oidc!.issuer!.replace('https://', '');
    const iam = new IAMClient(cfg());
    const providers = (await iam.send(new ListOpenIDConnectProvidersCommand({}))).OpenIDConnectProviderList!.map((p) => p.Arn);
    expect(providers).toEqual([`arn:aws:iam::${ACCOUNT}:oidc-provider/${issuer}`]);
    const trust = JSON.parse(decodeURIComponent((await iam.send(new GetRoleCommand({ RoleName: `KarpenterController-${CLUSTER}` }))).Role!.AssumeRolePolicyDocument!));
    expect(trust.Statement[0].Condition).toEqual({ StringEquals: { [`${issuer}:sub`]: 'system:serviceaccount:kube-system:karpenter', [`${issuer}:aud`]: 'sts.amazonaws.com' } });
    expect(world.standIn.associations.size).toBe(0);
    const again = await infra(world, 'apply');
    expect(again.mutatingCalls).toEqual([]);
  });
});
