/**
 * IAM and SQS policy documents and the EventBridge rule table, built in code from typed
 * tables. Every table here is compared statement by statement with the vendored upstream
 * template (infra/reference/cloudformation.yaml) in test/infra/policies.test.ts.
 * No SDK imports: this module is pure.
 */

export type ConditionBlock = Readonly<Record<string, Readonly<Record<string, string | boolean | readonly string[]>>>>;

export interface Statement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Principal?: '*' | Readonly<Record<string, string | readonly string[]>>;
  readonly Action: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly Condition?: ConditionBlock;
}

export interface PolicyDocument {
  readonly Version?: '2012-10-17';
  readonly Id?: string;
  readonly Statement: readonly Statement[];
}

/** Values the upstream template substitutes with `!Sub`. */
export interface PolicyContext {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly clusterName: string;
  readonly nodeRoleArn: string;
  readonly queueArn: string;
}

/** IAM's limit on the size of one inline role policy (characters, whitespace excluded by us). */
export const INLINE_POLICY_LIMIT = 10_240;
export const CONTROLLER_POLICY_NAME = 'KarpenterControllerPolicy';

/**
 * The 18 statements of Karpenter v1.13.1's controller policies (six managed policies
 * upstream), merged into one inline policy so a cluster needs no account-level managed
 * policies. Order follows the template.
 */
export function controllerStatements(c: PolicyContext): Statement[] {
  const ec2 = (res: string) => `arn:${c.partition}:ec2:${c.region}:*:${res}`;
  const ec2Global = (res: string) => `arn:${c.partition}:ec2:${c.region}::${res}`;
  const profiles = `arn:${c.partition}:iam::${c.accountId}:instance-profile/*`;
  const clusterArn = `arn:${c.partition}:eks:${c.region}:${c.accountId}:cluster/${c.clusterName}`;
  const owned = `kubernetes.io/cluster/${c.clusterName}`;
  const taggable = ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*', 'launch-template/*', 'spot-instances-request/*'].map(ec2);
  const launchActions = ['ec2:RunInstances', 'ec2:CreateFleet'];
  return [
    // NodeLifecyclePolicy
    {
      Sid: 'AllowScopedEC2InstanceAccessActions',
      Effect: 'Allow',
      Resource: [ec2Global('image/*'), ec2Global('snapshot/*'), ...['security-group/*', 'subnet/*', 'capacity-reservation/*', 'placement-group/*'].map(ec2)],
      Action: launchActions,
    },
    {
      Sid: 'AllowScopedEC2LaunchTemplateAccessActions',
      Effect: 'Allow',
      Resource: ec2('launch-template/*'),
      Action: launchActions,
      Condition: { StringEquals: { [`aws:ResourceTag/${owned}`]: 'owned' }, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
    },
    {
      Sid: 'AllowScopedEC2InstanceActionsWithTags',
      Effect: 'Allow',
      Resource: taggable,
      Action: [...launchActions, 'ec2:CreateLaunchTemplate'],
      Condition: {
        StringEquals: { [`aws:RequestTag/${owned}`]: 'owned', 'aws:RequestTag/eks:eks-cluster-name': c.clusterName },
        StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
      },
    },
    {
      Sid: 'AllowScopedResourceCreationTagging',
      Effect: 'Allow',
      Resource: taggable,
      Action: 'ec2:CreateTags',
      Condition: {
        StringEquals: {
          [`aws:RequestTag/${owned}`]: 'owned',
          'aws:RequestTag/eks:eks-cluster-name': c.clusterName,
          'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
        },
        StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
      },
    },
    {
      Sid: 'AllowScopedResourceTagging',
      Effect: 'Allow',
      Resource: ec2('instance/*'),
      Action: 'ec2:CreateTags',
      Condition: {
        StringEquals: { [`aws:ResourceTag/${owned}`]: 'owned' },
        StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
        StringEqualsIfExists: { 'aws:RequestTag/eks:eks-cluster-name': c.clusterName },
        'ForAllValues:StringEquals': { 'aws:TagKeys': ['eks:eks-cluster-name', 'karpenter.sh/nodeclaim', 'Name'] },
      },
    },
    {
      Sid: 'AllowScopedDeletion',
      Effect: 'Allow',
      Resource: [ec2('instance/*'), ec2('launch-template/*')],
      Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      Condition: { StringEquals: { [`aws:ResourceTag/${owned}`]: 'owned' }, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
    },
    // IAMIntegrationPolicy
    {
      Sid: 'AllowPassingInstanceRole',
      Effect: 'Allow',
      Resource: c.nodeRoleArn,
      Action: 'iam:PassRole',
      Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
    },
    {
      Sid: 'AllowScopedInstanceProfileCreationActions',
      Effect: 'Allow',
      Resource: profiles,
      Action: ['iam:CreateInstanceProfile'],
      Condition: {
        StringEquals: {
          [`aws:RequestTag/${owned}`]: 'owned',
          'aws:RequestTag/eks:eks-cluster-name': c.clusterName,
          'aws:RequestTag/topology.kubernetes.io/region': c.region,
        },
        StringLike: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    },
    {
      Sid: 'AllowScopedInstanceProfileTagActions',
      Effect: 'Allow',
      Resource: profiles,
      Action: ['iam:TagInstanceProfile'],
      Condition: {
        StringEquals: {
          [`aws:ResourceTag/${owned}`]: 'owned',
          'aws:ResourceTag/topology.kubernetes.io/region': c.region,
          [`aws:RequestTag/${owned}`]: 'owned',
          'aws:RequestTag/eks:eks-cluster-name': c.clusterName,
          'aws:RequestTag/topology.kubernetes.io/region': c.region,
        },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*', 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    },
    {
      Sid: 'AllowScopedInstanceProfileActions',
      Effect: 'Allow',
      Resource: profiles,
      Action: ['iam:AddRoleToInstanceProfile', 'iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      Condition: {
        StringEquals: { [`aws:ResourceTag/${owned}`]: 'owned', 'aws:ResourceTag/topology.kubernetes.io/region': c.region },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    },
    // EKSIntegrationPolicy
    { Sid: 'AllowAPIServerEndpointDiscovery', Effect: 'Allow', Resource: clusterArn, Action: 'eks:DescribeCluster' },
    // InterruptionPolicy
    { Sid: 'AllowInterruptionQueueActions', Effect: 'Allow', Resource: c.queueArn, Action: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'] },
    // ZonalShiftPolicy
    {
      Sid: 'AllowZonalShiftStatusReadOnly',
      Effect: 'Allow',
      Resource: '*',
      Action: ['arc-zonal-shift:GetManagedResource'],
      Condition: { StringEquals: { 'arc-zonal-shift:ResourceIdentifier': clusterArn } },
    },
    // ResourceDiscoveryPolicy
    {
      Sid: 'AllowRegionalReadActions',
      Effect: 'Allow',
      Resource: '*',
      Action: [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeImages',
        'ec2:DescribeInstances',
        'ec2:DescribeInstanceStatus',
        'ec2:DescribeInstanceTypeOfferings',
        'ec2:DescribeInstanceTypes',
        'ec2:DescribeLaunchTemplates',
        'ec2:DescribePlacementGroups',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeSpotPriceHistory',
        'ec2:DescribeSubnets',
      ],
      Condition: { StringEquals: { 'aws:RequestedRegion': c.region } },
    },
    { Sid: 'AllowSSMReadActions', Effect: 'Allow', Resource: `arn:${c.partition}:ssm:${c.region}::parameter/aws/service/*`, Action: 'ssm:GetParameter' },
    { Sid: 'AllowPricingReadActions', Effect: 'Allow', Resource: '*', Action: 'pricing:GetProducts' },
    { Sid: 'AllowUnscopedInstanceProfileListAction', Effect: 'Allow', Resource: '*', Action: 'iam:ListInstanceProfiles' },
    { Sid: 'AllowInstanceProfileReadActions', Effect: 'Allow', Resource: profiles, Action: 'iam:GetInstanceProfile' },
  ];
}

/** The controller's inline policy, serialized compactly: whitespace would count against IAM's limit. */
export function controllerPolicyJson(c: PolicyContext): string {
  const doc: PolicyDocument = { Version: '2012-10-17', Statement: controllerStatements(c) };
  return JSON.stringify(doc);
}

/** Queue policy: only EventBridge and SQS may send; anything without TLS is denied. */
export function queuePolicy(queueArn: string): PolicyDocument {
  return {
    Version: '2012-10-17',
    Id: 'EC2InterruptionPolicy',
    Statement: [
      { Effect: 'Allow', Principal: { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] }, Action: 'sqs:SendMessage', Resource: queueArn },
      { Sid: 'DenyHTTP', Effect: 'Deny', Action: 'sqs:*', Resource: queueArn, Condition: { Bool: { 'aws:SecureTransport': false } }, Principal: '*' },
    ],
  };
}

export interface InterruptionRule {
  /** Upstream's logical id in the CloudFormation template. */
  readonly logicalId: string;
  /** Suffix of the rule name `<cluster>-<suffix>`; short, as rule names stop at 64 characters. */
  readonly suffix: string;
  readonly source: 'aws.health' | 'aws.ec2';
  readonly detailType: string;
}

/** The events Karpenter reacts to; each rule sends them to the interruption queue. */
export const INTERRUPTION_RULES: readonly InterruptionRule[] = [
  { logicalId: 'ScheduledChangeRule', suffix: 'health', source: 'aws.health', detailType: 'AWS Health Event' },
  { logicalId: 'SpotInterruptionRule', suffix: 'spot-interruption', source: 'aws.ec2', detailType: 'EC2 Spot Instance Interruption Warning' },
  { logicalId: 'RebalanceRule', suffix: 'rebalance', source: 'aws.ec2', detailType: 'EC2 Instance Rebalance Recommendation' },
  { logicalId: 'InstanceStateChangeRule', suffix: 'state-change', source: 'aws.ec2', detailType: 'EC2 Instance State-change Notification' },
  { logicalId: 'CapacityReservationInterruptionRule', suffix: 'capacity-reservation', source: 'aws.ec2', detailType: 'EC2 Capacity Reservation Instance Interruption Warning' },
];

export const RULE_TARGET_ID = 'KarpenterInterruptionQueueTarget';

export function rulePattern(rule: InterruptionRule): string {
  return JSON.stringify({ source: [rule.source], 'detail-type': [rule.detailType] });
}

export const serviceTrust = (service: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: service }, Action: 'sts:AssumeRole' }],
});

/** EKS Pod Identity: the agent assumes the role and tags the session with the pod's identity. */
export const podIdentityTrust = (): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'pods.eks.amazonaws.com' }, Action: ['sts:AssumeRole', 'sts:TagSession'] }],
});

/** IRSA: only the controller's service account, with the STS audience, may assume the role. */
export function irsaTrust(partition: string, accountId: string, issuerUrl: string, namespace: string, serviceAccount: string): PolicyDocument {
  const issuer = issuerUrl.replace(/^https:\/\//, '');
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: `arn:${partition}:iam::${accountId}:oidc-provider/${issuer}` },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: { StringEquals: { [`${issuer}:sub`]: `system:serviceaccount:${namespace}:${serviceAccount}`, [`${issuer}:aud`]: 'sts.amazonaws.com' } },
      },
    ],
  };
}

/**
 * Normal form for comparing policy documents: IAM returns them URL-encoded, may reorder
 * keys, and writes one-element lists as scalars (or the other way round).
 */
export function canonicalPolicy(doc: unknown): string {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length === 1 ? norm(v[0]) : v.map(norm);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, norm((v as Record<string, unknown>)[k])]),
      );
    }
    return typeof v === 'boolean' ? String(v) : v;
  };
  return JSON.stringify(norm(typeof doc === 'string' ? JSON.parse(doc) : doc));
}

/** IAM returns documents URL-encoded; SQS returns them plain. */
export function decodePolicy(text: string): string {
  return text.trimStart().startsWith('{') ? text : decodeURIComponent(text);
}
