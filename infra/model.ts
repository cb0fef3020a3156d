/**
 * Shapes shared by observe (writes Observed), plan (reads Observed, writes Plan) and apply
 * (executes Plan). Plain data, no SDK types, so the planner is tested on fixtures.
 */

export interface ObservedRole {
  readonly arn: string;
  /** Trust policy, decoded from IAM's URL encoding. */
  readonly trust: string;
  readonly attached: readonly string[];
  /** Inline policy name -> decoded document. */
  readonly inline: Readonly<Record<string, string>>;
  /** Resource tags; ownership is decided from them (plan.ts `owned`). */
  readonly tags: Readonly<Record<string, string>>;
}

export interface ObservedSubnet {
  readonly id: string;
  readonly vpcId: string;
  readonly az: string;
  readonly tagged: boolean;
}

export interface ObservedCluster {
  readonly status: string;
  readonly version: string;
  readonly issuer?: string;
  readonly securityGroupId?: string;
  /** Absent when the API does not say (moto): then no drift is claimed. */
  readonly authenticationMode?: string;
  readonly publicAccessCidrs?: readonly string[];
  readonly endpointPublicAccess?: boolean;
  readonly endpointPrivateAccess?: boolean;
  /** Resource tags; ownership is decided from them (plan.ts `owned`). */
  readonly tags: Readonly<Record<string, string>>;
}

export interface ObservedNodeGroup {
  readonly status: string;
  /** Kubernetes minor version of the nodes; absent when the API does not say. */
  readonly version?: string;
  readonly min: number;
  readonly max: number;
  readonly desired: number;
  readonly labels: Readonly<Record<string, string>>;
  /** Resource tags; ownership is decided from them (plan.ts `owned`). */
  readonly tags: Readonly<Record<string, string>>;
}

export interface ObservedQueue {
  readonly url: string;
  readonly arn: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Resource tags; ownership is decided from them (plan.ts `owned`). */
  readonly tags: Readonly<Record<string, string>>;
}

export interface ObservedRule {
  readonly pattern: string;
  readonly state: string;
  readonly targets: readonly { readonly id: string; readonly arn: string }[];
  /** Resource tags; ownership is decided from them (plan.ts `owned`). */
  readonly tags: Readonly<Record<string, string>>;
}

/** What Karpenter launched for this cluster and must be gone before the cluster goes. */
export interface KarpenterLeftovers {
  readonly instances: readonly { readonly id: string; readonly state: string }[];
  readonly launchTemplates: readonly { readonly id: string; readonly name: string }[];
  readonly instanceProfiles: readonly { readonly name: string; readonly roles: readonly string[] }[];
}

/** The account as it is. `null` means "does not exist": absence is a value, not an error. */
export interface Observed {
  readonly accountId: string;
  readonly partition: string;
  /** Subnets named in the config; `null` for an id AWS does not know. */
  readonly subnets: Readonly<Record<string, ObservedSubnet | null>>;
  /** Subnets carrying the discovery tag that the config does not name. */
  readonly strayTaggedSubnets: readonly string[];
  /** Every security group of the VPC carrying the discovery tag. */
  readonly taggedSecurityGroups: readonly string[];
  readonly roles: Readonly<Record<string, ObservedRole | null>>;
  readonly cluster: ObservedCluster | null;
  readonly nodeGroup: ObservedNodeGroup | null;
  /** Type of the node role's access entry (EC2_LINUX, EC2_WINDOWS, ...); null when there is none. */
  readonly accessEntry: string | null;
  readonly queue: ObservedQueue | null;
  readonly rules: Readonly<Record<string, ObservedRule | null>>;
  readonly oidcProviderArn: string | null;
  readonly oidcProviderTags: Readonly<Record<string, string>>;
  readonly addon: boolean;
  readonly podIdentityAssociation: { readonly id: string; readonly roleArn: string } | null;
  readonly spotServiceLinkedRole: boolean;
  readonly karpenter: KarpenterLeftovers;
}

/** `wait`: the resource exists but is busy (CREATING, UPDATING); dependents start once it is ACTIVE. */
export type ActionKind = 'create' | 'update' | 'delete' | 'wait' | 'noop';

/** How the API endpoint is reachable; sent whole because EKS validates the three together. */
export interface EndpointAccess {
  readonly public: boolean;
  readonly private: boolean;
  readonly publicAccessCidrs: readonly string[];
}

/** How to resolve a controller trust policy that needs the cluster's OIDC issuer, unknown before the cluster exists. */
export type Trust = { readonly document: string } | { readonly irsa: { readonly namespace: string; readonly serviceAccount: string } };

export type Step =
  | { readonly type: 'tagSubnets'; readonly add: readonly string[]; readonly remove: readonly string[] }
  /** `add: 'cluster'`: the cluster's own security group, known once the cluster exists. */
  | { readonly type: 'tagSecurityGroups'; readonly add: string | 'cluster' | null; readonly remove: readonly string[] }
  | {
      readonly type: 'role';
      /** Put the ownership tags on a resource that exists without them (`--adopt`). */
      readonly adopt?: boolean;
      readonly name: string;
      readonly create: boolean;
      readonly trust?: Trust;
      readonly attach: readonly string[];
      readonly detach: readonly string[];
      readonly putInline?: { readonly name: string; readonly document: string };
      readonly deleteInline: readonly string[];
    }
  | {
      readonly type: 'cluster';
      readonly create: boolean;
      /** Put the ownership tags on a resource that exists without them (`--adopt`). */
      readonly adopt?: boolean;

      readonly version?: string;
      readonly authenticationMode?: 'API' | 'API_AND_CONFIG_MAP';
      readonly endpoint?: EndpointAccess;
    }
  | { readonly type: 'waitCluster' }
  | {
      readonly type: 'nodeGroup';
      readonly create: boolean;
      /** Put the ownership tags on a resource that exists without them (`--adopt`). */
      readonly adopt?: boolean;

      readonly size?: number;
      readonly labels?: { readonly set: Readonly<Record<string, string>>; readonly remove: readonly string[] };
      /** On create: from the instance types' architecture. */
      readonly amiType?: 'AL2023_x86_64_STANDARD' | 'AL2023_ARM_64_STANDARD';
      /** Upgrade the nodes to the control plane's Kubernetes version. */
      readonly version?: string;
    }
  | { readonly type: 'waitNodeGroup' }
  /** `replace`: EKS cannot change an entry's type; delete the old one first. */
  | { readonly type: 'accessEntry'; readonly entryType: 'EC2_LINUX' | 'EC2_WINDOWS'; readonly replace: boolean }
  | { readonly type: 'queue'; readonly create: boolean; readonly attributes: Readonly<Record<string, string>>; readonly adopt?: boolean }
  | {
      readonly type: 'rule';
      readonly name: string;
      readonly pattern: string;
      readonly putRule: boolean;
      readonly putTarget: boolean;
      /** Targets other than the interruption queue (another account's queue, a Lambda): drift, removed. */
      readonly removeTargets?: readonly string[];
      readonly adopt?: boolean;
    }
  | { readonly type: 'oidcProvider'; readonly adopt?: string }
  | { readonly type: 'addon' }
  | { readonly type: 'podIdentityAssociation'; readonly existingId?: string }
  | { readonly type: 'spotServiceLinkedRole' }
  /** Removes the controller's permissions so it cannot launch replacements while its nodes go. */
  | { readonly type: 'cutController'; readonly role: string; readonly policy: string }
  /** After the cluster is gone: observe Karpenter's resources again and remove whatever appeared meanwhile. */
  | { readonly type: 'sweepKarpenter' }
  | { readonly type: 'terminateInstances'; readonly ids: readonly string[] }
  | { readonly type: 'deleteLaunchTemplates'; readonly ids: readonly string[] }
  | { readonly type: 'deleteInstanceProfiles'; readonly profiles: KarpenterLeftovers['instanceProfiles'] }
  | { readonly type: 'deletePodIdentityAssociation'; readonly id: string }
  | { readonly type: 'deleteAddon' }
  | { readonly type: 'deleteAccessEntry' }
  | { readonly type: 'deleteRule'; readonly name: string; readonly targetIds: readonly string[] }
  | { readonly type: 'deleteNodeGroup' }
  | { readonly type: 'deleteCluster' }
  | { readonly type: 'deleteOidcProvider'; readonly arn: string }
  | { readonly type: 'deleteQueue'; readonly url: string }
  | { readonly type: 'deleteRole'; readonly name: string; readonly attached: readonly string[]; readonly inline: readonly string[] };

export interface Action {
  readonly kind: ActionKind;
  /** Stable id such as `iam:role/KarpenterNodeRole-dev`; also what `after` refers to. */
  readonly resource: string;
  readonly reason: string;
  /** Resources whose actions must finish first; the rest run in parallel. */
  readonly after: readonly string[];
  /** What apply does; absent for noop. */
  readonly step?: Step;
}

export interface Plan {
  readonly operation: 'apply' | 'destroy';
  readonly env: string;
  readonly clusterName: string;
  readonly region: string;
  readonly accountId: string;
  readonly identity: 'podIdentity' | 'irsa';
  /** Names the plan knows before anything is made. */
  readonly names: Readonly<Record<string, string>>;
  readonly actions: readonly Action[];
  /** Reasons not to proceed at all (safety checks); apply and destroy refuse while any is present. */
  readonly blockers: readonly string[];
  readonly warnings: readonly string[];
}

export class InfraError extends Error {
  constructor(
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InfraError';
  }
}
