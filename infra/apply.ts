import { CreateTagsCommand, DeleteLaunchTemplateCommand, DeleteTagsCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import {
  CreateAccessEntryCommand,
  CreateAddonCommand,
  CreateClusterCommand,
  CreateNodegroupCommand,
  CreatePodIdentityAssociationCommand,
  DeleteAccessEntryCommand,
  DeleteAddonCommand,
  DeleteClusterCommand,
  DeleteNodegroupCommand,
  DeletePodIdentityAssociationCommand,
  DescribeClusterCommand,
  DescribeNodegroupCommand,
  DescribeUpdateCommand,
  TagResourceCommand,
  UpdateClusterConfigCommand,
  UpdateClusterVersionCommand,
  UpdateNodegroupConfigCommand,
  UpdateNodegroupVersionCommand,
  UpdatePodIdentityAssociationCommand,
} from '@aws-sdk/client-eks';
import { DeleteRuleCommand, DescribeRuleCommand, PutRuleCommand, PutTargetsCommand, RemoveTargetsCommand, TagResourceCommand as EventsTagResourceCommand } from '@aws-sdk/client-eventbridge';
import {
  AttachRolePolicyCommand,
  CreateOpenIDConnectProviderCommand,
  CreateRoleCommand,
  CreateServiceLinkedRoleCommand,
  DeleteInstanceProfileCommand,
  DeleteOpenIDConnectProviderCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  DetachRolePolicyCommand,
  PutRolePolicyCommand,
  RemoveRoleFromInstanceProfileCommand,
  TagOpenIDConnectProviderCommand,
  TagRoleCommand,
  UpdateAssumeRolePolicyCommand,
} from '@aws-sdk/client-iam';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SetQueueAttributesCommand, TagQueueCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from './clients.js';
import { ownerTags, type DesiredState } from './desired.js';
import type { Action, KarpenterLeftovers, Plan, Step, Trust } from './model.js';
import { InfraError } from './model.js';
import { findClusterSecurityGroup, isNotFound, observeKarpenter } from './observe.js';
import { RULE_TARGET_ID, irsaTrust } from './policies.js';
import { retryIamPropagation } from './retry.js';
import { queueArn, roleArn } from './plan.js';

/**
 * Executes a plan: SDK calls only, no decisions beyond "already done counts as done".
 * Each action starts as soon as the actions it comes `after` have finished, so
 * independent resources are made in parallel.
 */

export interface ApplyContext {
  readonly clients: AwsClients;
  readonly desired: DesiredState;
  readonly plan: Plan;
  readonly partition: string;
  /** Progress lines (waits, steps). */
  readonly log: (line: string) => void;
  /** Poll interval for EKS waits; tests shorten it. */
  readonly pollMs?: number;
  /** Upper bound for one EKS wait. */
  readonly waitTimeoutMs?: number;
  /** First backoff of the IAM propagation retry; tests shorten it. */
  readonly retryBaseMs?: number;
}

export interface ApplyResult {
  readonly done: readonly string[];
  readonly failed: readonly { readonly resource: string; readonly error: Error }[];
}

const PAST: Record<Action['kind'], string> = { create: 'created', update: 'updated', delete: 'deleted', wait: 'waited for', noop: 'kept' };

export async function execute(ctx: ApplyContext): Promise<ApplyResult> {
  const byResource = new Map(ctx.plan.actions.map((a) => [a.resource, a]));
  const running = new Map<string, Promise<void>>();
  const done: string[] = [];
  const failed: { resource: string; error: Error }[] = [];
  // Memoized: each action runs once, after everything it names in `after`, wherever it sits in the list.
  const run = (resource: string): Promise<void> => {
    const existing = running.get(resource);
    if (existing) return existing;
    const action = byResource.get(resource);
    const p = (async () => {
      if (!action) return;
      await Promise.all(action.after.map(run));
      if (!action.step) return;
      try {
        await runStep(ctx, action, action.step);
      } catch (err) {
        failed.push({ resource, error: err as Error });
        throw err;
      }
      done.push(resource);
      ctx.log(`  ${PAST[action.kind]} ${resource}`);
    })();
    running.set(resource, p);
    return p;
  };
  await Promise.allSettled(ctx.plan.actions.map((a) => run(a.resource)));
  return { done, failed };
}

/** A delete or a create that finds its work already done "idempotently succeeded". */
async function tolerate(names: readonly string[], call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (err) {
    const e = err as { name?: string; message?: string };
    if (names.includes(e.name ?? '') || isNotFound(err)) return;
    throw err;
  }
}
const gone = (call: () => Promise<unknown>) => tolerate([], call);

async function runStep(ctx: ApplyContext, action: Action, step: Step): Promise<void> {
  const { clients: c, desired: d } = ctx;
  const propagated = <T>(what: string, call: () => Promise<T>) =>
    retryIamPropagation(what, call, { log: ctx.log, ...(ctx.retryBaseMs !== undefined ? { baseMs: ctx.retryBaseMs } : {}) });
  const acct = { partition: ctx.partition, accountId: ctx.plan.accountId };
  const clusterName = d.clusterName;
  const owner = ownerTags(d);
  const ownerList = Object.entries(owner).map(([Key, Value]) => ({ Key, Value }));
  const tag = [{ Key: d.discoveryTag.key, Value: d.discoveryTag.value }];
  switch (step.type) {
    case 'tagSubnets':
      if (step.add.length > 0) await c.ec2.send(new CreateTagsCommand({ Resources: [...step.add], Tags: tag }));
      if (step.remove.length > 0) await c.ec2.send(new DeleteTagsCommand({ Resources: [...step.remove], Tags: [{ Key: d.discoveryTag.key }] }));
      return;
    case 'tagSecurityGroups': {
      const add = step.add === 'cluster' ? await clusterSecurityGroup(ctx) : step.add;
      if (add) await c.ec2.send(new CreateTagsCommand({ Resources: [add], Tags: tag }));
      else if (step.add === 'cluster') ctx.log(`  warning: cluster ${clusterName} reports no cluster security group; none tagged`);
      const remove = step.remove.filter((id) => id !== add);
      if (remove.length > 0) await c.ec2.send(new DeleteTagsCommand({ Resources: remove, Tags: [{ Key: d.discoveryTag.key }] }));
      return;
    }
    case 'role': {
      const trust = step.trust ? await trustDocument(ctx, step.trust) : undefined;
      if (step.create) {
        await tolerate(['EntityAlreadyExists', 'EntityAlreadyExistsException'], () =>
          c.iam.send(new CreateRoleCommand({ RoleName: step.name, AssumeRolePolicyDocument: trust!, Description: `Karpenter on EKS: ${clusterName}`, Tags: ownerList })),
        );
      } else if (trust) {
        await c.iam.send(new UpdateAssumeRolePolicyCommand({ RoleName: step.name, PolicyDocument: trust }));
      }
      if (step.adopt) await c.iam.send(new TagRoleCommand({ RoleName: step.name, Tags: ownerList }));
      await Promise.all([
        ...step.attach.map((arn) => c.iam.send(new AttachRolePolicyCommand({ RoleName: step.name, PolicyArn: arn }))),
        ...step.detach.map((arn) => gone(() => c.iam.send(new DetachRolePolicyCommand({ RoleName: step.name, PolicyArn: arn })))),
        ...step.deleteInline.map((p) => gone(() => c.iam.send(new DeleteRolePolicyCommand({ RoleName: step.name, PolicyName: p })))),
        ...(step.putInline ? [c.iam.send(new PutRolePolicyCommand({ RoleName: step.name, PolicyName: step.putInline.name, PolicyDocument: step.putInline.document }))] : []),
      ]);
      return;
    }
    case 'cluster': {
      if (step.create) {
        await tolerate(['ResourceInUseException'], () =>
          propagated(`CreateCluster ${clusterName}`, () => c.eks.send(
            new CreateClusterCommand({
              name: clusterName,
              version: d.kubernetesVersion,
              roleArn: roleArn(acct, d.names.clusterRole),
              accessConfig: { authenticationMode: 'API', bootstrapClusterCreatorAdminPermissions: true },
              resourcesVpcConfig: {
                subnetIds: [...d.privateSubnetIds],
                endpointPrivateAccess: true,
                endpointPublicAccess: d.publicAccessCidrs.length > 0,
                ...(d.publicAccessCidrs.length > 0 ? { publicAccessCidrs: [...d.publicAccessCidrs] } : {}),
              },
              tags: { 'karpenter.sh/discovery': clusterName, ...owner },
            }),
          )),
        );
      } else {
        if (step.adopt) await c.eks.send(new TagResourceCommand({ resourceArn: await clusterArn(ctx), tags: owner }));
        // EKS allows one update at a time per cluster: each is awaited through DescribeUpdate before the next.
        if (step.version) {
          const res = await c.eks.send(new UpdateClusterVersionCommand({ name: clusterName, version: step.version }));
          await waitUpdate(ctx, `Kubernetes ${step.version} update of cluster ${clusterName}`, res.update?.id);
        }
        if (step.authenticationMode) {
          const res = await c.eks.send(new UpdateClusterConfigCommand({ name: clusterName, accessConfig: { authenticationMode: step.authenticationMode } }));
          await waitUpdate(ctx, `authentication mode update of cluster ${clusterName}`, res.update?.id);
        }
        if (step.endpoint) {
          const e = step.endpoint;
          const res = await c.eks.send(
            new UpdateClusterConfigCommand({
              name: clusterName,
              resourcesVpcConfig: { endpointPublicAccess: e.public, endpointPrivateAccess: e.private, ...(e.public ? { publicAccessCidrs: [...e.publicAccessCidrs] } : {}) },
            }),
          );
          await waitUpdate(ctx, `endpoint access update of cluster ${clusterName}`, res.update?.id);
        }
      }
      await waitCluster(ctx, 'ACTIVE');
      return;
    }
    case 'waitCluster':
      await waitCluster(ctx, 'ACTIVE');
      return;
    case 'waitNodeGroup':
      await waitNodeGroup(ctx, 'ACTIVE');
      return;
    case 'nodeGroup': {
      const ng = d.systemNodeGroup;
      if (step.create) {
        await tolerate(['ResourceInUseException'], () =>
          propagated(`CreateNodegroup ${ng.name}`, () => c.eks.send(
            new CreateNodegroupCommand({
              clusterName,
              nodegroupName: ng.name,
              // Explicit: the nodes start at the control plane's version, which later upgrades compare against.
              version: d.kubernetesVersion,
              nodeRole: roleArn(acct, d.names.systemNodeRole),
              subnets: [...d.privateSubnetIds],
              instanceTypes: [...ng.instanceTypes],
              scalingConfig: { minSize: ng.size, desiredSize: ng.size, maxSize: ng.size },
              labels: { ...ng.labels },
              tags: owner,
              amiType: step.amiType ?? 'AL2023_x86_64_STANDARD',
            }),
          )),
        );
      } else {
        if (step.adopt) {
          const res = await c.eks.send(new DescribeNodegroupCommand({ clusterName, nodegroupName: ng.name }));
          await c.eks.send(new TagResourceCommand({ resourceArn: res.nodegroup!.nodegroupArn!, tags: owner }));
        }
        if (step.size || step.labels) {
          const res = await c.eks.send(
            new UpdateNodegroupConfigCommand({
              clusterName,
              nodegroupName: ng.name,
              ...(step.size ? { scalingConfig: { minSize: step.size, desiredSize: step.size, maxSize: step.size } } : {}),
              ...(step.labels ? { labels: { addOrUpdateLabels: { ...step.labels.set }, ...(step.labels.remove.length ? { removeLabels: [...step.labels.remove] } : {}) } } : {}),
            }),
          );
          await waitUpdate(ctx, `config update of node group ${ng.name}`, res.update?.id, ng.name);
        }
        if (step.version) {
          const res = await c.eks.send(new UpdateNodegroupVersionCommand({ clusterName, nodegroupName: ng.name, version: step.version }));
          await waitUpdate(ctx, `Kubernetes ${step.version} update of node group ${ng.name}`, res.update?.id, ng.name);
        }
      }
      await waitNodeGroup(ctx, 'ACTIVE');
      return;
    }
    case 'accessEntry':
      if (step.replace) await gone(() => c.eks.send(new DeleteAccessEntryCommand({ clusterName, principalArn: roleArn(acct, d.names.nodeRole) })));
      await tolerate(['ResourceInUseException'], () =>
        propagated(`CreateAccessEntry ${d.names.nodeRole}`, () => c.eks.send(new CreateAccessEntryCommand({ clusterName, principalArn: roleArn(acct, d.names.nodeRole), type: step.entryType }))),
      );
      return;
    case 'queue': {
      if (step.create) {
        await c.sqs.send(new CreateQueueCommand({ QueueName: d.names.queue, Attributes: { ...step.attributes }, tags: owner }));
      } else {
        const url = (await c.sqs.send(new GetQueueUrlCommand({ QueueName: d.names.queue }))).QueueUrl!;
        if (step.adopt) await c.sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: owner }));
        if (Object.keys(step.attributes).length > 0) await c.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { ...step.attributes } }));
      }
      return;
    }
    case 'rule':
      if (step.putRule) {
        const res = await c.events.send(
          new PutRuleCommand({ Name: step.name, EventPattern: step.pattern, State: 'ENABLED', Description: `Karpenter interruption events for ${clusterName}`, Tags: ownerList }),
        );
        if (step.adopt) await c.events.send(new EventsTagResourceCommand({ ResourceARN: res.RuleArn!, Tags: ownerList }));
      } else if (step.adopt) {
        const rule = await c.events.send(new DescribeRuleCommand({ Name: step.name }));
        await c.events.send(new EventsTagResourceCommand({ ResourceARN: rule.Arn!, Tags: ownerList }));
      }
      if (step.putTarget) await c.events.send(new PutTargetsCommand({ Rule: step.name, Targets: [{ Id: RULE_TARGET_ID, Arn: queueArn(d, acct) }] }));
      if (step.removeTargets?.length) await c.events.send(new RemoveTargetsCommand({ Rule: step.name, Ids: [...step.removeTargets] }));
      return;
    case 'oidcProvider': {
      if (step.adopt) {
        await c.iam.send(new TagOpenIDConnectProviderCommand({ OpenIDConnectProviderArn: step.adopt, Tags: ownerList }));
        return;
      }
      const issuer = await clusterIssuer(ctx);
      await tolerate(['EntityAlreadyExists', 'EntityAlreadyExistsException'], () =>
        c.iam.send(new CreateOpenIDConnectProviderCommand({ Url: issuer, ClientIDList: ['sts.amazonaws.com'], Tags: ownerList })),
      );
      return;
    }
    case 'addon':
      await tolerate(['ResourceInUseException'], () => c.eks.send(new CreateAddonCommand({ clusterName, addonName: 'eks-pod-identity-agent' })));
      return;
    case 'podIdentityAssociation': {
      const roleArnValue = roleArn(acct, d.names.controllerRole);
      const what = `${step.existingId ? 'Update' : 'Create'}PodIdentityAssociation ${d.namespace}/${d.serviceAccount}`;
      await propagated(what, () =>
        step.existingId
          ? c.eks.send(new UpdatePodIdentityAssociationCommand({ clusterName, associationId: step.existingId, roleArn: roleArnValue }))
          : c.eks.send(new CreatePodIdentityAssociationCommand({ clusterName, namespace: d.namespace, serviceAccount: d.serviceAccount, roleArn: roleArnValue })),
      );
      return;
    }
    case 'spotServiceLinkedRole':
      // IAM answers InvalidInput "has been taken" when another tool made it first: that is success.
      await tolerate(['InvalidInput', 'InvalidInputException', 'EntityAlreadyExists', 'EntityAlreadyExistsException'], () => c.iam.send(new CreateServiceLinkedRoleCommand({ AWSServiceName: 'spot.amazonaws.com' })));
      return;
    case 'cutController':
      await gone(() => c.iam.send(new DeleteRolePolicyCommand({ RoleName: step.role, PolicyName: step.policy })));
      return;
    case 'sweepKarpenter': {
      const left = await observeKarpenter(c, d);
      const ids = left.instances.map((i) => i.id);
      if (ids.length + left.launchTemplates.length + left.instanceProfiles.length === 0) return;
      ctx.log(
        `  sweep: Karpenter left ${ids.length} instance(s), ${left.launchTemplates.length} launch template(s), ${left.instanceProfiles.length} instance profile(s) after the cluster went; removing them`,
      );
      // The cluster is gone: nothing can drain these any more, and they would run (and bill) forever.
      await terminate(ctx, ids);
      await deleteLaunchTemplates(ctx, left.launchTemplates.map((t) => t.id));
      await deleteInstanceProfiles(ctx, left.instanceProfiles);
      return;
    }
    case 'terminateInstances':
      await terminate(ctx, step.ids);
      return;
    case 'deleteLaunchTemplates':
      await deleteLaunchTemplates(ctx, step.ids);
      return;
    case 'deleteInstanceProfiles':
      await deleteInstanceProfiles(ctx, step.profiles);
      return;
    case 'deletePodIdentityAssociation':
      await gone(() => c.eks.send(new DeletePodIdentityAssociationCommand({ clusterName, associationId: step.id })));
      return;
    case 'deleteAddon':
      await gone(() => c.eks.send(new DeleteAddonCommand({ clusterName, addonName: 'eks-pod-identity-agent' })));
      return;
    case 'deleteAccessEntry':
      await gone(() => c.eks.send(new DeleteAccessEntryCommand({ clusterName, principalArn: roleArn(acct, d.names.nodeRole) })));
      return;
    case 'deleteRule':
      if (step.targetIds.length > 0) await gone(() => c.events.send(new RemoveTargetsCommand({ Rule: step.name, Ids: [...step.targetIds] })));
      await gone(() => c.events.send(new DeleteRuleCommand({ Name: step.name })));
      return;
    case 'deleteNodeGroup':
      await gone(() => c.eks.send(new DeleteNodegroupCommand({ clusterName, nodegroupName: d.systemNodeGroup.name })));
      await waitNodeGroup(ctx, null);
      return;
    case 'deleteCluster':
      await gone(() => c.eks.send(new DeleteClusterCommand({ name: clusterName })));
      await waitCluster(ctx, null);
      return;
    case 'deleteOidcProvider':
      await gone(() => c.iam.send(new DeleteOpenIDConnectProviderCommand({ OpenIDConnectProviderArn: step.arn })));
      return;
    case 'deleteQueue':
      await gone(() => c.sqs.send(new DeleteQueueCommand({ QueueUrl: step.url })));
      return;
    case 'deleteRole':
      await Promise.all([
        ...step.attached.map((arn) => gone(() => c.iam.send(new DetachRolePolicyCommand({ RoleName: step.name, PolicyArn: arn })))),
        ...step.inline.map((p) => gone(() => c.iam.send(new DeleteRolePolicyCommand({ RoleName: step.name, PolicyName: p })))),
      ]);
      await gone(() => c.iam.send(new DeleteRoleCommand({ RoleName: step.name })));
      return;
    default:
      throw new InfraError('E_INTERNAL', `no executor for ${action.resource}`);
  }
}

async function terminate(ctx: ApplyContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await gone(() => ctx.clients.ec2.send(new TerminateInstancesCommand({ InstanceIds: [...ids] })));
  await waitTerminated(ctx, ids);
}

const deleteLaunchTemplates = (ctx: ApplyContext, ids: readonly string[]) =>
  Promise.all(ids.map((id) => gone(() => ctx.clients.ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateId: id })))));

const deleteInstanceProfiles = (ctx: ApplyContext, profiles: KarpenterLeftovers['instanceProfiles']) =>
  Promise.all(
    profiles.map(async (p) => {
      for (const role of p.roles) await gone(() => ctx.clients.iam.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName: p.name, RoleName: role })));
      await gone(() => ctx.clients.iam.send(new DeleteInstanceProfileCommand({ InstanceProfileName: p.name })));
    }),
  );

async function trustDocument(ctx: ApplyContext, trust: Trust): Promise<string> {
  if ('document' in trust) return trust.document;
  const issuer = await clusterIssuer(ctx);
  return JSON.stringify(irsaTrust(ctx.partition, ctx.plan.accountId, issuer, trust.irsa.namespace, trust.irsa.serviceAccount));
}

async function clusterArn(ctx: ApplyContext): Promise<string> {
  return (await ctx.clients.eks.send(new DescribeClusterCommand({ name: ctx.desired.clusterName }))).cluster!.arn!;
}

async function clusterIssuer(ctx: ApplyContext): Promise<string> {
  const res = await ctx.clients.eks.send(new DescribeClusterCommand({ name: ctx.desired.clusterName }));
  const issuer = res.cluster?.identity?.oidc?.issuer;
  if (!issuer) throw new InfraError('E_NO_ISSUER', `cluster ${ctx.desired.clusterName} has no OIDC issuer yet; IRSA needs it`);
  return issuer;
}

const elapsed = (since: number) => {
  const s = Math.round((Date.now() - since) / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

/**
 * Polls until `read` reports `want` (null = gone), printing the status and elapsed time
 * on every change and at least every minute: EKS clusters take ~10 minutes.
 */
async function waitFor(ctx: ApplyContext, what: string, read: () => Promise<string | null>, want: string | null): Promise<void> {
  const since = Date.now();
  const poll = ctx.pollMs ?? 15_000;
  const timeout = ctx.waitTimeoutMs ?? 40 * 60_000;
  let last: string | null | undefined;
  let lastPrinted = since;
  for (;;) {
    const status = await read();
    if (status === want) {
      if (Date.now() - since > poll) ctx.log(`  ${what}: ${want ?? 'gone'} after ${elapsed(since)}`);
      return;
    }
    if (status === 'FAILED' || status === 'CREATE_FAILED' || status === 'DELETE_FAILED') throw new InfraError('E_WAIT_FAILED', `${what} is ${status} after ${elapsed(since)}`);
    if (Date.now() - since > timeout) throw new InfraError('E_WAIT_TIMEOUT', `${what} still ${status} after ${elapsed(since)}; run the command again to resume`);
    if (status !== last || Date.now() - lastPrinted >= 60_000) {
      ctx.log(`  waiting for ${what}: ${status ?? 'gone'} (${elapsed(since)} elapsed)`);
      last = status;
      lastPrinted = Date.now();
    }
    await new Promise((r) => setTimeout(r, poll));
  }
}

const waitCluster = (ctx: ApplyContext, want: string | null) =>
  waitFor(
    ctx,
    `cluster ${ctx.desired.clusterName}`,
    async () => {
      try {
        return (await ctx.clients.eks.send(new DescribeClusterCommand({ name: ctx.desired.clusterName }))).cluster?.status ?? null;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    want,
  );

/**
 * Waits for one EKS update (cluster or node group) until Successful; Failed or Cancelled
 * fail with EKS's own errors. Without an id (an emulator that does not return one) there
 * is nothing to follow: the status wait after it still applies.
 */
async function waitUpdate(ctx: ApplyContext, what: string, id: string | undefined, nodegroupName?: string): Promise<void> {
  if (!id) return;
  await waitFor(
    ctx,
    what,
    async () => {
      const res = await ctx.clients.eks.send(new DescribeUpdateCommand({ name: ctx.desired.clusterName, updateId: id, ...(nodegroupName ? { nodegroupName } : {}) }));
      const status = res.update?.status ?? 'UNKNOWN';
      if (status === 'Failed' || status === 'Cancelled') {
        const errors = (res.update?.errors ?? []).map((e) => `${e.errorCode}: ${e.errorMessage}`).join('; ');
        throw new InfraError('E_UPDATE_FAILED', `${what} (${id}) is ${status}${errors ? `: ${errors}` : ''}`);
      }
      return status;
    },
    'Successful',
  );
}

const waitNodeGroup = (ctx: ApplyContext, want: string | null) =>
  waitFor(
    ctx,
    `node group ${ctx.desired.systemNodeGroup.name}`,
    async () => {
      try {
        const res = await ctx.clients.eks.send(new DescribeNodegroupCommand({ clusterName: ctx.desired.clusterName, nodegroupName: ctx.desired.systemNodeGroup.name }));
        return res.nodegroup?.status ?? null;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    want,
  );

const waitTerminated = (ctx: ApplyContext, ids: readonly string[]) =>
  waitFor(
    ctx,
    `${ids.length} Karpenter instance(s)`,
    async () => {
      const res = await ctx.clients.ec2.send(new DescribeInstancesCommand({ InstanceIds: [...ids] }));
      const states = (res.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => i.State?.Name);
      return states.every((s) => s === 'terminated') ? 'terminated' : (states.find((s) => s !== 'terminated') ?? 'unknown');
    },
    'terminated',
  );

async function clusterSecurityGroup(ctx: ApplyContext): Promise<string | undefined> {
  const res = await ctx.clients.eks.send(new DescribeClusterCommand({ name: ctx.desired.clusterName }));
  return findClusterSecurityGroup(ctx.clients, ctx.desired, res.cluster?.resourcesVpcConfig?.clusterSecurityGroupId);
}
