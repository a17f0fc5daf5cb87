package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A real terraform apply's lock says its operation as "apply" in every
// human output, the table, explain (its Holder line and step 4) and
// unlock's report, and as the lock info has it in JSON.
func TestOperationSaidTheSameWayEverywhere(t *testing.T) {
	const ns = "operation"
	r := newObject(t, ns, object.TerraformMachine, "ws")
	if _, err := tf.LockAs(context.Background(), admin.Kube, r, ""); err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigIn(t, ns)
	for _, args := range [][]string{
		{"locks"}, {"locks", "-o", "wide"},
		{"explain", "terraformmachine/ws"},
		{"unlock", "terraformmachine/ws"},
	} {
		res := captf(t, kc, args...)
		all := flat(res.out + res.err)
		if strings.Contains(all, "OperationType") || !strings.Contains(all, "apply") {
			t.Errorf("%v: the operation is not said as \"apply\":\n%s%s", args, res.out, res.err)
		}
	}
	// explain's step 4 and unlock's Holder line, where it was said as the
	// lock info's type.
	if res := captf(t, kc, "explain", "terraformmachine/ws"); !strings.Contains(flat(res.out), `, apply by "`) {
		t.Errorf("explain's step 4:\n%s", res.out)
	}
	if res := captf(t, kc, "unlock", "terraformmachine/ws"); !strings.Contains(flat(res.out+res.err), "(apply, for ") {
		t.Errorf("unlock's holder:\n%s%s", res.out, res.err)
	}
	// JSON keeps the lock info's own value.
	if res := captf(t, kc, "locks", "-o", "json"); !strings.Contains(res.out, `"operation": "OperationTypeApply"`) {
		t.Errorf("JSON:\n%s", res.out)
	}
}
