package inspect

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// labelled is r in full with the cluster-name label; without an owner
// reference when owned is false.
func labelled(r object.Ref, cluster string, owned bool) *unstructured.Unstructured {
	u := full(r, nil)
	u.SetLabels(map[string]string{jobgate.ClusterNameLabel: cluster})
	if !owned {
		u.SetOwnerReferences(nil)
	}
	return u
}

// TestLockCluster: each lock names the Cluster API Cluster its object
// belongs to as CAPTF names it: by its cluster-name label first, a
// TerraformCluster's disagreeing owner reference (full gives it one to
// Cluster "c") never winning (review29c M1); a TerraformCluster without
// the label by its owner reference; a name no Cluster can have, none. A
// lock whose object is gone names none, whatever its Lease's labels say;
// --capi-cluster's filter keeps the locks of one Cluster.
func TestLockCluster(t *testing.T) {
	tc := object.Ref{Kind: object.TerraformCluster, Namespace: "team-a", Name: "tc"}
	loose := object.Ref{Kind: object.TerraformCluster, Namespace: "team-a", Name: "loose"}
	m := object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "m"}
	gone := object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "gone"}
	adopted := object.Ref{Kind: object.TerraformCluster, Namespace: "team-a", Name: "adopted"}
	forged := object.Ref{Kind: object.TerraformCluster, Namespace: "team-a", Name: "forged"}
	goneLease := held(gone, "host")
	goneLease.Labels[jobgate.ClusterNameLabel] = "prod"
	hostile := full(forged, nil)
	refs := hostile.GetOwnerReferences()
	refs[0].Name = "--kubeconfig=/tmp/evil"
	hostile.SetOwnerReferences(refs)
	c := newClusterFull([]runtime.Object{held(tc, "host"), lease(loose, nil, nil), lease(m, nil, nil), goneLease, lease(adopted, nil, nil), lease(forged, nil, nil)},
		labelled(tc, "label-of-tc", true), labelled(loose, "prod", false), labelled(m, "prod", true), full(adopted, nil), hostile)
	rep := Decide(c.snapshot(Scope{}, nil))
	leaseOf := func(r object.Ref) string { return object.LockLeaseName("default", r.Suffix()) }
	want := map[string]string{leaseOf(tc): "label-of-tc", leaseOf(loose): "prod", leaseOf(m): "prod", leaseOf(gone): "", leaseOf(adopted): "c", leaseOf(forged): ""}
	for _, r := range rep.Results {
		l := r.Lock()
		if w, ok := want[l.Name]; !ok || l.Cluster != w {
			t.Errorf("lock %s names Cluster %q, want %q", l.Name, l.Cluster, w)
		}
	}
	var got []string
	for _, r := range rep.OfCluster("prod").Results {
		got = append(got, r.Facts.Owner.Ref.Name)
	}
	if len(got) != 2 || got[0] == got[1] || (got[0] != "loose" && got[0] != "m") || (got[1] != "loose" && got[1] != "m") {
		t.Errorf("the locks of Cluster prod are %v, want those of loose and m", got)
	}
	if n := len(rep.OfCluster("nowhere").Results); n != 0 {
		t.Errorf("an unknown Cluster keeps %d locks, want none", n)
	}
	if n := len(rep.OfCluster("").Results); n != len(rep.Results) {
		t.Errorf("no Cluster keeps %d of %d locks", n, len(rep.Results))
	}
}
