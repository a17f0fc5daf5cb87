package inspect

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// labelMove is clusterctl's move label, which CAPTF passes empty.
const labelMove = "clusterctl.cluster.x-k8s.io/move"

// BackendLabels is the labels map CAPTF passes the kubernetes backend for
// r, of the Cluster API Cluster cluster (internal/state/labels.go
// BackendLabels at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517, called with
// the object's kind, its name and the request's cluster name in
// internal/controllers/shared/run.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517): the owner's kind and name,
// the cluster's name, captf.io/managed and the move label; a name longer
// than a label value is its hash (state.LabelValue).
func BackendLabels(r object.Ref, cluster string) map[string]string {
	return map[string]string{
		LabelOwnerKind:           r.Kind.Name,
		LabelOwnerName:           labelValue(r.Name),
		jobgate.ClusterNameLabel: labelValue(cluster),
		LabelManaged:             "true",
		labelMove:                "",
	}
}

// ClusterNameOf is the name of the Cluster CAPTF passes in u's backend
// labels (shared/run.go ClusterName at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517): u's
// cluster.x-k8s.io/cluster-name label, else its owner's Cluster, which for
// a TerraformCluster is the Cluster its owner reference names (in Cluster
// API's group); "" for none. A machine or pool without the label has no
// Cluster CAPTF's lookup finds, and no Job.
func ClusterNameOf(k object.Kind, u *unstructured.Unstructured) string {
	if n := u.GetLabels()[jobgate.ClusterNameLabel]; n != "" || k != object.TerraformCluster {
		return n
	}
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "Cluster" && strings.HasPrefix(o.APIVersion, jobgate.CAPIGroup+"/") {
			return o.Name
		}
	}
	return ""
}

// labelValue is state.LabelValue: name, or the first 16 hex digits of
// its sha256 when it is longer than a label value may be.
func labelValue(name string) string {
	if len(name) > 63 {
		return object.ShortHash(name)
	}
	return name
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
