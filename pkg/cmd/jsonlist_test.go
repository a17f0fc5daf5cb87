package cmd

import (
	"bytes"
	"testing"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// -o json of locks is streamed, and must be byte for byte what
// cli-runtime's JSON printer writes: with items, with none, and with
// contexts that could not be read.
func TestLockListStreamsAsThePrinterWrites(t *testing.T) {
	f, _ := verdictsWorld().factory()
	rep, err := f.clients.inspector.Locks(t.Context(), inspect.Scope{Namespace: "infra"})
	if err != nil {
		t.Fatal(err)
	}
	full := v1alpha1.NewLockList()
	for _, r := range rep.Results {
		full.Items = append(full.Items, r.Lock())
	}
	withErrors := full.DeepCopy()
	withErrors.ContextErrors = []v1alpha1.ContextError{{Context: "down", Error: "cannot list leases: <refused> & \"gone\""}}
	for name, list := range map[string]*v1alpha1.LockList{"items": full, "empty": v1alpha1.NewLockList(), "context errors": withErrors} {
		var want, got bytes.Buffer
		if err := (&printers.JSONPrinter{}).PrintObj(list.DeepCopy(), &want); err != nil {
			t.Fatal(err)
		}
		if err := writeLockList(&got, list.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: streamed\n%s\nprinter\n%s", name, got.String(), want.String())
		}
	}
	if res := captf(t, f, "locks", "-o", "json"); res.code != 0 || !bytes.Contains([]byte(res.out), []byte(`"verdict": "Stale"`)) {
		t.Errorf("locks -o json: %+v", res)
	}
}
