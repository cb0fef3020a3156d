package karpsim

import (
	"reflect"
	"testing"

	"github.com/karpenter-gitops/simulate/internal/contract"
)

func TestWorkload(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"checkout/checkout-api-0", "checkout/checkout-api"},
		{"default/inflate-12", "default/inflate"},
		{"default/web-v2", "default/web-v2"},
	} {
		if got := workload(tc.key); got != tc.want {
			t.Errorf("workload(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func claim(zone, w string) contract.NodeClaim {
	return contract.NodeClaim{NodePool: "default", Zones: []string{zone}, Pods: []contract.PodCount{{Workload: w, Count: 1}}}
}

// GIVEN two runs whose plans differ only in which interchangeable zone each NodeClaim got
// WHEN zones are canonicalised
// THEN both give the same plan, byte for byte.
func TestCanonicalZones(t *testing.T) {
	zones := []string{"z-a", "z-b", "z-c"}
	for _, tc := range []struct {
		name string
		a, b []contract.NodeClaim
		same bool
	}{
		{"zones swapped", []contract.NodeClaim{claim("z-a", "x"), claim("z-b", "y")}, []contract.NodeClaim{claim("z-c", "x"), claim("z-a", "y")}, true},
		{"same zone vs different zones", []contract.NodeClaim{claim("z-a", "x"), claim("z-a", "y")}, []contract.NodeClaim{claim("z-a", "x"), claim("z-b", "y")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := canonical(contract.Output{NodeClaims: tc.a}, zones, true, false)
			b := canonical(contract.Output{NodeClaims: tc.b}, zones, true, false)
			if got := mustJSON(a) == mustJSON(b); got != tc.same {
				t.Errorf("same = %v, want %v:\n%s\n%s", got, tc.same, mustJSON(a), mustJSON(b))
			}
		})
	}
}

func TestCanonicalCapacityTypes(t *testing.T) {
	spot, od := claim("z-a", "x"), claim("z-a", "x")
	spot.CapacityTypes, od.CapacityTypes = []string{"spot"}, []string{"on-demand"}
	for _, tc := range []struct {
		name string
		swap bool
		same bool
	}{{"swappable", true, true}, {"not swappable", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := canonical(contract.Output{NodeClaims: []contract.NodeClaim{spot}}, []string{"z-a"}, true, tc.swap)
			b := canonical(contract.Output{NodeClaims: []contract.NodeClaim{od}}, []string{"z-a"}, true, tc.swap)
			if got := mustJSON(a) == mustJSON(b); got != tc.same {
				t.Errorf("same = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestPermutations(t *testing.T) {
	got := permutations([]string{"a", "b", "c"})
	if len(got) != 6 || !reflect.DeepEqual(got[0], []string{"a", "b", "c"}) || !reflect.DeepEqual(got[5], []string{"c", "b", "a"}) {
		t.Errorf("permutations: %v", got)
	}
}

func TestGroupPending(t *testing.T) {
	got := groupPending(map[string]string{"ns/a-0": "r1", "ns/a-1": "r1", "ns/a-2": "r2"})
	sortPlan(&contract.Output{Pending: got})
	want := map[contract.Pending]bool{{Workload: "ns/a", Count: 2, Reason: "r1"}: true, {Workload: "ns/a", Count: 1, Reason: "r2"}: true}
	if len(got) != 2 || !want[got[0]] || !want[got[1]] {
		t.Errorf("groupPending: %v", got)
	}
}
