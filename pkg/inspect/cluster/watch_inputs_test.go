package cluster

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Inputs of a verdict beyond the informers' selectors: an unlabelled
// holder pod (followed by a watch of that one pod) and a TerraformCluster
// found through its Cluster's infrastructureRef rather than its label.

// An unlabelled holder pod (Read finds it by name: Live) is outside the
// pod informer's captf.io/managed=true selector: its deletion is never
// seen by it; the watch of that one pod sees it.
func TestWatchSeesAnUnlabelledHolderPodGo(t *testing.T) {

	pod := runnerPodName(quiet)
	srv, r := newReader(t, heldLease(quiet, "root@"+pod), captfObject(quiet, nil), podOf("default", pod, corev1.PodRunning, false))
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(quiet)), v1alpha1.Live)
	if err := srv.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "default", pod); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(quiet), "quiet's unlabelled holder pod deleted", verdictIs(v1alpha1.Stale, "no longer exists"))
}

// A TerraformCluster found through the Cluster's infrastructureRef but
// not labelled cluster.x-k8s.io/cluster-name: its change is followed
// through the lock's last read.
func TestWatchFollowsAnUnlabelledInheritedTerraformCluster(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	tc := terraformCluster("default", "prod-tc", "")
	srv, r := newReader(t, heldLease(m, "root@"+runnerPodName(m)), mu, tc,
		capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")))
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(m)), v1alpha1.Stale, "no Job is due")
	on := tc.DeepCopy()
	if err := unstructured.SetNestedField(on.Object, int64(600), "spec", "defaults", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	on.SetResourceVersion("")
	if err := srv.Tracker().Update(object.TerraformCluster.GVR(), on, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(m), "prod-tc's drift turned on", verdictIs(v1alpha1.Stale, "a drift Job, every 600 s"))
}

// A Cluster whose infrastructureRef now names another TerraformCluster
// changes what its machines inherit.
func TestWatchFollowsTheClusterAPICluster(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	off, on := terraformCluster("default", "off-tc", ""), terraformCluster("default", "on-tc", "")
	if err := unstructured.SetNestedField(on.Object, int64(600), "spec", "defaults", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	cl := capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "off-tc"))
	srv, r := newReader(t, heldLease(m, "root@"+runnerPodName(m)), mu, off, on, cl)
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(m)), v1alpha1.Stale, "no Job is due")
	moved := cl.DeepCopy()
	if err := unstructured.SetNestedMap(moved.Object, infraRef(object.Group, "TerraformCluster", "on-tc"), "spec", "infrastructureRef"); err != nil {
		t.Fatal(err)
	}
	moved.SetResourceVersion("")
	if err := srv.Tracker().Update(ClusterGVR, moved, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(m), "the Cluster pointed at on-tc", verdictIs(v1alpha1.Stale, "a drift Job, every 600 s"))
}

// When a namespace loses its last CAPTF object, CAPTF's orphan sweep may
// delete every managed Lease in it: the watch re-decides the other locks
// there, not only the deleted object's.
func TestWatchSeesANamespaceEmptied(t *testing.T) {
	managed := func(l *coordinationv1.Lease) *coordinationv1.Lease {
		l.Labels[inspect.LabelManaged] = "true"
		return l
	}
	last := object.Ref{Kind: object.TerraformCluster, Namespace: "lonely", Name: "last"}
	gone := object.Ref{Kind: object.TerraformMachine, Namespace: "lonely", Name: "gone"}
	srv, r := newReader(t, captfObject(last, nil), managed(heldLease(gone, "alice@laptop")))
	w := startWatch(t, r, inspect.Scope{})
	if first := resultOf(t, w.first(t), "lonely", lockName(gone)); first.Decision.DeletesLease != nil {
		t.Fatalf("a namespace with an object: %q", first.Decision.Reason)
	}
	if err := srv.Tracker().Delete(object.TerraformCluster.GVR(), "lonely", "last"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "lonely", lockName(gone), "the namespace's last object deleted", func(c inspect.Change) bool {
		d := c.Result.Decision.DeletesLease
		return d != nil && d.Path == jobgate.PathOrphanSweep
	})
}

// A TerraformCluster that the Cluster's infrastructureRef names but that
// does not exist at the first read, created later without the
// cluster-name label: its creation is followed too (review-21 S3).
func TestWatchFollowsAnUnlabelledTerraformClusterCreatedLater(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	srv, r := newReader(t, heldLease(m, "root@"+runnerPodName(m)), mu,
		capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")))
	w := startWatch(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, w.first(t), "default", lockName(m)), v1alpha1.Stale, "drift-default-interval, 30 min by default")
	tc := terraformCluster("default", "prod-tc", "")
	if err := unstructured.SetNestedField(tc.Object, int64(600), "spec", "defaults", "drift", "intervalSeconds"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Tracker().Create(object.TerraformCluster.GVR(), tc, "default"); err != nil {
		t.Fatal(err)
	}
	w.await(t, "default", lockName(m), "prod-tc created with drift on", verdictIs(v1alpha1.Stale, "a drift Job, every 600 s"))
}
