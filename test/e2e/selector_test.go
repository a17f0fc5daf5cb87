package e2e

import (
	"context"
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The usage's example, `locks -l cluster.x-k8s.io/cluster-name=prod`,
// against locks real terraform took with the backend labels CAPTF passes
// (the owner labels, the cluster's name as CAPTF finds it for each kind,
// clusterctl's move label): the Lease carries every label of CAPTF's own
// locked fixture, and the selector keeps one Cluster's locks, of every
// kind, and no other's.
func TestLocksSelectByClusterName(t *testing.T) {
	ctx := context.Background()
	ns := "by-cluster"
	prod := []object.Ref{{Kind: object.TerraformCluster, Namespace: ns, Name: "prod"}, {Kind: object.TerraformMachine, Namespace: ns, Name: "prod-md-0"}}
	staging := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "staging"}
	world := map[object.Ref]string{prod[0]: "prod", prod[1]: "prod", staging: "staging"}
	for _, r := range append(slices.Clone(prod), staging) {
		if err := admin.Seed(ctx, r, testbed.Seeded{World: &testbed.World{Cluster: world[r]}}); err != nil {
			t.Fatal(err)
		}
		cluster, err := admin.ClusterName(ctx, r)
		if err != nil || cluster != world[r] {
			t.Fatalf("%s: CAPTF finds Cluster %q (%v), want %q", r, cluster, err, world[r])
		}
		b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, cluster)}
		dir, err := tf.Init(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tf.KilledLock(ctx, admin.Kube, dir, b, "laptop"); err != nil {
			t.Fatal(err)
		}
	}
	// The keys of the lock Lease of CAPTF's locked fixture
	// (internal/state/testdata/fixtures/terraform-locked.yaml at
	// d6986f4646de003dbde2b12ec279505307a1b667).
	fixture := []string{
		"app.kubernetes.io/managed-by", "captf.infrastructure.cluster.x-k8s.io/owner-kind", "captf.infrastructure.cluster.x-k8s.io/owner-name",
		"captf.io/managed", "cluster.x-k8s.io/cluster-name", "clusterctl.cluster.x-k8s.io/move", "tfstate", "tfstateSecretSuffix", "tfstateWorkspace",
	}
	l, err := admin.Kube.CoordinationV1().Leases(ns).Get(ctx, object.LockLeaseName(object.DefaultWorkspace, prod[1].Suffix()), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(l.Labels)); !slices.Equal(keys, fixture) || l.Labels["cluster.x-k8s.io/cluster-name"] != "prod" || l.Spec.HolderIdentity == nil {
		t.Errorf("the machine's lock Lease is labelled %v (held by %v), want the keys %q with cluster-name prod", l.Labels, l.Spec.HolderIdentity, fixture)
	}
	kc := kubeconfigIn(t, ns)
	for cluster, want := range map[string][]string{"prod": {prod[0].String(), prod[1].String()}, "staging": {staging.String()}, "other": nil} {
		var got []string
		for _, l := range locksJSON(t, kc, "-l", "cluster.x-k8s.io/cluster-name="+cluster).Items {
			got = append(got, object.TypeName(l.Object.Kind, l.Object.Name))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("-l cluster.x-k8s.io/cluster-name=%s lists %q, want %q", cluster, got, want)
		}
	}
}
