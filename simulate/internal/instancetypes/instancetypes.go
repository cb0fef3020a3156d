// Package instancetypes turns catalogue entries into Karpenter's cloudprovider.InstanceType.
//
// The catalogue holds what Karpenter's generated reference data holds: labels and
// allocatable resources, not EC2's InstanceTypeInfo. So capacity and overhead are
// rebuilt here with the formulas of karpenter-provider-aws v1.13.1,
// pkg/providers/instancetype/types.go (memory, ephemeralStorage, pods,
// kubeReservedResources, evictionThreshold), applied to the EC2NodeClass's kubelet and
// block device settings; TestCatalogueReproduced checks that capacity minus overhead
// gives back the catalogue's allocatable for every entry. Linking the provider's
// resolver instead would need InstanceTypeInfo (which the catalogue does not carry) and
// the AWS SDK's EC2 client, which more than doubles the build (NOTES.md).
package instancetypes

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karpenter-gitops/simulate/internal/contract"
)

// VMMemoryOverheadPercent is the provider's default --vm-memory-overhead-percent.
const VMMemoryOverheadPercent = 0.075

// family is what of an AMI family changes capacity and overhead (the provider's
// amifamily FeatureFlags and ephemeral block device).
type family struct {
	usesENILimitedMemoryOverhead bool
	podsPerCoreEnabled           bool
	ephemeralDevice              string
}

func familyOf(nc *awsv1.EC2NodeClass) (family, error) {
	switch f := nc.AMIFamily(); f {
	case awsv1.AMIFamilyAL2023, awsv1.AMIFamilyAL2:
		return family{usesENILimitedMemoryOverhead: true, podsPerCoreEnabled: true, ephemeralDevice: "/dev/xvda"}, nil
	case awsv1.AMIFamilyBottlerocket:
		return family{ephemeralDevice: "/dev/xvdb"}, nil
	default:
		return family{}, fmt.Errorf("EC2NodeClass %q: AMI family must be AL2023, AL2 or Bottlerocket for the simulation, got %q", nc.Name, f)
	}
}

// Labels the provider always sets, DoesNotExist when a type has no value for them.
var optionalLabels = []string{
	awsv1.LabelInstanceCPUManufacturer, awsv1.LabelInstanceCPUSustainedClockSpeedMhz,
	awsv1.LabelInstanceEBSBandwidth, awsv1.LabelInstanceNetworkBandwidth, awsv1.LabelInstanceLocalNVME,
	awsv1.LabelInstanceGPUName, awsv1.LabelInstanceGPUManufacturer, awsv1.LabelInstanceGPUCount, awsv1.LabelInstanceGPUMemory,
	awsv1.LabelInstanceAcceleratorName, awsv1.LabelInstanceAcceleratorManufacturer, awsv1.LabelInstanceAcceleratorCount,
}

// ForNodeClass builds every catalogue type as Karpenter's provider would for this node
// class, with offerings in the given zones, sorted by name.
func ForNodeClass(cat contract.Catalogue, nc *awsv1.EC2NodeClass, zones []string) ([]*cloudprovider.InstanceType, error) {
	fam, err := familyOf(nc)
	if err != nil {
		return nil, err
	}
	names := lo.Keys(cat.InstanceTypes)
	sort.Strings(names)
	out := make([]*cloudprovider.InstanceType, 0, len(names))
	for _, name := range names {
		it, err := build(name, cat.InstanceTypes[name], cat.Region, zones, nc, fam)
		if err != nil {
			return nil, fmt.Errorf("catalogue instance type %q: %w", name, err)
		}
		out = append(out, it)
	}
	return out, nil
}

func build(name string, entry contract.InstanceType, region string, zones []string, nc *awsv1.EC2NodeClass, fam family) (*cloudprovider.InstanceType, error) {
	vcpus, err := intLabel(entry.Labels, awsv1.LabelInstanceCPU)
	if err != nil {
		return nil, err
	}
	memMiB, err := intLabel(entry.Labels, awsv1.LabelInstanceMemory)
	if err != nil {
		return nil, err
	}
	// The catalogue's pods is Karpenter's ENI-limited count (no reserved ENIs).
	eniPods, err := quantity(entry.Resources, string(corev1.ResourcePods))
	if err != nil {
		return nil, err
	}
	kubelet := lo.FromPtr(nc.Spec.Kubelet)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(vcpus, resource.DecimalSI),
		corev1.ResourceMemory:           memory(memMiB, entry.Labels[corev1.LabelArchStable]),
		corev1.ResourceEphemeralStorage: ephemeralStorage(entry.Labels, nc, fam),
		corev1.ResourcePods:             pods(eniPods.Value(), vcpus, kubelet.MaxPods, kubelet.PodsPerCore, fam),
	}
	// Extended resources (pod ENIs, EFAs, GPUs, Neuron) have no overhead: allocatable is capacity.
	for k, v := range entry.Resources {
		switch corev1.ResourceName(k) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods:
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("resources.%s must be a quantity, got %q: %w", k, v, err)
		}
		capacity[corev1.ResourceName(k)] = q
	}
	reservedPods := capacity[corev1.ResourcePods]
	if fam.usesENILimitedMemoryOverhead {
		reservedPods = eniPods
	}
	mem := capacity[corev1.ResourceMemory]
	storage := capacity[corev1.ResourceEphemeralStorage]
	overhead, err := overheadFor(capacity[corev1.ResourceCPU], reservedPods, mem, storage, kubelet)
	if err != nil {
		return nil, fmt.Errorf("EC2NodeClass %q kubelet: %w", nc.Name, err)
	}
	return &cloudprovider.InstanceType{
		Name:         name,
		Requirements: requirements(name, entry, region, zones),
		Offerings:    offerings(entry, zones),
		Capacity:     capacity,
		Overhead:     overhead,
	}, nil
}

// memory is the provider's memory(): Graviton keeps 64 MiB for CMA, then the VM overhead.
func memory(sizeMiB int64, arch string) resource.Quantity {
	if arch == karpv1.ArchitectureArm64 {
		sizeMiB -= 64
	}
	mem := resource.MustParse(fmt.Sprintf("%dMi", sizeMiB))
	mem.Sub(resource.MustParse(fmt.Sprintf("%dMi", int64(math.Ceil(float64(mem.Value())*VMMemoryOverheadPercent/1024/1024)))))
	return mem
}

// ephemeralStorage is the provider's ephemeralStorage(): RAID0 instance store, the root
// volume, the family's ephemeral device, else the default 20Gi.
func ephemeralStorage(labels map[string]string, nc *awsv1.EC2NodeClass, fam family) resource.Quantity {
	if lo.FromPtr(nc.Spec.InstanceStorePolicy) == awsv1.InstanceStorePolicyRAID0 {
		if gb, ok := labels[awsv1.LabelInstanceLocalNVME]; ok {
			return resource.MustParse(gb + "G")
		}
	}
	bdms := nc.Spec.BlockDeviceMappings
	if bdm, ok := lo.Find(bdms, func(b *awsv1.BlockDeviceMapping) bool { return b.RootVolume }); ok && bdm.EBS != nil && bdm.EBS.VolumeSize != nil {
		return *bdm.EBS.VolumeSize
	}
	if bdm, ok := lo.Find(bdms, func(b *awsv1.BlockDeviceMapping) bool { return lo.FromPtr(b.DeviceName) == fam.ephemeralDevice }); ok && bdm.EBS != nil && bdm.EBS.VolumeSize != nil {
		return *bdm.EBS.VolumeSize
	}
	return resource.MustParse("20Gi")
}

// pods is the provider's pods(): kubelet maxPods, else the ENI-limited count, capped by podsPerCore.
func pods(eniPods, vcpus int64, maxPods, podsPerCore *int32, fam family) resource.Quantity {
	count := eniPods
	if maxPods != nil {
		count = int64(*maxPods)
	}
	if lo.FromPtr(podsPerCore) > 0 && fam.podsPerCoreEnabled {
		count = min(int64(*podsPerCore)*vcpus, count)
	}
	return *resource.NewQuantity(count, resource.DecimalSI)
}

// overheadFor is the provider's kubeReservedResources, systemReservedResources and evictionThreshold.
func overheadFor(cpus, pods, mem, storage resource.Quantity, kubelet awsv1.KubeletConfiguration) (*cloudprovider.InstanceTypeOverhead, error) {
	kubeReserved := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dMi", 11*pods.Value()+255)),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
	cpuOverhead := resource.NewMilliQuantity(0, resource.DecimalSI)
	for _, r := range []struct {
		start, end int64
		percentage float64
	}{{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, 1 << 31, 0.0025}} {
		if c := cpus.MilliValue(); c >= r.start {
			span := float64(r.end - r.start)
			if c < r.end {
				span = float64(c - r.start)
			}
			cpuOverhead.Add(*resource.NewMilliQuantity(int64(span*r.percentage), resource.DecimalSI))
		}
	}
	kubeReserved[corev1.ResourceCPU] = *cpuOverhead
	overrides, err := quantities(kubelet.KubeReserved, "kubeReserved")
	if err != nil {
		return nil, err
	}
	systemReserved, err := quantities(kubelet.SystemReserved, "systemReserved")
	if err != nil {
		return nil, err
	}
	eviction := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: resource.MustParse(fmt.Sprint(math.Ceil(float64(storage.Value()) / 100 * 10))),
	}
	for signal, res := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		v, ok := kubelet.EvictionHard[signal]
		if !ok {
			continue
		}
		base := lo.Ternary(res == corev1.ResourceMemory, mem, storage)
		q, err := evictionSignal(base, v)
		if err != nil {
			return nil, fmt.Errorf("evictionHard[%s]: %w", signal, err)
		}
		eviction[res] = q
	}
	return &cloudprovider.InstanceTypeOverhead{
		KubeReserved:      lo.Assign(kubeReserved, overrides),
		SystemReserved:    systemReserved,
		EvictionThreshold: eviction,
	}, nil
}

// evictionSignal is the provider's computeEvictionSignal: a percentage of capacity (100% disables) or a quantity.
func evictionSignal(capacity resource.Quantity, v string) (resource.Quantity, error) {
	if strings.HasSuffix(v, "%") {
		p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil {
			return resource.Quantity{}, fmt.Errorf("must be a percentage or a quantity, got %q", v)
		}
		if p == 100 {
			p = 0
		}
		return resource.MustParse(fmt.Sprint(math.Ceil(capacity.AsApproximateFloat64() / 100 * p))), nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("must be a percentage or a quantity, got %q", v)
	}
	return q, nil
}

// requirements mirrors the provider's computeRequirements from the catalogue's labels.
func requirements(name string, entry contract.InstanceType, region string, zones []string) scheduling.Requirements {
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, availableZones(entry, zones)...),
		scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, region),
		scheduling.NewRequirement(corev1.LabelWindowsBuild, corev1.NodeSelectorOpDoesNotExist),
		// The catalogue does not say which usage classes a type supports; EC2 offers both for nearly all.
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand),
		scheduling.NewRequirement(awsv1.LabelInstanceTenancy, corev1.NodeSelectorOpIn, "default", "dedicated"),
		scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
	)
	for _, key := range optionalLabels {
		reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
	}
	for key, value := range entry.Labels {
		reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, value))
	}
	reqs.Add(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, name))
	return reqs
}

func availableZones(entry contract.InstanceType, zones []string) []string {
	if entry.Zones == nil {
		return zones
	}
	return sets.List(sets.New(zones...).Intersection(sets.New(entry.Zones...)))
}

// offerings mirrors the provider's createOfferings: one per zone and capacity type,
// available when the type is offered in the zone and has a price. Without Spot prices
// a Spot offering costs the On-Demand price: the provider's pricing does the same until
// its first Spot price update (populateInitialSpotPricing).
func offerings(entry contract.InstanceType, zones []string) cloudprovider.Offerings {
	offered := sets.New(availableZones(entry, zones)...)
	var out cloudprovider.Offerings
	for _, zone := range zones {
		for _, ct := range []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand} {
			price, hasPrice := lo.FromPtr(entry.OnDemandPrice), entry.OnDemandPrice != nil
			if ct == karpv1.CapacityTypeSpot && entry.SpotPrices != nil {
				price, hasPrice = entry.SpotPrices[zone]
			}
			out = append(out, &cloudprovider.Offering{
				Requirements: scheduling.NewRequirements(
					scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
					scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
					scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
					scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
					scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
				),
				Price:     price,
				Available: hasPrice && offered.Has(zone),
			})
		}
	}
	return out
}

func intLabel(labels map[string]string, key string) (int64, error) {
	v, ok := labels[key]
	if !ok {
		return 0, fmt.Errorf("labels must have %s, got none", key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("labels.%s must be an integer, got %q: %w", key, v, err)
	}
	return n, nil
}

func quantity(resources map[string]string, key string) (resource.Quantity, error) {
	v, ok := resources[key]
	if !ok {
		return resource.Quantity{}, fmt.Errorf("resources must have %s, got none", key)
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("resources.%s must be a quantity, got %q: %w", key, v, err)
	}
	return q, nil
}

func quantities(m map[string]string, field string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s[%s] must be a quantity, got %q: %w", field, k, v, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}
