import {
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  type Filter,
} from '@aws-sdk/client-ec2';
import {
  DescribeAccessEntryCommand,
  DescribeAddonCommand,
  DescribeClusterCommand,
  DescribeNodegroupCommand,
  DescribePodIdentityAssociationCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import { DescribeRuleCommand, ListTagsForResourceCommand, ListTargetsByRuleCommand } from '@aws-sdk/client-eventbridge';
import {
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  GetInstanceProfileCommand,
  ListOpenIDConnectProviderTagsCommand,
  ListOpenIDConnectProvidersCommand,
  ListRolePoliciesCommand,
  ListRolesCommand,
  paginateListInstanceProfiles,
} from '@aws-sdk/client-iam';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueueTagsCommand } from '@aws-sdk/client-sqs';
import { GetCallerIdentityCommand } from '@aws-sdk/client-sts';
import type { AwsClients } from './clients.js';
import type { DesiredState } from './desired.js';
import type { KarpenterLeftovers, Observed, ObservedCluster, ObservedRole, ObservedRule } from './model.js';
import { decodePolicy } from './policies.js';

/**
 * Reads what exists. Only Describe/Get/List calls. "Not found" becomes `null` (or
 * false / an empty list): absence is a value the planner reasons about, not an exception.
 */

const NOT_FOUND = new Set([
  'NoSuchEntity',
  'NoSuchEntityException',
  'ResourceNotFoundException',
  'AWS.SimpleQueueService.NonExistentQueue',
  'QueueDoesNotExist',
  'InvalidSubnetID.NotFound',
  // EC2: a security group EKS deleted with its cluster, a template or instance already removed.
  'InvalidGroup.NotFound',
  'InvalidLaunchTemplateId.NotFound',
  'InvalidLaunchTemplateName.NotFoundException',
  'InvalidInstanceID.NotFound',
]);

export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return NOT_FOUND.has(e.name ?? '') || NOT_FOUND.has(e.Code ?? '');
}

/** Runs a read; a not-found answer yields `null`. */
export async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export async function observe(c: AwsClients, d: DesiredState): Promise<Observed> {
  const identity = await c.sts.send(new GetCallerIdentityCommand({}));
  const accountId = identity.Account!;
  const partition = identity.Arn!.split(':')[1]!;
  const tagKey = d.discoveryTag.key;
  const tagFilter: Filter = { Name: `tag:${tagKey}`, Values: [d.discoveryTag.value] };

  const cluster = await observeCluster(c, d);
  const [subnets, taggedSubnets, taggedSgs, roles, nodeGroup, accessEntry, queue, rules, oidc, addon, pia, spot, karpenter] = await Promise.all([
    c.ec2.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'subnet-id', Values: [...d.privateSubnetIds] }] })),
    c.ec2.send(new DescribeSubnetsCommand({ Filters: [tagFilter] })),
    c.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [tagFilter, { Name: 'vpc-id', Values: [d.vpcId] }] })),
    Promise.all([d.names.clusterRole, d.names.systemNodeRole, d.names.nodeRole, d.names.controllerRole].map(async (n) => [n, await observeRole(c, n)] as const)),
    cluster
      ? orNull(() => c.eks.send(new DescribeNodegroupCommand({ clusterName: d.clusterName, nodegroupName: d.systemNodeGroup.name })))
      : null,
    cluster
      ? orNull(() => c.eks.send(new DescribeAccessEntryCommand({ clusterName: d.clusterName, principalArn: `arn:${partition}:iam::${accountId}:role/${d.names.nodeRole}` })))
      : null,
    observeQueue(c, d),
    Promise.all(d.names.rules.map(async (n) => [n, await observeRule(c, n)] as const)),
    observeOidcProvider(c, cluster),
    cluster ? orNull(() => c.eks.send(new DescribeAddonCommand({ clusterName: d.clusterName, addonName: 'eks-pod-identity-agent' }))) : null,
    cluster ? observePodIdentity(c, d) : null,
    // By path, not name: the path is fixed by AWS, and moto names the role differently.
    c.iam.send(new ListRolesCommand({ PathPrefix: '/aws-service-role/spot.amazonaws.com/' })),
    observeKarpenter(c, d),
  ]);
  const byId = new Map((subnets.Subnets ?? []).map((s) => [s.SubnetId!, s]));
  const tagged = new Set((taggedSubnets.Subnets ?? []).map((s) => s.SubnetId!));
  const ng = nodeGroup?.nodegroup;
  return {
    accountId,
    partition,
    subnets: Object.fromEntries(
      d.privateSubnetIds.map((id) => {
        const s = byId.get(id);
        return [id, s ? { id, vpcId: s.VpcId!, az: s.AvailabilityZone!, tagged: tagged.has(id) } : null];
      }),
    ),
    strayTaggedSubnets: [...tagged].filter((id) => !d.privateSubnetIds.includes(id)).sort(),
    taggedSecurityGroups: (taggedSgs.SecurityGroups ?? []).map((g) => g.GroupId!).sort(),
    roles: Object.fromEntries(roles),
    cluster,
    nodeGroup: ng
      ? {
          status: ng.status ?? 'UNKNOWN',
          ...(ng.version ? { version: ng.version } : {}),
          min: ng.scalingConfig?.minSize ?? 0,
          max: ng.scalingConfig?.maxSize ?? 0,
          desired: ng.scalingConfig?.desiredSize ?? 0,
          labels: ng.labels ?? {},
          tags: ng.tags ?? {},
        }
      : null,
    accessEntry: accessEntry?.accessEntry ? (accessEntry.accessEntry.type ?? 'STANDARD') : null,
    queue,
    rules: Object.fromEntries(rules),
    oidcProviderArn: oidc?.arn ?? null,
    oidcProviderTags: oidc?.tags ?? {},
    addon: Boolean(addon?.addon),
    podIdentityAssociation: pia,
    spotServiceLinkedRole: (spot.Roles ?? []).length > 0,
    karpenter,
  };
}

async function observeCluster(c: AwsClients, d: DesiredState): Promise<ObservedCluster | null> {
  const res = await orNull(() => c.eks.send(new DescribeClusterCommand({ name: d.clusterName })));
  const cl = res?.cluster;
  if (!cl || cl.status === 'DELETING') return cl ? { status: 'DELETING', version: cl.version ?? '', tags: cl.tags ?? {} } : null;
  const securityGroupId = await findClusterSecurityGroup(c, d, cl.resourcesVpcConfig?.clusterSecurityGroupId);
  return {
    status: cl.status ?? 'UNKNOWN',
    version: cl.version ?? '',
    ...(cl.identity?.oidc?.issuer ? { issuer: cl.identity.oidc.issuer } : {}),
    ...(securityGroupId ? { securityGroupId } : {}),
    ...(cl.accessConfig?.authenticationMode ? { authenticationMode: cl.accessConfig.authenticationMode } : {}),
    ...(cl.resourcesVpcConfig?.publicAccessCidrs ? { publicAccessCidrs: cl.resourcesVpcConfig.publicAccessCidrs } : {}),
    ...(cl.resourcesVpcConfig?.endpointPublicAccess !== undefined ? { endpointPublicAccess: cl.resourcesVpcConfig.endpointPublicAccess } : {}),
    ...(cl.resourcesVpcConfig?.endpointPrivateAccess !== undefined ? { endpointPrivateAccess: cl.resourcesVpcConfig.endpointPrivateAccess } : {}),
    tags: cl.tags ?? {},
  };
}

/** The security group EKS made for the cluster: as reported, else by the tag EKS puts on it (moto reports no id). */
export async function findClusterSecurityGroup(c: AwsClients, d: DesiredState, reported: string | undefined): Promise<string | undefined> {
  if (reported) return reported;
  const sgs = await c.ec2.send(
    new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'tag:aws:eks:cluster-name', Values: [d.clusterName] }, { Name: 'vpc-id', Values: [d.vpcId] }] }),
  );
  return sgs.SecurityGroups?.[0]?.GroupId;
}

export async function observeRole(c: AwsClients, name: string): Promise<ObservedRole | null> {
  const role = await orNull(() => c.iam.send(new GetRoleCommand({ RoleName: name })));
  if (!role?.Role) return null;
  const [attached, inlineNames] = await Promise.all([
    c.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: name })),
    c.iam.send(new ListRolePoliciesCommand({ RoleName: name })),
  ]);
  const inline = await Promise.all(
    (inlineNames.PolicyNames ?? []).map(async (p) => {
      const doc = await c.iam.send(new GetRolePolicyCommand({ RoleName: name, PolicyName: p }));
      return [p, decodePolicy(doc.PolicyDocument ?? '{}')] as const;
    }),
  );
  return {
    arn: role.Role.Arn!,
    trust: decodePolicy(role.Role.AssumeRolePolicyDocument ?? '{}'),
    attached: (attached.AttachedPolicies ?? []).map((p) => p.PolicyArn!).sort(),
    inline: Object.fromEntries(inline),
    tags: tagMap(role.Role.Tags),
  };
}

async function observeQueue(c: AwsClients, d: DesiredState) {
  const url = await orNull(() => c.sqs.send(new GetQueueUrlCommand({ QueueName: d.names.queue })));
  if (!url?.QueueUrl) return null;
  const attrs = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url.QueueUrl, AttributeNames: ['All'] }));
  const attributes = attrs.Attributes ?? {};
  const tags = await c.sqs.send(new ListQueueTagsCommand({ QueueUrl: url.QueueUrl }));
  return { url: url.QueueUrl, arn: attributes.QueueArn ?? '', attributes, tags: tags.Tags ?? {} };
}

async function observeRule(c: AwsClients, name: string): Promise<ObservedRule | null> {
  const rule = await orNull(() => c.events.send(new DescribeRuleCommand({ Name: name })));
  if (!rule) return null;
  const [targets, tags] = await Promise.all([
    c.events.send(new ListTargetsByRuleCommand({ Rule: name })),
    c.events.send(new ListTagsForResourceCommand({ ResourceARN: rule.Arn! })),
  ]);
  return {
    pattern: rule.EventPattern ?? '{}',
    state: rule.State ?? 'UNKNOWN',
    targets: (targets.Targets ?? []).map((t) => ({ id: t.Id!, arn: t.Arn! })),
    tags: tagMap(tags.Tags),
  };
}

async function observeOidcProvider(c: AwsClients, cluster: ObservedCluster | null): Promise<{ arn: string; tags: Record<string, string> } | null> {
  if (!cluster?.issuer) return null;
  const host = cluster.issuer.replace(/^https:\/\//, '');
  const list = await c.iam.send(new ListOpenIDConnectProvidersCommand({}));
  const arn = list.OpenIDConnectProviderList?.find((p) => p.Arn?.endsWith(`:oidc-provider/${host}`))?.Arn;
  if (!arn) return null;
  const tags = await c.iam.send(new ListOpenIDConnectProviderTagsCommand({ OpenIDConnectProviderArn: arn }));
  return { arn, tags: tagMap(tags.Tags) };
}

const tagMap = (tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined): Record<string, string> =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));

async function observePodIdentity(c: AwsClients, d: DesiredState) {
  const list = await c.eks.send(new ListPodIdentityAssociationsCommand({ clusterName: d.clusterName, namespace: d.namespace, serviceAccount: d.serviceAccount }));
  const id = list.associations?.[0]?.associationId;
  if (!id) return null;
  const one = await c.eks.send(new DescribePodIdentityAssociationCommand({ clusterName: d.clusterName, associationId: id }));
  return { id, roleArn: one.association?.roleArn ?? '' };
}

/** Karpenter's own resources for this cluster, found by the tags Karpenter's IAM policy forces on them. */
export async function observeKarpenter(c: AwsClients, d: DesiredState): Promise<KarpenterLeftovers> {
  const owned = `kubernetes.io/cluster/${d.clusterName}`;
  const filters: Filter[] = [
    { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
    { Name: `tag:${owned}`, Values: ['owned'] },
  ];
  const [reservations, templates, profiles] = await Promise.all([
    c.ec2.send(new DescribeInstancesCommand({ Filters: filters })),
    c.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: filters })),
    listKarpenterProfiles(c, d, owned),
  ]);
  return {
    instances: (reservations.Reservations ?? [])
      .flatMap((r) => r.Instances ?? [])
      .filter((i) => i.State?.Name !== 'terminated')
      .map((i) => ({ id: i.InstanceId!, state: i.State?.Name ?? 'unknown' }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    launchTemplates: (templates.LaunchTemplates ?? []).map((t) => ({ id: t.LaunchTemplateId!, name: t.LaunchTemplateName! })).sort((a, b) => a.name.localeCompare(b.name)),
    instanceProfiles: profiles,
  };
}

async function listKarpenterProfiles(c: AwsClients, d: DesiredState, owned: string) {
  const out: { name: string; roles: string[] }[] = [];
  for await (const page of paginateListInstanceProfiles({ client: c.iam }, {})) {
    // Karpenter names its profiles `<cluster>_<hash>`; the tags below decide, the prefix only saves calls.
    for (const p of (page.InstanceProfiles ?? []).filter((x) => x.InstanceProfileName?.startsWith(`${d.clusterName}_`))) {
      // Listing leaves tags out; GetInstanceProfile has them.
      const full = await orNull(() => c.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: p.InstanceProfileName! })));
      const tags = full?.InstanceProfile?.Tags ?? [];
      const has = (k: string, v?: string) => tags.some((t) => t.Key === k && (v === undefined || t.Value === v));
      if (has('karpenter.k8s.aws/ec2nodeclass') && has(owned, 'owned')) {
        out.push({ name: p.InstanceProfileName!, roles: (p.Roles ?? []).map((r) => r.RoleName!) });
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
