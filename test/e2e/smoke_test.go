package e2e

import (
	"context"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

func TestSmokeRealTerraformLock(t *testing.T) {
	ctx := context.Background()
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "smoke", Name: "demo"}
	if err := admin.Object(ctx, r); err != nil {
		t.Fatal(err)
	}
	b := testbed.Backend{Namespace: r.Namespace, Suffix: r.Suffix(), Labels: testbed.OwnerLabels(r)}
	dir, err := tf.Init(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	id, err := tf.KilledLock(ctx, admin.Kube, dir, b, "captf-c-demo-apply-a1-d72d2a-x7k2p")
	if err != nil {
		t.Fatal(err)
	}
	res := captf(t, kubeconfigIn(t, "smoke"), "locks", "-o", "wide")
	t.Logf("id %s\n%s%s", id, res.out, res.err)
}
