package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// runtime is one of the two tools CAPTF runs, with what differs between them.
type runtime struct {
	name     string
	tool     testbed.Terraform
	version  string
	product  string // in force-unlock's success message
	heldBy   string // in the already-locked error
	alreadyU string // a second force-unlock
}

func runtimes() []runtime {
	return []runtime{
		{"terraform", tf, "1.11.4", "Terraform state has been successfully unlocked!", "already locked by another terraform client", "state is already unlocked"},
		{"tofu", tofu, "1.12.6", "OpenTofu state has been successfully unlocked!", "already locked by another tofu client", "state is already unlocked"},
	}
}

// Every real-binary scenario with both runtimes: a SIGKILLed runner's lock
// is Stale, the plugin clears it and a real apply then takes the lock; a
// workstation lock needs its ID; the runtime's own force-unlock interoperates.
func TestRuntimeParity(t *testing.T) {
	ctx := context.Background()
	for _, rt := range runtimes() {
		t.Run(rt.name, func(t *testing.T) {
			ns := "parity-" + rt.name
			// In a world in which CAPTF starts the object's next Job, so
			// that the Stale lock is one it clears.
			r := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "demo"}
			if err := admin.Seed(ctx, r, testbed.Seeded{World: &testbed.World{}}); err != nil {
				t.Fatal(err)
			}
			b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.World{}.ClusterOf(r))}
			dir, err := rt.tool.Init(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			host := "captf-c-demo-apply-a1-d72d2a-x7k2p"
			id, err := rt.tool.KilledLock(ctx, admin.Kube, dir, b, host)
			if err != nil {
				t.Fatal(err)
			}
			kc := kubeconfigIn(t, ns)
			l := locksJSON(t, kc).Items[0]
			if l.Verdict != v1alpha1.Stale || !l.CAPTFClears || l.Lock.ID != id || l.Lock.InfoID != id || l.Lock.Version != rt.version ||
				l.Lock.Who != "root@"+host || l.Lock.Operation != "OperationTypeApply" || l.Labels["app.kubernetes.io/managed-by"] != "terraform" {
				t.Fatalf("%s lock: %s %+v %v", rt.name, l.Verdict, l.Lock, l.Labels)
			}
			// The runtime itself is locked out, with its own words.
			out, err := rt.tool.Run(ctx, dir, "plan", "-no-color", "-lock-timeout=0s")
			if err == nil || !strings.Contains(out, "Error acquiring the state lock") || !strings.Contains(out, rt.heldBy) {
				t.Errorf("%s plan on a held lock: %v\n%s", rt.name, err, out)
			}
			before := getLease(t, r)
			if res := captf(t, kc, "unlock", "terraformcluster/demo", "--confirm"); res.code != 0 {
				t.Fatalf("unlock: exit %d\n%s%s", res.code, res.out, res.err)
			}
			assertCleared(t, r, before)
			if out, err := rt.tool.Run(ctx, dir, "apply", "-auto-approve", "-input=false", "-no-color", "-lock-timeout=0s"); err != nil {
				t.Fatalf("%s apply after unlock: %v\n%s", rt.name, err, out)
			}
			// The runtime's own force-unlock, on another killed lock, then twice.
			id, err = rt.tool.KilledLock(ctx, admin.Kube, dir, b, host)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := rt.tool.Run(ctx, dir, "force-unlock", "-force", id); err != nil || !strings.Contains(out, rt.product) {
				t.Errorf("%s force-unlock: %v\n%s", rt.name, err, out)
			}
			if l := locksJSON(t, kc).Items[0]; l.Verdict != v1alpha1.Unlocked {
				t.Errorf("after %s force-unlock: %s", rt.name, l.Verdict)
			}
			if out, err := rt.tool.Run(ctx, dir, "force-unlock", "-force", id); err == nil || !strings.Contains(out, rt.alreadyU) {
				t.Errorf("%s second force-unlock: %v\n%s", rt.name, err, out)
			}
			// A workstation lock: Foreign, cleared only with its ID.
			ws := newObject(t, ns, object.TerraformMachine, "ws")
			wsID, err := rt.tool.LockAs(ctx, admin.Kube, ws, "")
			if err != nil {
				t.Fatal(err)
			}
			if res := captf(t, kc, "unlock", "terraformmachine/ws", "--confirm"); res.code != 3 {
				t.Errorf("foreign without --id: exit %d", res.code)
			}
			if res := captf(t, kc, "unlock", "terraformmachine/ws", "--confirm", "--id", wsID); res.code != 0 {
				t.Errorf("foreign with --id: exit %d %s", res.code, res.err)
			}
		})
	}
}

// Where the runtimes differ on large states, each is held to its own
// behaviour: Terraform splits the state into -part-N Secrets (and explain
// lists them all); OpenTofu never chunks, fails to save, and releases its
// lock.
func TestLargeStateParity(t *testing.T) {
	ctx := context.Background()
	for _, rt := range runtimes() {
		t.Run(rt.name, func(t *testing.T) {
			ns := "large-" + rt.name
			r := newObject(t, ns, object.TerraformCluster, "big")
			dir, err := rt.tool.Init(ctx, testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster), Resources: testbed.LargeStateResources})
			if err != nil {
				t.Fatal(err)
			}
			out, err := rt.tool.Run(ctx, dir, "apply", "-auto-approve", "-input=false", "-no-color")
			x := explainJSONIn(t, ns, "terraformcluster/big")
			base := "tfstate-default-" + r.Suffix()
			if rt.name == "terraform" {
				if err != nil {
					t.Fatalf("terraform apply of a large state: %v", err)
				}
				if len(x.Context.StateSecrets) < 2 || x.Context.StateSecrets[0] != base || x.Context.StateSecrets[1] != base+"-part-1" {
					t.Errorf("state secrets %v", x.Context.StateSecrets)
				}
			} else {
				if err == nil || !strings.Contains(out, "Request entity too large") {
					t.Errorf("tofu apply of a large state should fail to save: %v\n%s", err, out)
				}
				if strings.Join(x.Context.StateSecrets, ",") != base {
					t.Errorf("state secrets %v", x.Context.StateSecrets)
				}
			}
			// Either way the lock is released.
			if x.Verdict != v1alpha1.Unlocked {
				t.Errorf("%s left the lock %s", rt.name, x.Verdict)
			}
		})
	}
}
