// Package contract is the JSON between the TypeScript CLI (simulate/cli.ts) and this
// program. The TypeScript side parses Output with a zod schema (simulate/contract.ts):
// change both together.
package contract

import (
	"encoding/json"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Input is everything one simulation reads; nothing comes from the environment or the network.
type Input struct {
	// Zones the cluster's subnets are in: each is a topology domain and an offering zone.
	Zones       []string             `json:"zones"`
	NodePools   []karpv1.NodePool    `json:"nodePools"`
	NodeClasses []awsv1.EC2NodeClass `json:"nodeClasses"`
	DaemonSets  []appsv1.DaemonSet   `json:"daemonSets"`
	Pods        []corev1.Pod         `json:"pods"`
	Catalogue   Catalogue            `json:"catalogue"`
	// Runs is how many times Schedule runs; Karpenter breaks some ties in Go map order,
	// so the output says how many distinct plans the runs gave.
	Runs int `json:"runs"`
}

// Catalogue mirrors catalogue/catalogue.ts (catalogueSchema).
type Catalogue struct {
	Origin        string                  `json:"origin"`
	Region        string                  `json:"region"`
	PricesAsOf    string                  `json:"pricesAsOf"`
	Zones         []string                `json:"zones"`
	InstanceTypes map[string]InstanceType `json:"instanceTypes"`
}

// InstanceType mirrors catalogue/catalogue.ts (instanceTypeSchema).
type InstanceType struct {
	Labels        map[string]string  `json:"labels"`
	Resources     map[string]string  `json:"resources"`
	OnDemandPrice *float64           `json:"onDemandPrice"`
	Zones         []string           `json:"zones,omitempty"`
	SpotPrices    map[string]float64 `json:"spotPrices,omitempty"`
}

// Output is the plan: what Karpenter would launch and what stays pending.
type Output struct {
	NodeClaims []NodeClaim `json:"nodeClaims"`
	Pending    []Pending   `json:"pending"`
	// Runs is how many times Schedule ran; Plans how many distinct plans they gave
	// (after zones were canonicalised); Agreeing how many runs gave the plan shown.
	Runs     int `json:"runs"`
	Plans    int `json:"plans"`
	Agreeing int `json:"agreeing"`
	// ZonesRelabelled is true when zones were interchangeable and renamed canonically;
	// CapacityTypesRelabelled when spot and on-demand were (no Spot prices, every pool
	// used allows both) and were swapped canonically.
	ZonesRelabelled         bool `json:"zonesRelabelled"`
	CapacityTypesRelabelled bool `json:"capacityTypesRelabelled"`
}

// NodeClaim is one NodeClaim Karpenter would create, with the pods it was made for.
type NodeClaim struct {
	NodePool string `json:"nodePool"`
	// InstanceTypes are the options sent to EC2 Fleet, cheapest first.
	InstanceTypes []Option `json:"instanceTypes"`
	CapacityTypes []string `json:"capacityTypes"`
	Zones         []string `json:"zones"`
	// Pods: pod count per workload (the pod name up to its ordinal), sorted by workload.
	Pods []PodCount `json:"pods"`
	// Requests: the pods' requests plus the DaemonSet overhead Karpenter added.
	Requests map[string]string `json:"requests"`
}

// Option is one instance type of a NodeClaim, priced over the offerings its requirements allow.
type Option struct {
	Name     string  `json:"name"`
	MinPrice float64 `json:"minPrice"`
	MaxPrice float64 `json:"maxPrice"`
}

// PodCount is how many pods of one workload a NodeClaim holds.
type PodCount struct {
	Workload string `json:"workload"`
	Count    int    `json:"count"`
}

// Pending is a workload's pods that stay pending, with Karpenter's reason.
type Pending struct {
	Workload string `json:"workload"`
	Count    int    `json:"count"`
	Reason   string `json:"reason"`
}

// Decode reads one Input; unknown fields are errors so that a contract change fails loudly.
func Decode(r io.Reader) (Input, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var in Input
	if err := dec.Decode(&in); err != nil {
		return Input{}, fmt.Errorf("decoding simulation input: %w", err)
	}
	if in.Runs < 1 {
		return Input{}, fmt.Errorf("runs must be at least 1, got %d", in.Runs)
	}
	if len(in.Zones) == 0 {
		return Input{}, fmt.Errorf("zones must list at least one zone, got none")
	}
	return in, nil
}
