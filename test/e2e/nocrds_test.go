package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// On a cluster that does not serve CAPTF's kinds, locks work without an
// error or warning: a runner pod's unhashed name still identifies the
// object (which then does not exist), and nothing else can.
func TestWithoutCAPTFCRDs(t *testing.T) {
	ctx := context.Background()
	c, err := testbed.Start(ctx, testbed.Options{NoCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cs, err := c.Clients()
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Namespace(ctx, "bare"); err != nil {
		t.Fatal(err)
	}
	local := testbed.Terraform{Kubeconfig: c.Kubeconfig, Dir: t.TempDir()}
	r := object.Ref{Kind: object.TerraformMachine, Namespace: "bare", Name: "db-0"}
	b := testbed.Backend{Namespace: "bare", Suffix: r.Suffix()}
	dir, err := local.Init(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.KilledLock(ctx, cs.Kube, dir, b, "captf-m-db-0-apply-a1-d72d2a-x7k2p"); err != nil {
		t.Fatal(err)
	}
	orphan := object.Ref{Kind: object.TerraformCluster, Namespace: "bare", Name: "x"}
	id := "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
	info := testbed.LockInfo(id, "alice@laptop", t0)
	if _, err := cs.LockLease(ctx, "bare", orphan.Suffix(), nil, &id, &info); err != nil {
		t.Fatal(err)
	}

	kc, err := c.KubeconfigFor(testbed.AdminUser, "bare")
	if err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "locks", "-o", "json")
	if res.code != 0 || res.err != "" {
		t.Fatalf("exit %d, stderr %q", res.code, res.err)
	}
	list := locksJSONFrom(t, res.out)
	if len(list.Items) != 2 {
		t.Fatalf("%d locks", len(list.Items))
	}
	for _, l := range list.Items {
		switch l.Suffix {
		case r.Suffix():
			if l.Verdict != v1alpha1.Stale || l.CAPTFClears || l.Object == nil || l.Object.Name != "db-0" ||
				l.Object.Exists == nil || *l.Object.Exists || !strings.Contains(l.Reason, "terraformmachine/db-0 no longer exists") {
				t.Errorf("runner lock: %s %+v %q", l.Verdict, l.Object, l.Reason)
			}
		case orphan.Suffix():
			if l.Verdict != v1alpha1.Foreign || l.Object != nil || !strings.Contains(l.Reason, "the cluster serves none of CAPTF's kinds") {
				t.Errorf("orphan lock: %s %+v %q", l.Verdict, l.Object, l.Reason)
			}
		}
	}
}
