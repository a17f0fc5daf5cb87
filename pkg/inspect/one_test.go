package inspect

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

func lockOne(t *testing.T, c *cluster, ns, name string) (*Result, error) {
	t.Helper()
	r, _, err := c.inspector().Lock(context.Background(), ns, name)
	return r, err
}

func requests(c *cluster) int {
	return len(c.client.Actions()) + len(c.metadata.Actions()) + len(c.dynamic.Actions())
}

// maxLockRequests bounds the requests of Lock: the Lease, the three CAPTF
// kinds, the Jobs, the holder's pod and its owner, whatever the cluster.
const maxLockRequests = 7

func TestLockOneMatchesLocks(t *testing.T) {
	objs := []runtime.Object{held(demo, "root@"+demoPod), pod("default", demoPod, corev1.PodFailed, true)}
	c := newCluster(objs, demo)
	r, err := lockOne(t, c, "default", object.LockLeaseName("default", demo.Suffix()))
	if err != nil {
		t.Fatal(err)
	}
	want(t, *r, v1alpha1.Stale, "is Failed")
	if n := requests(c); n > maxLockRequests {
		t.Errorf("%d requests, want at most %d (lease, 3 kinds, jobs, pod, owner)", n, maxLockRequests)
	}
	if all := newCluster(objs, demo).only(t); all.Decision.Reason != r.Decision.Reason {
		t.Errorf("Lock and Locks disagree: %q / %q", r.Decision.Reason, all.Decision.Reason)
	}
}

// A foreign host's pod is reported even when no CAPTF label lists it.
func TestLockOneReportsAnyHolderPod(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "alice@tf-debug"), pod("default", "tf-debug", corev1.PodRunning, false)}, demo)
	r, err := lockOne(t, c, "default", object.LockLeaseName("default", demo.Suffix()))
	if err != nil {
		t.Fatal(err)
	}
	want(t, *r, v1alpha1.Foreign, "(that pod exists, Running)")
}

// A host that cannot be a pod name is never sent as a request path.
func TestLockOneInvalidHostIsNotRequested(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "alice@host/../../secrets")}, demo)
	r, err := lockOne(t, c, "default", object.LockLeaseName("default", demo.Suffix()))
	if err != nil {
		t.Fatal(err)
	}
	want(t, *r, v1alpha1.Foreign)
	for _, a := range c.client.Actions() {
		if a.GetResource().Resource == "pods" {
			t.Errorf("pod request for an invalid host: %v", a)
		}
	}
}

func TestLockOneErrors(t *testing.T) {
	c := newCluster(nil, demo)
	_, err := lockOne(t, c, "default", object.LockLeaseName("default", demo.Suffix()))
	var none *NoLeaseError
	if !errors.As(err, &none) {
		t.Errorf("missing Lease: %v", err)
	}
	if _, err := lockOne(t, c, "default", "captf-run-"+demo.Suffix()); err == nil || !strings.Contains(err.Error(), "not a Terraform lock Lease") {
		t.Errorf("CAPTF's own lease: %v", err)
	}
}
