package inspect

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// ClusterOwner is the name of the first owner reference in refs to a
// Cluster API Cluster (kind Cluster in group cluster.x-k8s.io, any
// version), "" when none: the reference CAPTF's TerraformCluster follows
// to its Cluster (util.GetOwnerCluster, called by
// internal/controllers/terraformcluster/adapter.go Owner at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517). A reference whose apiVersion
// does not parse names no Cluster.
func ClusterOwner(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err == nil && r.Kind == "Cluster" && gv.Group == jobgate.CAPIGroup {
			return r.Name
		}
	}
	return ""
}

// ClusterOf is the name of the Cluster API Cluster an object of kind k
// belongs to, "" when it names none, found as CAPTF names it for its Jobs
// and backend labels (shared/run.go ClusterName at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517, as ClusterNameOf): the
// object's cluster.x-k8s.io/cluster-name label first, the label machines
// and pools are found by (shared/dependencies.go LookupCluster); a
// TerraformCluster without the label by its owner reference. A
// TerraformCluster's owner reference that disagrees with its label is one
// CAPTF calls forged or stale and does not follow (adapter.go Owner,
// ownership.ClusterOwnerMismatch), so it never wins over the label. A name
// no Cluster can have (not a DNS subdomain, such as one beginning with
// "-") names none: it is printed nowhere as a Cluster's, nor given to
// clusterctl.
func ClusterOf(k object.Kind, m ObjectMeta) string {
	name := m.ClusterLabel
	if name == "" && k == object.TerraformCluster {
		name = m.OwnerCluster
	}
	// "" names none without a validation: the validator's error for it
	// is a formatted message, 10,000 of them on a seed without labels.
	if name == "" || !ValidName(name) {
		return ""
	}
	return name
}

// InCluster says whether the lock belongs to Cluster API Cluster name:
// whether its object is listed and ClusterOf names that Cluster. Every
// lock is in the empty name's. A lock whose object is gone, or could not
// be listed, belongs to none: only its Lease's labels, which
// `locks -l cluster.x-k8s.io/cluster-name=NAME` selects on, still say.
func (r Result) InCluster(name string) bool {
	return name == "" || (r.Facts.Owner != nil && r.Facts.Owner.Cluster == name)
}

// OfCluster keeps the results of Cluster API Cluster name (InCluster), in
// their order; the empty name keeps them all. It reads nothing: the
// Cluster is in the object lists every read makes.
func (rep *Report) OfCluster(name string) *Report {
	if name == "" {
		return rep
	}
	out := &Report{Warnings: rep.Warnings, Results: make([]Result, 0, len(rep.Results))}
	for _, r := range rep.Results {
		if r.InCluster(name) {
			out.Results = append(out.Results, r)
		}
	}
	return out
}
