import { MANAGED, MANAGED_BY, type DesiredState } from './desired.js';
import type { Action, EndpointAccess, Observed, ObservedCluster, ObservedRole, Plan, Step, Trust } from './model.js';
import {
  CONTROLLER_POLICY_NAME,
  INLINE_POLICY_LIMIT,
  INTERRUPTION_RULES,
  RULE_TARGET_ID,
  canonicalPolicy,
  controllerPolicyJson,
  irsaTrust,
  podIdentityTrust,
  queuePolicy,
  rulePattern,
  serviceTrust,
} from './policies.js';

/**
 * The planner: a pure function from desired and observed state to ordered actions, each
 * with a reason. apply executes exactly these; nothing here talks to AWS.
 */

export const R = {
  subnetTags: 'ec2:discovery-tag/subnets',
  sgTag: 'ec2:discovery-tag/security-group',
  role: (name: string) => `iam:role/${name}`,
  cluster: (name: string) => `eks:cluster/${name}`,
  nodeGroup: (cluster: string, name: string) => `eks:nodegroup/${cluster}/${name}`,
  accessEntry: (role: string) => `eks:access-entry/${role}`,
  queue: (name: string) => `sqs:queue/${name}`,
  rule: (name: string) => `events:rule/${name}`,
  oidc: (cluster: string) => `iam:oidc-provider/${cluster}`,
  addon: 'eks:addon/eks-pod-identity-agent',
  podIdentity: (ns: string, sa: string) => `eks:pod-identity-association/${ns}/${sa}`,
  spotSlr: 'iam:service-linked-role/AWSServiceRoleForEC2Spot',
  instances: 'ec2:karpenter-instances',
  launchTemplates: 'ec2:karpenter-launch-templates',
  instanceProfiles: 'iam:karpenter-instance-profiles',
  controllerPolicy: (role: string) => `iam:role-policy/${role}/${CONTROLLER_POLICY_NAME}`,
  sweep: 'ec2:karpenter-sweep-after-cluster',
} as const;

export const managedArn = (partition: string, name: string) => `arn:${partition}:iam::aws:policy/${name}`;
export const roleArn = (o: Pick<Observed, 'partition' | 'accountId'>, name: string) => `arn:${o.partition}:iam::${o.accountId}:role/${name}`;
export const queueArn = (d: DesiredState, o: Pick<Observed, 'partition' | 'accountId'>) => `arn:${o.partition}:sqs:${d.region}:${o.accountId}:${d.names.queue}`;

export function knownNames(d: DesiredState): Record<string, string> {
  return {
    cluster: d.clusterName,
    nodeGroup: d.systemNodeGroup.name,
    clusterRole: d.names.clusterRole,
    systemNodeRole: d.names.systemNodeRole,
    nodeRole: d.names.nodeRole,
    controllerRole: d.names.controllerRole,
    queue: d.names.queue,
    rules: d.names.rules.join(', '),
  };
}

export function controllerPolicyFor(d: DesiredState, o: Pick<Observed, 'partition' | 'accountId'>): string {
  return controllerPolicyJson({
    partition: o.partition,
    region: d.region,
    accountId: o.accountId,
    clusterName: d.clusterName,
    nodeRoleArn: roleArn(o, d.names.nodeRole),
    queueArn: queueArn(d, o),
  });
}

export function desiredQueueAttributes(d: DesiredState, o: Pick<Observed, 'partition' | 'accountId'>): Record<string, string> {
  return {
    MessageRetentionPeriod: '300',
    SqsManagedSseEnabled: 'true',
    Policy: JSON.stringify(queuePolicy(queueArn(d, o))),
  };
}

interface RoleWanted {
  readonly name: string;
  readonly trust: Trust;
  readonly managed: readonly string[];
  readonly inline?: { readonly name: string; readonly document: string };
}

/**
 * What a role needs: pure diff of wanted against observed (`analyzeUpdate` style).
 * Policies we did not declare are someone else's (teams add AmazonEBSCSIDriverPolicy to
 * node roles): they stay, with a warning, unless `prune`.
 */
export function roleStep(want: RoleWanted, have: ObservedRole | null, partition: string, prune = false): { step: Step | null; reasons: string[]; warnings: string[] } {
  const arns = want.managed.map((m) => managedArn(partition, m));
  const attached = have?.attached ?? [];
  const attach = arns.filter((a) => !attached.includes(a));
  const foreignManaged = attached.filter((a) => !arns.includes(a));
  const inlineHave = have?.inline ?? {};
  const putInline =
    want.inline && (inlineHave[want.inline.name] === undefined || canonicalPolicy(inlineHave[want.inline.name]) !== canonicalPolicy(want.inline.document)) ? want.inline : undefined;
  const foreignInline = Object.keys(inlineHave).filter((n) => n !== want.inline?.name);
  const detach = prune ? foreignManaged : [];
  const deleteInline = prune ? foreignInline : [];
  const warnings = prune
    ? []
    : [
        ...(foreignManaged.length > 0 ? [`role ${want.name}: managed policies ${foreignManaged.map(shortArn).join(', ')} not managed by this tool, left in place; --prune-iam removes them`] : []),
        ...(foreignInline.length > 0 ? [`role ${want.name}: inline policies ${foreignInline.join(', ')} not managed by this tool, left in place; --prune-iam removes them`] : []),
      ];
  const trustDrift = have !== null && 'document' in want.trust && canonicalPolicy(have.trust) !== canonicalPolicy(want.trust.document);
  const reasons: string[] = [];
  if (have === null) reasons.push('role does not exist');
  if (trustDrift) reasons.push('trust policy differs');
  if (have !== null && attach.length > 0) reasons.push(`missing managed policies ${attach.map(shortArn).join(', ')}`);
  if (detach.length > 0) reasons.push(`unexpected managed policies ${detach.map(shortArn).join(', ')}`);
  if (have !== null && putInline) reasons.push(inlineHave[putInline.name] === undefined ? `inline policy ${putInline.name} missing` : `inline policy ${putInline.name} differs`);
  if (deleteInline.length > 0) reasons.push(`unexpected inline policies ${deleteInline.join(', ')}`);
  if (reasons.length === 0) return { step: null, reasons: ['role, trust and policies match'], warnings };
  return {
    warnings,
    step: {
      type: 'role',
      name: want.name,
      create: have === null,
      ...(have === null || trustDrift ? { trust: want.trust } : {}),
      attach,
      detach,
      ...(putInline ? { putInline } : {}),
      deleteInline,
    },
    reasons,
  };
}

const shortArn = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

function act(resource: string, after: readonly string[], step: Step | null, reasons: readonly string[], exists: boolean): Action {
  if (step === null) return { kind: 'noop', resource, reason: reasons.join('; '), after };
  return { kind: exists ? 'update' : 'create', resource, reason: reasons.join('; '), after, step };
}

export interface ApplyOptions {
  /** Detach managed and delete inline policies on our roles that this tool did not declare. */
  readonly pruneIam?: boolean;
  /** Take over same-named resources that lack our ownership tags (tagging them), and switch the authentication mode. */
  readonly adopt?: boolean;
}

/** Made by this tool for this cluster: the `managed-by` tag and the cluster tag. */
export const owned = (d: Pick<DesiredState, 'clusterName'>, tags: Readonly<Record<string, string>>) =>
  tags[MANAGED_BY.key] === MANAGED_BY.value && tags['karpenter-gitops/cluster'] === d.clusterName;

const notOurs = (resource: string) =>
  `${resource} exists but was not created by karpenter-gitops (no ${MANAGED_BY.key}=${MANAGED_BY.value} tag); pass --adopt to tag it and manage it`;

/**
 * Ownership gate for one existing resource: ours passes unchanged; someone else's is a
 * blocker, or with --adopt gets the tags added to its step (a tag-only step if nothing else changes).
 */
function claim(action: Action, tags: Readonly<Record<string, string>> | undefined, tagOnly: Step, d: DesiredState, opts: ApplyOptions, blockers: string[]): Action {
  if (tags === undefined || owned(d, tags)) return action;
  if (!opts.adopt) {
    blockers.push(notOurs(action.resource));
    return action;
  }
  const reason = `${action.kind === 'noop' ? '' : `${action.reason}; `}adopt: add ${MANAGED_BY.key}=${MANAGED_BY.value} and the environment tags`;
  return { ...action, kind: 'update', reason, step: { ...(action.step ?? tagOnly), adopt: true } as Step };
}

/** Plans `apply`: everything SPEC section 3 asks for, created or brought back in line. */
export function planApply(d: DesiredState, o: Observed, opts: ApplyOptions = {}): Plan {
  const blockers: string[] = [];
  const warnings: string[] = [];
  const actions: Action[] = [];
  const tagKey = d.discoveryTag.key;

  // Safety: the subnets must exist, be in the VPC, and cover the AZs used (each AZ has a tagged one by construction).
  const azs = new Set<string>();
  for (const id of d.privateSubnetIds) {
    const s = o.subnets[id];
    if (!s) blockers.push(`cluster.privateSubnetIds: subnet ${id} does not exist in ${d.region}`);
    else if (s.vpcId !== d.vpcId) blockers.push(`cluster.privateSubnetIds: subnet ${id} is in ${s.vpcId}, must be in cluster.vpcId ${d.vpcId}`);
    else azs.add(s.az);
  }
  if (blockers.length === 0 && azs.size < 2) blockers.push(`cluster.privateSubnetIds: must span at least two availability zones, got ${[...azs].join(', ')}`);

  const policy = controllerPolicyFor(d, o);
  if (policy.length >= INLINE_POLICY_LIMIT) blockers.push(`controller inline policy is ${policy.length} characters, must be under IAM's limit of ${INLINE_POLICY_LIMIT}`);

  // Discovery tags: exactly the configured private subnets, exactly the cluster security group.
  const addSubnets = d.privateSubnetIds.filter((id) => o.subnets[id] && !o.subnets[id]!.tagged);
  const subnetReasons = [
    ...(addSubnets.length > 0 ? [`tag ${tagKey}=${d.clusterName} missing on ${addSubnets.join(', ')}`] : []),
    ...(o.strayTaggedSubnets.length > 0 ? [`tag on subnets not in config: ${o.strayTaggedSubnets.join(', ')}`] : []),
  ];
  actions.push(
    act(
      R.subnetTags,
      [],
      subnetReasons.length > 0 ? { type: 'tagSubnets', add: addSubnets, remove: o.strayTaggedSubnets } : null,
      subnetReasons.length > 0 ? subnetReasons : [`tag ${tagKey}=${d.clusterName} on ${d.privateSubnetIds.length} private subnets in ${azs.size} AZs`],
      true,
    ),
  );

  const clusterRole = d.names.clusterRole;
  const systemRole = d.names.systemNodeRole;
  const nodeRole = d.names.nodeRole;
  const controllerRole = d.names.controllerRole;
  const roles: RoleWanted[] = [
    { name: clusterRole, trust: { document: JSON.stringify(serviceTrust('eks.amazonaws.com')) }, managed: MANAGED.cluster },
    { name: systemRole, trust: { document: JSON.stringify(serviceTrust('ec2.amazonaws.com')) }, managed: MANAGED.systemNode },
    { name: nodeRole, trust: { document: JSON.stringify(serviceTrust('ec2.amazonaws.com')) }, managed: MANAGED.karpenterNode },
    {
      name: controllerRole,
      trust:
        d.identity === 'podIdentity'
          ? { document: JSON.stringify(podIdentityTrust()) }
          : o.cluster?.issuer
            ? { document: JSON.stringify(irsaTrust(o.partition, o.accountId, o.cluster.issuer, d.namespace, d.serviceAccount)) }
            : { irsa: { namespace: d.namespace, serviceAccount: d.serviceAccount } },
      managed: [],
      inline: { name: CONTROLLER_POLICY_NAME, document: policy },
    },
  ];
  for (const want of roles) {
    const have = o.roles[want.name] ?? null;
    const { step, reasons, warnings: roleWarnings } = roleStep(want, have, o.partition, opts.pruneIam);
    warnings.push(...roleWarnings);
    // IAM rejects a trust policy naming an OIDC provider that does not exist yet.
    const after = want.name === controllerRole && d.identity === 'irsa' ? [R.cluster(d.clusterName), R.oidc(d.clusterName)] : [];
    const tagOnly: Step = { type: 'role', name: want.name, create: false, attach: [], detach: [], deleteInline: [] };
    actions.push(claim(act(R.role(want.name), after, step, reasons, have !== null), have?.tags, tagOnly, d, opts, blockers));
  }

  // Cluster.
  const cluster = R.cluster(d.clusterName);
  const c = o.cluster;
  if (c === null) {
    actions.push(act(cluster, [R.role(clusterRole)], { type: 'cluster', create: true }, [`cluster does not exist (Kubernetes ${d.kubernetesVersion}, API authentication)`], false));
  } else if (BUSY.includes(c.status)) {
    actions.push({ kind: 'wait', resource: cluster, reason: `cluster is ${c.status}: waiting`, after: [R.role(clusterRole)], step: { type: 'waitCluster' } });
  } else if (c.status !== 'ACTIVE') {
    blockers.push(`cluster ${d.clusterName} is ${c.status}; apply cannot use it: wait for the deletion to finish, or delete it (npm run infra -- destroy --env ${d.env}) and apply again`);
    actions.push(act(cluster, [R.role(clusterRole)], null, [`cluster is ${c.status}`], true));
  } else {
    actions.push(claim(clusterAction(d, c, cluster, [R.role(clusterRole)], blockers, warnings, opts), c.tags, { type: 'cluster', create: false }, d, opts, blockers));
  }
  // The cluster security group is the only one carrying the discovery tag.
  const sgId = c?.securityGroupId;
  const sgStray = o.taggedSecurityGroups.filter((id) => id !== sgId);
  const sgMissing = c === null || (sgId !== undefined && !o.taggedSecurityGroups.includes(sgId));
  if (c !== null && sgId === undefined) warnings.push(`cluster ${d.clusterName} reports no cluster security group; none will be tagged`);
  const sgReasons = [
    ...(sgMissing ? [`tag ${tagKey}=${d.clusterName} missing on the cluster security group${sgId ? ` ${sgId}` : ''}`] : []),
    ...(sgStray.length > 0 ? [`tag on security groups other than the cluster's: ${sgStray.join(', ')}`] : []),
  ];
  actions.push(
    act(
      R.sgTag,
      [cluster],
      sgReasons.length > 0 ? { type: 'tagSecurityGroups', add: sgMissing ? (sgId ?? 'cluster') : null, remove: sgStray } : null,
      sgReasons.length > 0 ? sgReasons : [`only the cluster security group ${sgId ?? ''} is tagged`],
      true,
    ),
  );

  // System node group: fixed size, Karpenter does the scaling.
  const ng = o.nodeGroup;
  const ngId = R.nodeGroup(d.clusterName, d.systemNodeGroup.name);
  const ngAfter = [cluster, R.role(systemRole)];
  const arch = architectures(d.systemNodeGroup.instanceTypes);
  if (arch.size > 1) {
    blockers.push(
      `cluster.systemNodeGroup.instanceTypes: must all be one architecture, got ${d.systemNodeGroup.instanceTypes.map((t) => `${t} (${architectureOf(t)})`).join(', ')}`,
    );
  }
  const amiType = arch.has('arm64') ? 'AL2023_ARM_64_STANDARD' : 'AL2023_x86_64_STANDARD';
  if (ng === null) {
    actions.push(act(ngId, ngAfter, { type: 'nodeGroup', create: true, amiType }, [`node group does not exist (${d.systemNodeGroup.size} x ${d.systemNodeGroup.instanceTypes.join('/')})`], false));
  } else if (BUSY.includes(ng.status)) {
    actions.push({ kind: 'wait', resource: ngId, reason: `node group is ${ng.status}: waiting`, after: ngAfter, step: { type: 'waitNodeGroup' } });
  } else if (['CREATE_FAILED', 'DELETE_FAILED', 'DELETING'].includes(ng.status)) {
    blockers.push(`node group ${d.systemNodeGroup.name} of cluster ${d.clusterName} is ${ng.status}; apply cannot use it: delete it (aws eks delete-nodegroup) or wait for the deletion to finish, then apply again`);
    actions.push(act(ngId, ngAfter, null, [`node group is ${ng.status}`], true));
  } else {
    const size = d.systemNodeGroup.size;
    const reasons: string[] = [];
    const sizeDrift = ng.min !== size || ng.max !== size || ng.desired !== size;
    if (sizeDrift) reasons.push(`size min=${ng.min} desired=${ng.desired} max=${ng.max}, want ${size}`);
    const want = d.systemNodeGroup.labels;
    const set = Object.fromEntries(Object.entries(want).filter(([k, v]) => ng.labels[k] !== v));
    const remove = Object.keys(ng.labels).filter((k) => !(k in want));
    if (Object.keys(set).length + remove.length > 0) reasons.push(`labels differ (${Object.keys(set).concat(remove).join(', ')})`);
    // Nodes follow the control plane, after it: EKS refuses nodes newer than the control plane.
    const versionLag = ng.version !== undefined && compareMinor(ng.version, d.kubernetesVersion) < 0;
    if (versionLag) reasons.push(`nodes run Kubernetes ${ng.version}, want ${d.kubernetesVersion} (after the control plane)`);
    const step: Step | null =
      reasons.length > 0
        ? {
            type: 'nodeGroup',
            create: false,
            ...(sizeDrift ? { size } : {}),
            ...(Object.keys(set).length + remove.length > 0 ? { labels: { set, remove } } : {}),
            ...(versionLag ? { version: d.kubernetesVersion } : {}),
          }
        : null;
    actions.push(claim(act(ngId, ngAfter, step, reasons.length > 0 ? reasons : [`${ng.status}, ${size} nodes`], true), ng.tags, { type: 'nodeGroup', create: false }, d, opts, blockers));
  }

  // Karpenter nodes join through an access entry for their role.
  const entryType = d.nodeAccessEntryType;
  const why = entryType === 'EC2_WINDOWS' ? ' (a node class uses a Windows AMI)' : '';
  actions.push(
    act(
      R.accessEntry(nodeRole),
      [cluster, R.role(nodeRole)],
      o.accessEntry === entryType ? null : { type: 'accessEntry', entryType, replace: o.accessEntry !== null },
      [
        o.accessEntry === entryType
          ? `${entryType} access entry exists`
          : o.accessEntry === null
            ? `${entryType} access entry for the node role does not exist${why}`
            : `access entry is ${o.accessEntry}, want ${entryType}${why}; EKS cannot change the type: deleted and created again (nodes joining in between are refused)`,
      ],
      o.accessEntry !== null,
    ),
  );

  // Interruption queue and its rules.
  const queueId = R.queue(d.names.queue);
  const attrs = desiredQueueAttributes(d, o);
  const q = o.queue;
  const changed = Object.fromEntries(
    Object.entries(attrs).filter(([k, v]) => (k === 'Policy' ? !q?.attributes[k] || canonicalPolicy(q.attributes[k]) !== canonicalPolicy(v) : q?.attributes[k] !== v)),
  );
  const qReasons =
    q === null
      ? ['queue does not exist']
      : Object.keys(changed).map((k) => (k === 'Policy' ? (q.attributes[k] ? 'queue policy differs' : 'queue policy missing') : `${k} is ${q.attributes[k] ?? 'unset'}, want ${attrs[k]}`));
  actions.push(
    claim(
      act(
        queueId,
        [],
        qReasons.length > 0 ? { type: 'queue', create: q === null, attributes: q === null ? attrs : changed } : null,
        qReasons.length > 0 ? qReasons : ['retention 300 s, SSE on, policy matches'],
        q !== null,
      ),
      q?.tags,
      { type: 'queue', create: false, attributes: {} },
      d,
      opts,
      blockers,
    ),
  );
  const qArn = queueArn(d, o);
  INTERRUPTION_RULES.forEach((rule, i) => {
    const name = d.names.rules[i]!;
    const have = o.rules[name] ?? null;
    const pattern = rulePattern(rule);
    const putRule = have === null || canonicalPolicy(have.pattern) !== canonicalPolicy(pattern) || have.state !== 'ENABLED';
    const putTarget = !have?.targets.some((t) => t.id === RULE_TARGET_ID && t.arn === qArn);
    // Interruption events must reach this queue only: another target (another account's queue) is drift.
    const extra = (have?.targets ?? []).filter((t) => t.id !== RULE_TARGET_ID);
    const reasons =
      have === null
        ? [`rule does not exist (${rule.detailType})`]
        : [
            ...(putRule ? ['event pattern or state differs'] : []),
            ...(putTarget ? ['queue target missing'] : []),
            ...(extra.length > 0 ? [`extra target(s) ${extra.map((t) => `${t.id} -> ${t.arn}`).join(', ')} (drift): removed`] : []),
          ];
    const changes = putRule || putTarget || extra.length > 0;
    actions.push(
      claim(
        act(
          R.rule(name),
          [queueId],
          changes ? { type: 'rule', name, pattern, putRule, putTarget, ...(extra.length > 0 ? { removeTargets: extra.map((t) => t.id) } : {}) } : null,
          reasons.length > 0 ? reasons : [`${rule.detailType} -> queue`],
          have !== null,
        ),
        have?.tags,
        { type: 'rule', name, pattern, putRule: false, putTarget: false },
        d,
        opts,
        blockers,
      ),
    );
  });

  // Controller identity.
  if (d.identity === 'irsa') {
    const arn = o.oidcProviderArn;
    const oidc = act(R.oidc(d.clusterName), [cluster], arn ? null : { type: 'oidcProvider' }, [arn ? 'OIDC provider exists' : 'OIDC provider for the cluster issuer does not exist'], arn !== null);
    if (arn === null || owned(d, o.oidcProviderTags)) actions.push(oidc);
    else if (!opts.adopt) {
      blockers.push(notOurs(oidc.resource));
      actions.push(oidc);
    } else actions.push({ ...oidc, kind: 'update', reason: `adopt: add ${MANAGED_BY.key}=${MANAGED_BY.value} and the environment tags`, step: { type: 'oidcProvider', adopt: arn } });
  } else {
    actions.push(act(R.addon, [cluster], o.addon ? null : { type: 'addon' }, [o.addon ? 'add-on installed' : 'eks-pod-identity-agent add-on not installed'], o.addon));
    const ctrlArn = roleArn(o, controllerRole);
    const pia = o.podIdentityAssociation;
    const ok = pia !== null && pia.roleArn === ctrlArn;
    actions.push(
      act(
        R.podIdentity(d.namespace, d.serviceAccount),
        [cluster, R.role(controllerRole)],
        ok ? null : { type: 'podIdentityAssociation', ...(pia ? { existingId: pia.id } : {}) },
        [ok ? `${d.namespace}/${d.serviceAccount} -> ${controllerRole}` : pia ? `association points to ${pia.roleArn}` : `association ${d.namespace}/${d.serviceAccount} does not exist`],
        pia !== null,
      ),
    );
  }

  actions.push(
    act(
      R.spotSlr,
      [],
      o.spotServiceLinkedRole ? null : { type: 'spotServiceLinkedRole' },
      [o.spotServiceLinkedRole ? 'exists' : 'EC2 Spot service-linked role does not exist'],
      o.spotServiceLinkedRole,
    ),
  );

  return { operation: 'apply', env: d.env, clusterName: d.clusterName, region: d.region, accountId: o.accountId, identity: d.identity, names: knownNames(d), actions, blockers, warnings };
}

export interface DestroyOptions {
  /** Terminate Karpenter-launched instances instead of refusing. */
  readonly terminateKarpenterInstances: boolean;
}

const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];

/**
 * Plans `destroy` in article 1's safe order: no Karpenter node may outlive the cluster.
 * The controller loses its permissions first (inline policy, pod identity association):
 * while it runs it replaces every node we terminate. Then its instances, launch templates
 * and instance profiles go, then everything else in reverse dependency order, and once the
 * cluster is gone a second sweep removes anything it launched in between. What is already
 * gone is a noop.
 */
export function planDestroy(d: DesiredState, o: Observed, opts: DestroyOptions): Plan {
  const blockers: string[] = [];
  const actions: Action[] = [];
  const cluster = R.cluster(d.clusterName);
  const k = o.karpenter;
  const live = k.instances.filter((i) => LIVE_STATES.includes(i.state));
  if (live.length > 0 && !opts.terminateKarpenterInstances) {
    blockers.push(
      `${live.length} Karpenter instance(s) of cluster ${d.clusterName} still exist (${live.map((i) => `${i.id} ${i.state}`).join(', ')}); ` +
        'delete the NodePools first so Karpenter drains them, or pass --terminate-karpenter-instances',
    );
  }
  const del = (resource: string, after: readonly string[], step: Step | null, what: string) =>
    actions.push(step === null ? { kind: 'noop', resource, reason: `${what} already gone`, after } : { kind: 'delete', resource, reason: `${what} exists`, after, step });
  // Named resources without our tags are someone else's: never deleted, listed.
  const foreign: string[] = [];
  const ours = (resource: string, tags: Readonly<Record<string, string>> | undefined) => {
    if (tags === undefined || owned(d, tags)) return true;
    foreign.push(resource);
    return false;
  };
  const keep = (resource: string, after: readonly string[]) => actions.push({ kind: 'noop', resource, reason: 'not created by karpenter-gitops, left in place', after });
  const delOwned = (resource: string, tags: Readonly<Record<string, string>> | undefined, after: readonly string[], step: Step | null, what: string) =>
    ours(resource, tags) ? del(resource, after, step, what) : keep(resource, after);
  // Inside someone else's cluster we remove nothing of theirs (add-on, access entry, node group).
  const clusterOurs = o.cluster === null || owned(d, o.cluster.tags);

  const ctrl = d.names.controllerRole;
  const cut = R.controllerPolicy(ctrl);
  const pia = R.podIdentity(d.namespace, d.serviceAccount);
  const ctrlRole = o.roles[ctrl];
  del(cut, [], ctrlRole && owned(d, ctrlRole.tags) && ctrlRole.inline[CONTROLLER_POLICY_NAME] !== undefined ? { type: 'cutController', role: ctrl, policy: CONTROLLER_POLICY_NAME } : null, `controller policy ${CONTROLLER_POLICY_NAME}`);
  del(pia, [], o.podIdentityAssociation ? { type: 'deletePodIdentityAssociation', id: o.podIdentityAssociation.id } : null, 'pod identity association');
  const cutOff = [cut, pia];
  del(R.instances, cutOff, live.length > 0 ? { type: 'terminateInstances', ids: live.map((i) => i.id) } : null, 'Karpenter instances');
  del(R.launchTemplates, [R.instances], k.launchTemplates.length > 0 ? { type: 'deleteLaunchTemplates', ids: k.launchTemplates.map((t) => t.id) } : null, `Karpenter launch templates${k.launchTemplates.length ? ` (${k.launchTemplates.map((t) => t.name).join(', ')})` : ''}`);
  del(R.instanceProfiles, [R.instances], k.instanceProfiles.length > 0 ? { type: 'deleteInstanceProfiles', profiles: k.instanceProfiles } : null, `Karpenter instance profiles${k.instanceProfiles.length ? ` (${k.instanceProfiles.map((p) => p.name).join(', ')})` : ''}`);
  const karpenterGone = [R.instances, R.launchTemplates, R.instanceProfiles];

  // Things inside the cluster go before it; the interruption path goes after the nodes.
  del(R.addon, [pia], o.addon && clusterOurs ? { type: 'deleteAddon' } : null, 'eks-pod-identity-agent add-on');
  del(R.accessEntry(d.names.nodeRole), karpenterGone, o.accessEntry !== null && clusterOurs ? { type: 'deleteAccessEntry' } : null, 'node role access entry');
  d.names.rules.forEach((name) => {
    const r = o.rules[name];
    delOwned(R.rule(name), r?.tags, karpenterGone, r ? { type: 'deleteRule', name, targetIds: r.targets.map((t) => t.id) } : null, `rule ${name}`);
  });
  const ngId = R.nodeGroup(d.clusterName, d.systemNodeGroup.name);
  delOwned(ngId, o.nodeGroup?.tags, karpenterGone, o.nodeGroup ? { type: 'deleteNodeGroup' } : null, 'system node group');
  // EKS deletes the cluster security group with the cluster: untag it while it still exists.
  del(R.sgTag, cutOff, o.taggedSecurityGroups.length > 0 ? { type: 'tagSecurityGroups', add: null, remove: o.taggedSecurityGroups } : null, `discovery tag on security groups${o.taggedSecurityGroups.length ? ` ${o.taggedSecurityGroups.join(', ')}` : ''}`);
  delOwned(cluster, o.cluster?.tags, [ngId, R.addon, pia, R.accessEntry(d.names.nodeRole), R.sgTag], o.cluster ? { type: 'deleteCluster' } : null, 'cluster');
  // Always planned when anything is deleted: what Karpenter launched during the teardown is unknown until the cluster is gone.
  actions.push({ kind: 'delete', resource: R.sweep, reason: 'after the cluster is gone: Karpenter instances, launch templates and instance profiles that appeared meanwhile', after: [cluster, ...karpenterGone], step: { type: 'sweepKarpenter' } });
  delOwned(R.oidc(d.clusterName), o.oidcProviderArn ? o.oidcProviderTags : undefined, [cluster], o.oidcProviderArn ? { type: 'deleteOidcProvider', arn: o.oidcProviderArn } : null, 'OIDC provider');
  delOwned(R.queue(d.names.queue), o.queue?.tags, d.names.rules.map(R.rule), o.queue ? { type: 'deleteQueue', url: o.queue.url } : null, 'interruption queue');
  const roleAfter: Record<string, readonly string[]> = {
    [d.names.clusterRole]: [cluster],
    [d.names.systemNodeRole]: [ngId],
    [d.names.nodeRole]: [...karpenterGone, R.accessEntry(d.names.nodeRole), R.sweep],
    [ctrl]: [cut, pia, cluster],
  };
  for (const [name, after] of Object.entries(roleAfter)) {
    const r = o.roles[name];
    delOwned(R.role(name), r?.tags, after, r ? { type: 'deleteRole', name, attached: r.attached, inline: Object.keys(r.inline) } : null, `role ${name}`);
  }
  const subnetTagged = d.privateSubnetIds.filter((id) => o.subnets[id]?.tagged).concat(o.strayTaggedSubnets);
  del(R.subnetTags, [cluster], subnetTagged.length > 0 ? { type: 'tagSubnets', add: [], remove: subnetTagged } : null, `discovery tag on subnets${subnetTagged.length ? ` ${subnetTagged.join(', ')}` : ''}`);
  // Nothing else to delete (or a cluster that is not ours, whose Karpenter we leave alone): the sweep alone is no reason to run.
  if (!clusterOurs || actions.every((a) => a.kind === 'noop' || a.resource === R.sweep)) {
    const i = actions.findIndex((a) => a.resource === R.sweep);
    const reason = clusterOurs ? 'nothing to sweep: no cluster, no Karpenter resources' : 'the cluster is not ours and stays: its Karpenter resources are left alone';
    actions[i] = { kind: 'noop', resource: R.sweep, reason, after: actions[i]!.after };
  }

  return {
    operation: 'destroy',
    env: d.env,
    clusterName: d.clusterName,
    region: d.region,
    accountId: o.accountId,
    identity: d.identity,
    names: knownNames(d),
    actions,
    blockers,
    warnings: [
      // Account-wide and shared with every Spot user of the account: never ours to delete.
      'the EC2 Spot service-linked role is account-wide and is kept',
      ...(foreign.length > 0 ? [`not created by karpenter-gitops, left in place: ${foreign.join(', ')}`] : []),
    ],
  };
}

/** Graviton families carry a `g` right after the generation digit: t4g, m7g, c7gn, r6gd, x2gd, im4gn. */
export const architectureOf = (instanceType: string): 'arm64' | 'x86_64' => (/^[a-z]+\d+g[a-z]*$/.test(instanceType.split('.')[0] ?? '') ? 'arm64' : 'x86_64');
const architectures = (types: readonly string[]) => new Set(types.map(architectureOf));

/** Statuses that end by themselves: wait for them instead of acting. */
const BUSY = ['CREATING', 'UPDATING'];

/** An ACTIVE cluster against the config: version (one minor at a time, never down), authentication mode, endpoint access. */
function clusterAction(d: DesiredState, c: ObservedCluster, resource: string, after: readonly string[], blockers: string[], warnings: string[], opts: ApplyOptions): Action {
  const reasons: string[] = [];
  const gap = compareMinor(d.kubernetesVersion, c.version);
  if (gap < 0) blockers.push(`cluster.kubernetesVersion: cluster runs ${c.version}, config says ${d.kubernetesVersion}; EKS cannot downgrade`);
  else if (gap > 1) {
    const next = `1.${Number(c.version.split('.')[1]) + 1}`;
    blockers.push(`cluster.kubernetesVersion: cluster runs ${c.version}, config says ${d.kubernetesVersion}; EKS upgrades one minor version at a time: set ${next}, apply, then go on`);
  } else if (gap === 1) reasons.push(`version ${c.version}, want ${d.kubernetesVersion}`);
  // Switching modes changes who can reach the cluster (aws-auth stops counting): only when asked.
  const authDrift = c.authenticationMode !== undefined && c.authenticationMode !== 'API' && opts.adopt === true;
  if (c.authenticationMode === 'CONFIG_MAP' && !opts.adopt) {
    blockers.push(`cluster ${d.clusterName} uses authentication mode CONFIG_MAP; Karpenter's access entry needs API, and apply switches it only with --adopt`);
  }
  if (c.authenticationMode === 'API_AND_CONFIG_MAP' && !opts.adopt) warnings.push(`cluster ${d.clusterName} uses authentication mode API_AND_CONFIG_MAP, left as is; --adopt switches it to API`);
  // EKS moves one step at a time: CONFIG_MAP -> API_AND_CONFIG_MAP -> API.
  const nextMode = c.authenticationMode === 'CONFIG_MAP' ? ('API_AND_CONFIG_MAP' as const) : ('API' as const);
  if (authDrift) reasons.push(`authentication mode ${c.authenticationMode}, want API (now ${nextMode})`);
  const want: EndpointAccess = { public: d.publicAccessCidrs.length > 0, private: true, publicAccessCidrs: d.publicAccessCidrs };
  const endpointReasons = [
    ...(c.endpointPublicAccess !== undefined && c.endpointPublicAccess !== want.public ? [`public endpoint ${onOff(c.endpointPublicAccess)}, want ${onOff(want.public)}`] : []),
    ...(c.endpointPrivateAccess !== undefined && c.endpointPrivateAccess !== want.private ? [`private endpoint ${onOff(c.endpointPrivateAccess)}, want on`] : []),
    ...(want.public && c.publicAccessCidrs !== undefined && !sameSet(c.publicAccessCidrs, want.publicAccessCidrs)
      ? [`public access CIDRs ${c.publicAccessCidrs.join(', ') || 'none'}, want ${want.publicAccessCidrs.join(', ')}`]
      : []),
  ];
  reasons.push(...endpointReasons);
  if (reasons.length === 0) return act(resource, after, null, [`${c.status}, Kubernetes ${c.version}`], true);
  return act(
    resource,
    after,
    {
      type: 'cluster',
      create: false,
      ...(gap === 1 ? { version: d.kubernetesVersion } : {}),
      ...(authDrift ? { authenticationMode: nextMode } : {}),
      ...(endpointReasons.length > 0 ? { endpoint: want } : {}),
    },
    reasons,
    true,
  );
}

const onOff = (b: boolean) => (b ? 'on' : 'off');

function compareMinor(a: string, b: string): number {
  const minor = (v: string) => Number(v.split('.')[1]);
  return minor(a) - minor(b);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

const SYMBOL: Record<Action['kind'], string> = { create: '+', update: '~', delete: '-', wait: '>', noop: '=' };

/** The plan as a person reads it: one line per resource, the reason beside it. */
export function renderPlan(plan: Plan): string {
  const lines = [`${plan.operation === 'apply' ? 'Plan' : 'Destroy plan'} for environment ${plan.env}: cluster ${plan.clusterName} in ${plan.region}, account ${plan.accountId}, identity ${plan.identity}`];
  lines.push('Names:');
  for (const [k, v] of Object.entries(plan.names)) lines.push(`  ${k.padEnd(15)} ${v}`);
  lines.push('Actions:');
  const width = Math.max(...plan.actions.map((a) => a.resource.length));
  for (const a of plan.actions) lines.push(`  ${SYMBOL[a.kind]} ${a.kind.padEnd(6)} ${a.resource.padEnd(width)}  ${a.reason}`);
  for (const w of plan.warnings) lines.push(`warning: ${w}`);
  lines.push(summary(plan));
  return lines.join('\n');
}

export function summary(plan: Plan): string {
  const n = (k: Action['kind']) => plan.actions.filter((a) => a.kind === k).length;
  const waits = n('wait') > 0 ? `${n('wait')} to wait for, ` : '';
  return `${n('create')} to create, ${n('update')} to update, ${n('delete')} to delete, ${waits}${n('noop')} unchanged.`;
}

/** `--json`: the plan without the SDK-facing step payloads' documents (they are long), but with every decision. */
export function planJson(plan: Plan): string {
  return `${JSON.stringify({ ...plan, actions: plan.actions.map(({ step: _step, ...a }) => ({ ...a, ...(_step ? { step: _step.type } : {}) })) }, null, 2)}\n`;
}
