import { Construct } from 'constructs';
import type { NodeClassConfig } from '../config/karpenter-schema.js';
import {
  Ec2NodeClass,
  type Ec2NodeClassSpec,
  type Ec2NodeClassSpecAmiFamily,
  type Ec2NodeClassSpecBlockDeviceMappingsEbsVolumeType,
  type Ec2NodeClassSpecCapacityReservationSelectorTermsInstanceMatchCriteria,
  type Ec2NodeClassSpecCpuOptionsNestedVirtualization,
  type Ec2NodeClassSpecInstanceStorePolicy,
  type Ec2NodeClassSpecMetadataOptionsHttpEndpoint,
  type Ec2NodeClassSpecMetadataOptionsHttpProtocolIPv6,
  type Ec2NodeClassSpecMetadataOptionsHttpTokens,
  type Ec2NodeClassSpecNetworkInterfacesInterfaceType,
} from '../imports/ec2nodeclass-karpenter.k8s.aws.js';
import { asEnum } from './enum-values.js';
import { DEFAULT_AMI_ALIAS } from '../config/defaults.js';
import { SYNC_WAVE, syncWave } from './metadata.js';

export interface KarpenterNodeClassProps {
  /** The node class as written in the environment file. */
  readonly config: NodeClassConfig;
  /** Cluster name: value of the `karpenter.sh/discovery` tag the default selectors match. */
  readonly clusterName: string;
  /** IAM role for nodes, from the infra outputs. Used unless the config sets role or instanceProfile. */
  readonly nodeRoleName: string;
}

/** Tag that infra puts on the private subnets and the cluster security group. */
export const DISCOVERY_TAG = 'karpenter.sh/discovery';


/** Karpenter's API defaults for IMDS, emitted explicitly so Argo CD sees no drift. */
const DEFAULT_METADATA_OPTIONS = { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' } as const;

/** One `EC2NodeClass`: the AWS side of a group of nodes (AMI, subnets, security groups, role). */
export class KarpenterNodeClass extends Construct {
  public readonly apiObject: Ec2NodeClass;

  constructor(scope: Construct, id: string, props: KarpenterNodeClassProps) {
    super(scope, id);
    const c = props.config;
    const discovery = [{ tags: { [DISCOVERY_TAG]: props.clusterName } }];
    const metadata = { ...DEFAULT_METADATA_OPTIONS, ...c.metadataOptions };
    const spec: Ec2NodeClassSpec = {
      role: c.instanceProfile === undefined ? (c.role ?? props.nodeRoleName) : undefined,
      instanceProfile: c.instanceProfile,
      amiFamily: asEnum<Ec2NodeClassSpecAmiFamily>(c.amiFamily),
      amiSelectorTerms: c.amiSelectorTerms ?? [{ alias: DEFAULT_AMI_ALIAS }],
      subnetSelectorTerms: c.subnetSelectorTerms ?? discovery,
      securityGroupSelectorTerms: c.securityGroupSelectorTerms ?? discovery,
      capacityReservationSelectorTerms: c.capacityReservationSelectorTerms?.map((t) => ({
        id: t.id,
        ownerId: t.ownerID,
        instanceMatchCriteria: asEnum<Ec2NodeClassSpecCapacityReservationSelectorTermsInstanceMatchCriteria>(t.instanceMatchCriteria),
        tags: t.tags,
      })),
      placementGroupSelector: c.placementGroupSelector,
      associatePublicIpAddress: c.associatePublicIPAddress,
      detailedMonitoring: c.detailedMonitoring,
      instanceStorePolicy: asEnum<Ec2NodeClassSpecInstanceStorePolicy>(c.instanceStorePolicy),
      ipPrefixCount: c.ipPrefixCount,
      context: c.context,
      cpuOptions: c.cpuOptions && { nestedVirtualization: asEnum<Ec2NodeClassSpecCpuOptionsNestedVirtualization>(c.cpuOptions.nestedVirtualization) },
      connectionTracking: c.connectionTracking,
      kubelet: c.kubelet && {
        clusterDns: c.kubelet.clusterDNS,
        maxPods: c.kubelet.maxPods,
        podsPerCore: c.kubelet.podsPerCore,
        systemReserved: c.kubelet.systemReserved,
        kubeReserved: c.kubelet.kubeReserved,
        evictionHard: c.kubelet.evictionHard,
        evictionSoft: c.kubelet.evictionSoft,
        evictionSoftGracePeriod: c.kubelet.evictionSoftGracePeriod,
        evictionMaxPodGracePeriod: c.kubelet.evictionMaxPodGracePeriod,
        imageGcHighThresholdPercent: c.kubelet.imageGCHighThresholdPercent,
        imageGcLowThresholdPercent: c.kubelet.imageGCLowThresholdPercent,
        cpuCfsQuota: c.kubelet.cpuCFSQuota,
      },
      blockDeviceMappings: c.blockDeviceMappings?.map((b) => ({
        deviceName: b.deviceName,
        rootVolume: b.rootVolume,
        ebs: b.ebs && {
          deleteOnTermination: b.ebs.deleteOnTermination,
          encrypted: b.ebs.encrypted,
          iops: b.ebs.iops,
          kmsKeyId: b.ebs.kmsKeyID,
          snapshotId: b.ebs.snapshotID,
          throughput: b.ebs.throughput,
          volumeInitializationRate: b.ebs.volumeInitializationRate,
          volumeSize: b.ebs.volumeSize,
          volumeType: asEnum<Ec2NodeClassSpecBlockDeviceMappingsEbsVolumeType>(b.ebs.volumeType),
        },
      })),
      metadataOptions: {
        httpEndpoint: asEnum<Ec2NodeClassSpecMetadataOptionsHttpEndpoint>(metadata.httpEndpoint),
        httpProtocolIPv6: asEnum<Ec2NodeClassSpecMetadataOptionsHttpProtocolIPv6>(metadata.httpProtocolIPv6),
        httpPutResponseHopLimit: metadata.httpPutResponseHopLimit,
        httpTokens: asEnum<Ec2NodeClassSpecMetadataOptionsHttpTokens>(metadata.httpTokens),
      },
      networkInterfaces: c.networkInterfaces?.map((n) => ({ ...n, interfaceType: asEnum<Ec2NodeClassSpecNetworkInterfacesInterfaceType>(n.interfaceType) })),
      tags: c.tags,
      userData: c.userData,
    };
    this.apiObject = new Ec2NodeClass(this, 'Resource', {
      metadata: { name: c.name, labels: c.metadata?.labels, annotations: { ...c.metadata?.annotations, ...syncWave(SYNC_WAVE.nodeClass) } },
      spec,
    });
  }
}
