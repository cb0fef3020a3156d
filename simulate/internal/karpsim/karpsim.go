// Package karpsim runs Karpenter's own provisioning scheduler (Provisioner.Schedule of
// sigs.k8s.io/karpenter v1.13.0) offline: an in-memory API client holds the NodePools,
// EC2NodeClasses, DaemonSets and pending pods, and a small cloud provider answers with
// instance types built from the catalogue. Nothing reaches a cluster or AWS.
package karpsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/go-logr/logr"
	"github.com/samber/lo"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karpenter-gitops/simulate/internal/contract"
	"github.com/karpenter-gitops/simulate/internal/instancetypes"
)

// Options are the controller settings the scheduler reads, at the Helm chart's defaults.
func Options() *coreoptions.Options {
	return &coreoptions.Options{
		// Karpenter's default --cpu-requests; every request up to 1 CPU (the shipped
		// controllers ask 500m) gives the scheduler one worker.
		CPURequests:      1000,
		PreferencePolicy: coreoptions.PreferencePolicyRespect,
		MinValuesPolicy:  coreoptions.MinValuesPolicyStrict,
		FeatureGates:     coreoptions.FeatureGates{ReservedCapacity: true},
	}
}

// Simulate runs Schedule in.Runs times on fresh state and returns the most frequent plan.
func Simulate(ctx context.Context, in contract.Input) (contract.Output, error) {
	crlog.SetLogger(logr.Discard())
	ctx = coreoptions.ToContext(injection.WithControllerName(ctx, "provisioner"), Options())
	its, err := instanceTypesByNodeClass(in)
	if err != nil {
		return contract.Output{}, err
	}
	relabel := zonesInterchangeable(in)
	counts := map[string]int{}
	plans := map[string]contract.Output{}
	swapped := false
	for range in.Runs {
		plan, err := scheduleOnce(ctx, in, its)
		if err != nil {
			return contract.Output{}, err
		}
		swap := capacityTypesInterchangeable(in, plan)
		swapped = swapped || swap
		plan = canonical(plan, in.Zones, relabel, swap)
		key := mustJSON(plan)
		counts[key]++
		plans[key] = plan
	}
	keys := lo.Keys(counts)
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := plans[keys[0]]
	out.Runs, out.Plans, out.Agreeing, out.ZonesRelabelled, out.CapacityTypesRelabelled = in.Runs, len(keys), counts[keys[0]], relabel, swapped
	return out, nil
}

func instanceTypesByNodeClass(in contract.Input) (map[string][]*cloudprovider.InstanceType, error) {
	out := map[string][]*cloudprovider.InstanceType{}
	for i := range in.NodeClasses {
		nc := &in.NodeClasses[i]
		its, err := instancetypes.ForNodeClass(in.Catalogue, nc, in.Zones)
		if err != nil {
			return nil, fmt.Errorf("building instance types: %w", err)
		}
		out[nc.Name] = its
	}
	return out, nil
}

func scheduleOnce(ctx context.Context, in contract.Input, its map[string][]*cloudprovider.InstanceType) (contract.Output, error) {
	objects, pods := objectsFor(in)
	kube := fake.NewClientBuilder().
		WithScheme(scheme.Scheme).
		WithObjects(objects...).
		WithStatusSubresource(&corev1.Pod{}, &karpv1.NodePool{}, &karpv1.NodeClaim{}, &awsv1.EC2NodeClass{}).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		Build()
	cp := &cloudProvider{instanceTypes: its}
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, kube, cp)
	prov := provisioning.NewProvisioner(kube, events.NewRecorder(&record.FakeRecorder{}), cp, cluster, clk)

	// Pods Karpenter ignores never reach the scheduler: report them with Validate's reason.
	pending := map[string]string{}
	for _, p := range pods {
		if err := prov.Validate(ctx, p); err != nil {
			pending[podKey(p)] = fmt.Sprintf("ignored by Karpenter: %s", err)
		}
	}
	results, err := prov.Schedule(ctx)
	if err != nil {
		return contract.Output{}, fmt.Errorf("Provisioner.Schedule: %w", err)
	}
	for p, perr := range results.PodErrors {
		pending[podKey(p)] = perr.Error()
	}
	// Schedule returns nothing at all when no NodePool can be used.
	scheduled := sets(results)
	for _, p := range pods {
		if _, ok := pending[podKey(p)]; !ok && !scheduled[podKey(p)] {
			pending[podKey(p)] = "not scheduled: no NodePool is usable (none ready, or none references an EC2NodeClass)"
		}
	}
	out := contract.Output{NodeClaims: []contract.NodeClaim{}, Pending: groupPending(pending)}
	for _, nc := range results.NewNodeClaims {
		out.NodeClaims = append(out.NodeClaims, nodeClaimOf(nc))
	}
	sortPlan(&out)
	return out, nil
}

func sets(results scheduling.Results) map[string]bool {
	out := map[string]bool{}
	for _, nc := range results.NewNodeClaims {
		for _, p := range nc.Pods {
			out[podKey(p)] = true
		}
	}
	return out
}

// objectsFor prepares the API objects as a running cluster would hold them.
func objectsFor(in contract.Input) ([]client.Object, []*corev1.Pod) {
	var objects []client.Object
	created := metav1.NewTime(time.Unix(0, 0))
	for i := range in.NodeClasses {
		nc := in.NodeClasses[i].DeepCopy()
		nc.StatusConditions().SetTrue(status.ConditionReady)
		objects = append(objects, nc)
	}
	for i := range in.NodePools {
		np := in.NodePools[i].DeepCopy()
		np.UID = uid("nodepool", np.Name)
		// A NodePool counts only when Ready, which its controllers would have set (trap 2).
		np.StatusConditions().SetTrue(karpv1.ConditionTypeValidationSucceeded)
		np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeClassReady)
		np.StatusConditions().SetTrue(karpv1.ConditionTypeNodeRegistrationHealthy)
		objects = append(objects, np)
	}
	for i := range in.DaemonSets {
		ds := in.DaemonSets[i].DeepCopy()
		ds.UID = uid("daemonset", ds.Namespace+"/"+ds.Name)
		objects = append(objects, ds)
	}
	pods := make([]*corev1.Pod, 0, len(in.Pods))
	for i := range in.Pods {
		p := in.Pods[i].DeepCopy()
		p.UID = uid("pod", podKey(p))
		p.CreationTimestamp = created
		// What kube-scheduler writes on a pod no node fits: only such pods are provisionable (trap 3).
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		objects = append(objects, p)
		pods = append(pods, p)
	}
	return objects, pods
}

func uid(kind, name string) types.UID {
	sum := sha256.Sum256([]byte(kind + "/" + name))
	return types.UID(hex.EncodeToString(sum[:16]))
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

var ordinal = regexp.MustCompile(`-\d+$`)

// workload names a pod's workload: pods of one Deployment are interchangeable, so the
// plan counts them instead of naming them (which pod lands where is a tie-break).
func workload(key string) string { return ordinal.ReplaceAllString(key, "") }

func groupPending(pending map[string]string) []contract.Pending {
	counts := map[[2]string]int{}
	for key, reason := range pending {
		counts[[2]string{workload(key), reason}]++
	}
	out := []contract.Pending{}
	for k, n := range counts {
		out = append(out, contract.Pending{Workload: k[0], Count: n, Reason: k[1]})
	}
	return out
}

func nodeClaimOf(nc *scheduling.NodeClaim) contract.NodeClaim {
	zones, capacityTypes := map[string]bool{}, map[string]bool{}
	options := make([]contract.Option, 0, len(nc.InstanceTypeOptions))
	for _, it := range nc.InstanceTypeOptions {
		opt := contract.Option{Name: it.Name, MinPrice: -1}
		for _, of := range it.Offerings {
			if !of.Available || !nc.Requirements.IsCompatible(of.Requirements, karpscheduling.AllowUndefinedWellKnownLabels) {
				continue
			}
			zones[of.Zone()] = true
			capacityTypes[of.CapacityType()] = true
			if opt.MinPrice < 0 || of.Price < opt.MinPrice {
				opt.MinPrice = of.Price
			}
			opt.MaxPrice = max(opt.MaxPrice, of.Price)
		}
		options = append(options, opt)
	}
	sort.SliceStable(options, func(i, j int) bool {
		if options[i].MinPrice != options[j].MinPrice {
			return options[i].MinPrice < options[j].MinPrice
		}
		return options[i].Name < options[j].Name
	})
	podCounts := map[string]int{}
	for _, p := range nc.Pods {
		podCounts[workload(podKey(p))]++
	}
	pods := make([]contract.PodCount, 0, len(podCounts))
	for w, n := range podCounts {
		pods = append(pods, contract.PodCount{Workload: w, Count: n})
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Workload < pods[j].Workload })
	requests := map[string]string{}
	for name, q := range nc.Spec.Resources.Requests {
		requests[string(name)] = q.String()
	}
	return contract.NodeClaim{
		NodePool:      nc.NodePoolName,
		InstanceTypes: options,
		CapacityTypes: sortedKeys(capacityTypes),
		Zones:         sortedKeys(zones),
		Pods:          pods,
		Requests:      requests,
	}
}

func sortedKeys(m map[string]bool) []string {
	out := lo.Keys(m)
	sort.Strings(out)
	return out
}

// sortPlan orders NodeClaims and pending pods by their JSON, so equal plans are equal bytes.
func sortPlan(out *contract.Output) {
	sort.SliceStable(out.NodeClaims, func(i, j int) bool { return mustJSON(out.NodeClaims[i]) < mustJSON(out.NodeClaims[j]) })
	sort.SliceStable(out.Pending, func(i, j int) bool { return mustJSON(out.Pending[i]) < mustJSON(out.Pending[j]) })
}

// zonesInterchangeable is true when renaming zones cannot change Karpenter's answer:
// every type is offered in every zone at one price, and no input names a zone.
func zonesInterchangeable(in contract.Input) bool {
	if len(in.Zones) > 6 {
		return false // 6! relabellings is the most worth trying
	}
	for _, it := range in.Catalogue.InstanceTypes {
		if it.Zones != nil || it.SpotPrices != nil {
			return false
		}
	}
	text := mustJSON(struct {
		A []karpv1.NodePool
		B []corev1.Pod
		C []appsv1.DaemonSet
		D []awsv1.EC2NodeClass
	}{in.NodePools, in.Pods, in.DaemonSets, in.NodeClasses})
	return !lo.SomeBy(in.Zones, func(z string) bool { return strings.Contains(text, z) })
}

// capacityTypesInterchangeable is true when swapping spot and on-demand cannot change
// the plan: no Spot prices (a Spot offering costs the On-Demand price) and every
// NodePool the plan uses allows both.
func capacityTypesInterchangeable(in contract.Input, plan contract.Output) bool {
	for _, it := range in.Catalogue.InstanceTypes {
		if it.SpotPrices != nil {
			return false
		}
	}
	used := lo.SliceToMap(plan.NodeClaims, func(nc contract.NodeClaim) (string, bool) { return nc.NodePool, true })
	for _, np := range in.NodePools {
		if !used[np.Name] {
			continue
		}
		reqs := karpscheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
		ct := reqs.Get(karpv1.CapacityTypeLabelKey)
		if !reqs.Has(karpv1.CapacityTypeLabelKey) || !ct.Has(karpv1.CapacityTypeSpot) || !ct.Has(karpv1.CapacityTypeOnDemand) {
			return false
		}
	}
	return true
}

// canonical renames interchangeable zones (and swaps spot with on-demand when those are
// interchangeable) to whichever renaming sorts the plan first: Karpenter picks among
// equal domains in Go map order (trap 9), so only the plan up to renaming is its answer.
func canonical(plan contract.Output, zones []string, relabelZones, swapCapacityTypes bool) contract.Output {
	sorted := append([]string(nil), zones...)
	sort.Strings(sorted)
	perms := [][]string{sorted}
	if relabelZones {
		perms = permutations(sorted)
	}
	swaps := []map[string]string{nil}
	if swapCapacityTypes {
		swaps = append(swaps, map[string]string{karpv1.CapacityTypeSpot: karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeOnDemand: karpv1.CapacityTypeSpot})
	}
	best, bestKey := plan, ""
	for _, perm := range perms {
		rename := lo.SliceToMap(lo.Range(len(sorted)), func(i int) (string, string) { return sorted[i], perm[i] })
		for _, swap := range swaps {
			candidate := contract.Output{Pending: plan.Pending, NodeClaims: make([]contract.NodeClaim, len(plan.NodeClaims))}
			for i, nc := range plan.NodeClaims {
				nc.Zones = relabel(nc.Zones, rename)
				nc.CapacityTypes = relabel(nc.CapacityTypes, swap)
				candidate.NodeClaims[i] = nc
			}
			sortPlan(&candidate)
			if key := mustJSON(candidate); bestKey == "" || key < bestKey {
				best, bestKey = candidate, key
			}
		}
	}
	return best
}

func relabel(values []string, rename map[string]string) []string {
	out := lo.Map(values, func(v string, _ int) string {
		if r, ok := rename[v]; ok {
			return r
		}
		return v
	})
	sort.Strings(out)
	return out
}

func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{append([]string(nil), s...)}
	}
	var out [][]string
	for i := range s {
		rest := append(append([]string(nil), s[:i]...), s[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshalling %T: %v", v, err)) // only plain structs reach here
	}
	return string(b)
}

// cloudProvider is the part of Karpenter's AWS cloud provider the scheduler calls.
type cloudProvider struct {
	instanceTypes map[string][]*cloudprovider.InstanceType
}

var errOffline = errors.New("not available in an offline simulation")

func (c *cloudProvider) GetInstanceTypes(_ context.Context, np *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	name := np.Spec.Template.Spec.NodeClassRef.Name
	its, ok := c.instanceTypes[name]
	if !ok {
		return nil, fmt.Errorf("NodePool %q references EC2NodeClass %q, which the input does not have", np.Name, name)
	}
	return its, nil
}

func (c *cloudProvider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}

func (c *cloudProvider) Create(context.Context, *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	return nil, errOffline
}
func (c *cloudProvider) Delete(context.Context, *karpv1.NodeClaim) error { return errOffline }
func (c *cloudProvider) Get(context.Context, string) (*karpv1.NodeClaim, error) {
	return nil, errOffline
}
func (c *cloudProvider) List(context.Context) ([]*karpv1.NodeClaim, error) { return nil, nil }
func (c *cloudProvider) IsDrifted(context.Context, *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}
func (c *cloudProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }
func (c *cloudProvider) Name() string                                 { return "aws-offline" }
