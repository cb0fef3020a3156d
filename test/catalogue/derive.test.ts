import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { deriveInstanceType, kubeReservedCpuMilli } from '../../catalogue/derive.js';
import { REPO } from '../support/repo.js';

const vendored = JSON.parse(readFileSync(join(REPO, 'catalogue', 'us-east-1.json'), 'utf8')).instanceTypes as Record<string, { labels: Record<string, string>; resources: Record<string, string> }>;

/**
 * An InstanceTypeInfo rebuilt from a vendored entry's labels, with one ENI of (pods - 1)
 * addresses so that the ENI formula gives the vendored pod count: what the derivation's
 * overhead formulas (kube-reserved CPU and memory, VM overhead, eviction, ephemeral
 * storage) must then turn into the vendored allocatable resources, type by type.
 */
function infoFromLabels(name: string, labels: Record<string, string>, pods: number): InstanceTypeInfo {
  return {
    InstanceType: name as never,
    VCpuInfo: { DefaultVCpus: Number(labels['karpenter.k8s.aws/instance-cpu']) },
    MemoryInfo: { SizeInMiB: Number(labels['karpenter.k8s.aws/instance-memory']) },
    ProcessorInfo: { SupportedArchitectures: [labels['kubernetes.io/arch'] === 'arm64' ? 'arm64' : 'x86_64'] },
    NetworkInfo: { DefaultNetworkCardIndex: 0, NetworkCards: [{ MaximumNetworkInterfaces: 1 }], Ipv4AddressesPerInterface: pods - 1 },
  };
}

describe('catalogue/derive: Karpenter v1.13.1 overhead formulas', () => {
  it('GIVEN every one of the 1,204 vendored types WHEN its allocatable CPU, memory and ephemeral storage are derived from its labels and pod count THEN they equal the vendored values', () => {
    const names = Object.keys(vendored);
    expect(names).toHaveLength(1204);
    const wrong = names.flatMap((name) => {
      const v = vendored[name]!;
      const got = deriveInstanceType(infoFromLabels(name, v.labels, Number(v.resources.pods))).resources;
      return (['cpu', 'memory', 'ephemeral-storage', 'pods'] as const).filter((k) => got[k] !== v.resources[k]).map((k) => `${name} ${k}: vendored ${v.resources[k]}, derived ${got[k]}`);
    });
    expect(wrong).toEqual([]);
  });

  it('GIVEN m5.large and a1.2xlarge WHEN derived THEN the numbers are the ones worked by hand from types.go', () => {
    // m5.large: 2 vCPU, 8192 MiB, 3 ENIs x 10 IPv4 -> 29 pods.
    // cpu 2000m - (60 + 10) = 1930m; memory 8192 - ceil(8192 x 0.075 = 614.4) = 7577, - (11 x 29 + 255 = 574) - 100 = 6903Mi.
    const m5 = deriveInstanceType({
      InstanceType: 'm5.large',
      VCpuInfo: { DefaultVCpus: 2 },
      MemoryInfo: { SizeInMiB: 8192 },
      ProcessorInfo: { SupportedArchitectures: ['x86_64'], Manufacturer: 'Intel', SustainedClockSpeedInGhz: 3.1 },
      NetworkInfo: { DefaultNetworkCardIndex: 0, NetworkCards: [{ MaximumNetworkInterfaces: 3 }], Ipv4AddressesPerInterface: 10, EncryptionInTransitSupported: false },
      Hypervisor: 'nitro',
      EbsInfo: { EbsOptimizedSupport: 'default', EbsOptimizedInfo: { MaximumBandwidthInMbps: 4750 } },
    });
    expect(m5).toEqual({ labels: vendored['m5.large']!.labels, resources: vendored['m5.large']!.resources });
    expect(m5.resources).toMatchObject({ cpu: '1930m', memory: '6903Mi', pods: '29', 'ephemeral-storage': '17Gi', 'vpc.amazonaws.com/pod-eni': '9' });
    // arm64 loses 64 MiB before the overhead: 16384 - 64 = 16320 - ceil(1224) = 15096 - (11 x 58 + 255) - 100 = 14103Mi.
    const a1 = deriveInstanceType(infoFromLabels('a1.2xlarge', vendored['a1.2xlarge']!.labels, 58));
    expect(a1.resources.memory).toBe('14103Mi');
  });

  it('GIVEN CPU counts across the ranges WHEN kube-reserved CPU is computed THEN it follows the 6/1/0.5/0.25 % steps, each truncated', () => {
    expect([1000, 2000, 4000, 96000, 500].map(kubeReservedCpuMilli)).toEqual([60, 70, 80, 310, 30]);
  });

  it('GIVEN a type with an unsupported architecture or no vCPU data WHEN derived THEN the error names the type and the field', () => {
    expect(() => deriveInstanceType({ InstanceType: 'mac1.metal', VCpuInfo: { DefaultVCpus: 12 }, MemoryInfo: { SizeInMiB: 1 }, ProcessorInfo: { SupportedArchitectures: ['x86_64_mac'] } })).toThrow(
      'mac1.metal: ProcessorInfo.SupportedArchitectures must include x86_64 or arm64, got ["x86_64_mac"]',
    );
    expect(() => deriveInstanceType({ InstanceType: 'x1.big' as never })).toThrow('x1.big: VCpuInfo.DefaultVCpus must be present in DescribeInstanceTypes data, got nothing');
  });
});
