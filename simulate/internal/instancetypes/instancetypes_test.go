package instancetypes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/karpenter-gitops/simulate/internal/contract"
)

func readCatalogue(t *testing.T) contract.Catalogue {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "catalogue", "us-east-1.json"))
	if err != nil {
		t.Fatalf("reading the vendored catalogue: %v", err)
	}
	var cat contract.Catalogue
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatalf("decoding the vendored catalogue: %v", err)
	}
	return cat
}

func al2023(mutate func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	nc.Name = "default"
	if mutate != nil {
		mutate(nc)
	}
	return nc
}

// GIVEN the vendored catalogue (Karpenter's own allocatable for 1,204 types, default node class)
// WHEN capacity and overhead are rebuilt with the provider's formulas
// THEN capacity minus overhead is the catalogue's allocatable, for every type and resource.
func TestCatalogueReproduced(t *testing.T) {
	cat := readCatalogue(t)
	its, err := ForNodeClass(cat, al2023(nil), []string{"us-east-1a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != len(cat.InstanceTypes) || len(its) < 1000 {
		t.Fatalf("built %d types from %d catalogue entries", len(its), len(cat.InstanceTypes))
	}
	for _, it := range its {
		for name, want := range cat.InstanceTypes[it.Name].Resources {
			got := it.Allocatable()[corev1.ResourceName(name)]
			if got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s allocatable %s: got %s, catalogue has %s", it.Name, name, got.String(), want)
			}
		}
	}
}

func TestNodeClassSettings(t *testing.T) {
	cat := readCatalogue(t)
	m5 := contract.Catalogue{Region: "us-east-1", InstanceTypes: map[string]contract.InstanceType{"m5.large": cat.InstanceTypes["m5.large"]}}
	g := contract.Catalogue{Region: "us-east-1", InstanceTypes: map[string]contract.InstanceType{"m6g.large": cat.InstanceTypes["m6g.large"]}}
	vol := resource.MustParse("100Gi")
	for _, tc := range []struct {
		name     string
		cat      contract.Catalogue
		nc       *awsv1.EC2NodeClass
		resource corev1.ResourceName
		// capacity and allocatable, worked by hand from the provider's formulas
		capacity, allocatable string
	}{
		// 8192Mi - ceil(8192 * 7.5%) = 7577Mi; minus 11*29+255 = 574Mi kube-reserved and 100Mi eviction
		{"m5.large memory", m5, al2023(nil), corev1.ResourceMemory, "7577Mi", "6903Mi"},
		// 2 vCPU: 6% of the first core + 1% of the second = 70m kube-reserved
		{"m5.large cpu", m5, al2023(nil), corev1.ResourceCPU, "2", "1930m"},
		// Graviton keeps 64Mi: (8192 - 64) - ceil(8128 * 7.5%) = 7518Mi
		{"m6g.large memory", g, al2023(nil), corev1.ResourceMemory, "7518Mi", "6844Mi"},
		// a 100Gi root volume: 100Gi - 1Gi kube-reserved - 10% eviction = 89Gi
		{"root volume", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{{DeviceName: lo.ToPtr("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{VolumeSize: &vol}}}
		}), corev1.ResourceEphemeralStorage, "100Gi", "89Gi"},
		// maxPods caps pods, but AL2023's kube-reserved memory still uses the ENI-limited 29
		{"maxPods", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: lo.ToPtr(int32(10))}
		}), corev1.ResourcePods, "10", "10"},
		{"maxPods memory", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: lo.ToPtr(int32(10))}
		}), corev1.ResourceMemory, "7577Mi", "6903Mi"},
		// podsPerCore 4 x 2 vCPU = 8 < 29
		{"podsPerCore", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{PodsPerCore: lo.ToPtr(int32(4))}
		}), corev1.ResourcePods, "8", "8"},
		// kubeReserved replaces the formula's 70m and systemReserved adds: 2 - 0.2 - 0.1
		{"reserved", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{KubeReserved: map[string]string{"cpu": "200m"}, SystemReserved: map[string]string{"cpu": "100m"}}
		}), corev1.ResourceCPU, "2", "1700m"},
		// evictionHard 10% of 7577Mi = 794,506,036 bytes (rounded up) instead of 100Mi
		{"evictionHard", m5, al2023(func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "10%"}}
		}), corev1.ResourceMemory, "7577Mi", "6548671692"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			its, err := ForNodeClass(tc.cat, tc.nc, []string{"us-east-1a"})
			if err != nil {
				t.Fatal(err)
			}
			capacity, allocatable := its[0].Capacity[tc.resource], its[0].Allocatable()[tc.resource]
			if capacity.Cmp(resource.MustParse(tc.capacity)) != 0 || allocatable.Cmp(resource.MustParse(tc.allocatable)) != 0 {
				t.Errorf("%s: capacity %s allocatable %s, want %s and %s", tc.resource, capacity.String(), allocatable.String(), tc.capacity, tc.allocatable)
			}
		})
	}
}

func TestOfferings(t *testing.T) {
	price := 0.1
	for _, tc := range []struct {
		name  string
		entry contract.InstanceType
		// "zone/capacity-type" -> price, for available offerings only
		want map[string]float64
	}{
		{"no Spot prices: Spot at the On-Demand price in every zone", contract.InstanceType{OnDemandPrice: &price},
			map[string]float64{"a/spot": 0.1, "a/on-demand": 0.1, "b/spot": 0.1, "b/on-demand": 0.1}},
		{"Spot prices per zone; a zone without one has no Spot offering", contract.InstanceType{OnDemandPrice: &price, SpotPrices: map[string]float64{"a": 0.03}},
			map[string]float64{"a/spot": 0.03, "a/on-demand": 0.1, "b/on-demand": 0.1}},
		{"offered in one zone only", contract.InstanceType{OnDemandPrice: &price, Zones: []string{"b"}},
			map[string]float64{"b/spot": 0.1, "b/on-demand": 0.1}},
		{"no On-Demand price: no offering, as in the provider", contract.InstanceType{}, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]float64{}
			for _, of := range offerings(tc.entry, []string{"a", "b"}) {
				if of.Available {
					got[of.Zone()+"/"+of.CapacityType()] = of.Price
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("offerings %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("offering %s: price %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestUnsupportedFamily(t *testing.T) {
	nc := al2023(func(nc *awsv1.EC2NodeClass) {
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "windows2022@latest"}}
	})
	_, err := ForNodeClass(contract.Catalogue{}, nc, []string{"a"})
	want := `EC2NodeClass "default": AMI family must be AL2023, AL2 or Bottlerocket for the simulation, got "Windows2022"`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}
