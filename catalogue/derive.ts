import { readFileSync } from 'node:fs';
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';

/**
 * Karpenter v1.13's labels and allocatable resources of an EC2 instance type, derived from
 * DescribeInstanceTypes data the way github.com/aws/karpenter-provider-aws@v1.13.1
 * pkg/providers/instancetype/types.go does (`computeRequirements`, `computeCapacity`,
 * `kubeReservedResources`, `evictionThreshold`, `ENILimitedPods`), for the defaults its
 * generated reference page uses: AL2023 (ENI-limited pod density and memory overhead), no
 * kubelet overrides, the default 20Gi root volume, `--vm-memory-overhead-percent` 0.075,
 * `--reserved-enis` 0. Allocatable = capacity - kube-reserved - eviction threshold.
 */

/** Karpenter's generated tables (network bandwidth, pod ENIs), copied as data: see the file's origin. */
interface Tables {
  readonly networkBandwidthMegabits: Readonly<Record<string, number>>;
  readonly podENI: Readonly<Record<string, number>>;
}
let tables: Tables | undefined;
function karpenterTables(): Tables {
  tables ??= JSON.parse(readFileSync(new URL('./karpenter-tables.json', import.meta.url), 'utf8')) as Tables;
  return tables;
}

export const VM_MEMORY_OVERHEAD_PERCENT = 0.075;
/** amifamily.DefaultEBS.VolumeSize, the AL2023 root (and ephemeral) volume. */
const ROOT_VOLUME_BYTES = 20 * 1024 ** 3;
const MI = 1024 ** 2;

const lowerKebab = (s: string | undefined) => (s ?? '').replaceAll(' ', '-').toLowerCase();
const ARCH: Readonly<Record<string, string>> = { x86_64: 'amd64', arm64: 'arm64' };

export interface Derived {
  readonly labels: Record<string, string>;
  readonly resources: Record<string, string>;
}

export class DeriveError extends Error {}

const need = <T>(value: T | undefined, type: string, field: string): T => {
  if (value === undefined || value === null) throw new DeriveError(`${type}: ${field} must be present in DescribeInstanceTypes data, got nothing`);
  return value;
};

export function deriveInstanceType(info: InstanceTypeInfo): Derived {
  const name = need(info.InstanceType, '(unnamed)', 'InstanceType') as string;
  const vcpus = need(info.VCpuInfo?.DefaultVCpus, name, 'VCpuInfo.DefaultVCpus');
  const memMiB = need(info.MemoryInfo?.SizeInMiB, name, 'MemoryInfo.SizeInMiB');
  const archs = (info.ProcessorInfo?.SupportedArchitectures ?? []) as string[];
  const arch = archs.map((a) => ARCH[a]).find((a) => a !== undefined);
  if (arch === undefined) throw new DeriveError(`${name}: ProcessorInfo.SupportedArchitectures must include x86_64 or arm64, got ${JSON.stringify(archs)}`);

  const labels: Record<string, string> = {
    'karpenter.k8s.aws/instance-cpu': String(vcpus),
    'karpenter.k8s.aws/instance-memory': String(memMiB),
    'karpenter.k8s.aws/instance-hypervisor': String(info.Hypervisor ?? ''),
    'karpenter.k8s.aws/instance-encryption-in-transit-supported': String(info.NetworkInfo?.EncryptionInTransitSupported ?? false),
    'kubernetes.io/arch': arch,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': name,
  };
  const scheme = /(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\./.exec(name);
  if (scheme) {
    labels['karpenter.k8s.aws/instance-category'] = scheme[1]!;
    labels['karpenter.k8s.aws/instance-generation'] = scheme[3]!;
  }
  const parts = name.split('.');
  if (parts.length === 2) {
    labels['karpenter.k8s.aws/instance-family'] = parts[0]!;
    labels['karpenter.k8s.aws/instance-size'] = parts[1]!;
  }
  const storage = info.InstanceStorageInfo;
  if (storage && storage.NvmeSupport !== 'unsupported' && storage.TotalSizeInGB !== undefined) labels['karpenter.k8s.aws/instance-local-nvme'] = String(storage.TotalSizeInGB);
  labels['karpenter.k8s.aws/instance-capability-flex'] = String(parts[0]!.includes('-flex'));
  const bandwidth = karpenterTables().networkBandwidthMegabits[name];
  if (bandwidth !== undefined) labels['karpenter.k8s.aws/instance-network-bandwidth'] = String(bandwidth);
  const gpus = info.GpuInfo?.Gpus ?? [];
  if (gpus.length === 1) {
    const gpu = gpus[0]!;
    labels['karpenter.k8s.aws/instance-gpu-name'] = lowerKebab(gpu.Name);
    labels['karpenter.k8s.aws/instance-gpu-manufacturer'] = lowerKebab(gpu.Manufacturer);
    labels['karpenter.k8s.aws/instance-gpu-count'] = String(gpu.Count ?? 0);
    labels['karpenter.k8s.aws/instance-gpu-memory'] = String(gpu.MemoryInfo?.SizeInMiB ?? 0);
  }
  const inference = info.InferenceAcceleratorInfo?.Accelerators ?? [];
  if (inference.length === 1 && info.NeuronInfo === undefined) {
    labels['karpenter.k8s.aws/instance-accelerator-name'] = lowerKebab(inference[0]!.Name);
    labels['karpenter.k8s.aws/instance-accelerator-manufacturer'] = lowerKebab(inference[0]!.Manufacturer);
    labels['karpenter.k8s.aws/instance-accelerator-count'] = String(inference[0]!.Count ?? 0);
  }
  const neuron = info.NeuronInfo?.NeuronDevices ?? [];
  if (neuron.length === 1) {
    labels['karpenter.k8s.aws/instance-accelerator-name'] = lowerKebab(neuron[0]!.Name);
    labels['karpenter.k8s.aws/instance-accelerator-manufacturer'] = 'aws';
    labels['karpenter.k8s.aws/instance-accelerator-count'] = String(neuron[0]!.Count ?? 0);
  }
  if (info.ProcessorInfo) {
    labels['karpenter.k8s.aws/instance-cpu-manufacturer'] = lowerKebab(info.ProcessorInfo.Manufacturer);
    // Go: int(math.Round(ghz * 1000)); Math.round differs only at exact negative halves.
    labels['karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz'] = String(Math.round((info.ProcessorInfo.SustainedClockSpeedInGhz ?? 0) * 1000));
  }
  const ebs = info.EbsInfo;
  if (ebs?.EbsOptimizedInfo && ebs.EbsOptimizedSupport === 'default') labels['karpenter.k8s.aws/instance-ebs-bandwidth'] = String(ebs.EbsOptimizedInfo.MaximumBandwidthInMbps ?? 0);

  // Capacity (computeCapacity) and overhead (kube-reserved + eviction threshold).
  const capacityMemMiB = memoryMiB(memMiB, archs[0]);
  const pods = eniLimitedPods(info, name);
  const cpuMilli = vcpus * 1000;
  const reservedCpu = kubeReservedCpuMilli(cpuMilli);
  const reservedMemMiB = 11 * pods + 255;
  const evictionMemMiB = 100;
  const reservedStorage = 1024 ** 3;
  const evictionStorage = Math.ceil((ROOT_VOLUME_BYTES / 100) * 10);

  const resources: Record<string, string> = {
    cpu: milli(cpuMilli - reservedCpu),
    memory: `${capacityMemMiB - reservedMemMiB - evictionMemMiB}Mi`,
    'ephemeral-storage': binaryBytes(ROOT_VOLUME_BYTES - reservedStorage - evictionStorage),
    pods: String(pods),
  };
  const extended: Array<[string, number]> = [
    ['vpc.amazonaws.com/pod-eni', karpenterTables().podENI[name] ?? 0],
    ['nvidia.com/gpu', gpuCount(info, 'NVIDIA')],
    ['amd.com/gpu', gpuCount(info, 'AMD')],
    ['habana.ai/gaudi', gpuCount(info, 'Habana')],
    ['aws.amazon.com/neuron', neuron.reduce((n, d) => n + (d.Count ?? 0), 0)],
    ['aws.amazon.com/neuroncore', neuron.length > 0 ? (neuron[0]!.Count ?? 0) * (neuron[0]!.CoreInfo?.Count ?? 0) : 0],
    ['vpc.amazonaws.com/efa', info.NetworkInfo?.EfaInfo?.MaximumEfaInterfaces ?? 0],
  ];
  // Zero counts are left out, as on Karpenter's reference page.
  for (const [k, v] of extended) if (v > 0) resources[k] = String(v);
  return { labels: sortKeys(labels), resources: sortKeys(resources) };
}

/** memory(): arm64 loses 64Mi first, then the VM overhead percent, rounded up to whole MiB. */
function memoryMiB(sizeMiB: number, firstArch: string | undefined): number {
  const mib = firstArch === 'arm64' ? sizeMiB - 64 : sizeMiB;
  return mib - Math.ceil((mib * MI * VM_MEMORY_OVERHEAD_PERCENT) / 1024 / 1024);
}

/** ENILimitedPods(): usable ENIs x (IPv4 per ENI - 1) + 2, on the default network card. */
function eniLimitedPods(info: InstanceTypeInfo, name: string): number {
  const net = need(info.NetworkInfo, name, 'NetworkInfo');
  const card = (net.NetworkCards ?? [])[net.DefaultNetworkCardIndex ?? 0];
  const enis = need(card?.MaximumNetworkInterfaces, name, `NetworkInfo.NetworkCards[${net.DefaultNetworkCardIndex ?? 0}].MaximumNetworkInterfaces`);
  if (enis <= 0) return 0;
  const perEni = need(net.Ipv4AddressesPerInterface, name, 'NetworkInfo.Ipv4AddressesPerInterface');
  return enis * (perEni - 1) + 2;
}

/** kubeReservedResources(): 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% above. */
export function kubeReservedCpuMilli(cpuMilli: number): number {
  const ranges = [
    { start: 0, end: 1000, pct: 0.06 },
    { start: 1000, end: 2000, pct: 0.01 },
    { start: 2000, end: 4000, pct: 0.005 },
    { start: 4000, end: 2 ** 31, pct: 0.0025 },
  ];
  let total = 0;
  for (const r of ranges) {
    if (cpuMilli < r.start) continue;
    const span = cpuMilli < r.end ? cpuMilli - r.start : r.end - r.start;
    total += Math.trunc(span * r.pct); // Go: int64(r*percentage), per range
  }
  return total;
}

const gpuCount = (info: InstanceTypeInfo, manufacturer: string) => (info.GpuInfo?.Gpus ?? []).filter((g) => g.Manufacturer === manufacturer).reduce((n, g) => n + (g.Count ?? 0), 0);
const milli = (m: number) => (m % 1000 === 0 ? String(m / 1000) : `${m}m`);
const binaryBytes = (b: number) => {
  for (const [suffix, size] of [['Ti', 1024 ** 4], ['Gi', 1024 ** 3], ['Mi', MI], ['Ki', 1024]] as const) if (b % size === 0) return `${b / size}${suffix}`;
  return String(b);
};
const sortKeys = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
