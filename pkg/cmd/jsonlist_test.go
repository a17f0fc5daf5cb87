package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// Enough items for several chunks, each with its own name, so that
	// one written out of order shows.
	many := v1alpha1.NewLockList()
	for n := range 3*itemsPerChunk + 7 {
		l := *full.Items[n%len(full.Items)].DeepCopy()
		l.Name = fmt.Sprintf("%s-%d", l.Name, n)
		many.Items = append(many.Items, l)
	}
	withErrors := full.DeepCopy()
	withErrors.ContextErrors = []v1alpha1.ContextError{{Context: "down", Error: "cannot list leases: <refused> & \"gone\""}}
	for name, list := range map[string]*v1alpha1.LockList{"items": full, "many": many, "empty": v1alpha1.NewLockList(), "context errors": withErrors} {
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

// failingWriter takes n bytes, then fails every write.
type failingWriter struct{ n int }

func (f *failingWriter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("broken pipe")
	}
	f.n -= len(b)
	return len(b), nil
}

// A stream that breaks mid-list ends the command with its error, at once:
// nothing waits for the chunks not yet written.
func TestLockListStopsAtABrokenStream(t *testing.T) {
	list := v1alpha1.NewLockList()
	for n := range 40 * itemsPerChunk {
		list.Items = append(list.Items, v1alpha1.Lock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lock-%d", n)}})
	}
	err := writeLockList(&failingWriter{n: 100 << 10}, list)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("got %v, want the write's error", err)
	}
	// Nothing writes to the list once it has returned (the race detector
	// of make test sees it otherwise): the chunks not written are intact.
	last := list.Items[len(list.Items)-1].Name
	if want := fmt.Sprintf("lock-%d", len(list.Items)-1); last != want {
		t.Errorf("last item %q, want %q untouched", last, want)
	}
}

// indentCompact indents any compact JSON exactly as json.Indent does, with
// the printer's indent and with others.
func FuzzIndentCompact(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[],"b":{},"c":[1,{"d":"x,y:{}[]\"\\"}],"e":null}`, `"\\"`, `[[[]],[{}]]`, `{"\u2028<&>":"\ufffd"}`, `1`} {
		f.Add([]byte(s), "        ", "    ")
	}
	f.Fuzz(func(t *testing.T, b []byte, prefix, indent string) {
		if !json.Valid(b) {
			return
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatal(err)
		}
		if err := json.Indent(&want, compact.Bytes(), prefix, indent); err != nil {
			t.Fatal(err)
		}
		if got := indentCompact([]byte("x"), compact.Bytes(), prefix, indent); string(got) != "x"+want.String() {
			t.Fatalf("%q:\n%q\nwant\n%q", compact.Bytes(), got, "x"+want.String())
		}
	})
}

// locks -o json of 10,000 locks (the verdicts world's, repeated), as the
// command writes it.
func BenchmarkLockListJSON(b *testing.B) {
	f, _ := verdictsWorld().factory()
	rep, err := f.clients.inspector.Locks(b.Context(), inspect.Scope{Namespace: "infra"})
	if err != nil {
		b.Fatal(err)
	}
	var items []v1alpha1.Lock
	for n := range 10000 {
		l := rep.Results[n%len(rep.Results)].Lock()
		l.Name = fmt.Sprintf("%s-%d", l.Name, n)
		items = append(items, l)
	}
	for b.Loop() {
		list := v1alpha1.NewLockList()
		list.Items = append([]v1alpha1.Lock(nil), items...)
		if err := writeLockList(io.Discard, list); err != nil {
			b.Fatal(err)
		}
	}
}
