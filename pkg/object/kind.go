// Package object holds the CAPTF object kinds that own Terraform state and
// the state suffix that ties an object to its state Secrets and lock Lease.
package object

import "k8s.io/apimachinery/pkg/runtime/schema"

// Group and Version of CAPTF's infrastructure kinds.
const (
	Group   = "infrastructure.cluster.x-k8s.io"
	Version = "v1alpha1"
)

// Kind is one CAPTF kind that has Terraform state.
type Kind struct {
	// Name is the exact CamelCase kind; the suffix hash is taken over it.
	Name string
	// Code is the short code used in state suffixes and runner Job names.
	Code string
	// Resource is the plural resource name served by the CRD.
	Resource string
}

// The three kinds with state, in the order CAPTF documents them.
var (
	TerraformCluster     = Kind{Name: "TerraformCluster", Code: "c", Resource: "terraformclusters"}
	TerraformMachine     = Kind{Name: "TerraformMachine", Code: "m", Resource: "terraformmachines"}
	TerraformMachinePool = Kind{Name: "TerraformMachinePool", Code: "mp", Resource: "terraformmachinepools"}
)

// Kinds lists every kind with state.
var Kinds = []Kind{TerraformCluster, TerraformMachine, TerraformMachinePool}

// GVR is the kind's group/version/resource, for the dynamic and metadata clients.
func (k Kind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: k.Resource}
}

// GroupKind is the kind's group and kind, for RESTMapper lookups.
func (k Kind) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: Group, Kind: k.Name}
}

// KindByCode returns the kind with the given code ("c", "m", "mp").
func KindByCode(code string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Code == code {
			return k, true
		}
	}
	return Kind{}, false
}

// KindByName returns the kind with the given exact CamelCase name.
func KindByName(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}
