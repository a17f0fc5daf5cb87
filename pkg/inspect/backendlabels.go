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
// 81a0ff422f986130946f62ca8e093aeff3e5fc2c): the owner's kind and name,
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

// ClusterNameOf is the name of the Cluster CAPTF finds for u, of kind k,
// before it labels its state: a TerraformCluster's owning Cluster (its
// owner reference of kind Cluster in Cluster API's group), a machine's or
// pool's cluster.x-k8s.io/cluster-name label (shared LookupCluster); ""
// for none, where CAPTF starts no Job either.
func ClusterNameOf(k object.Kind, u *unstructured.Unstructured) string {
	if k != object.TerraformCluster {
		return u.GetLabels()[jobgate.ClusterNameLabel]
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
