package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/encode"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// -o json of locks is streamed, and must be byte for byte what
// cli-runtime's JSON printer writes: with items, with none, and with
// contexts that could not be read.
func TestLockListStreamsAsThePrinterWrites(t *testing.T) {
	f, _ := verdictsWorld().factory(t)
	snap, err := f.clients.reader.Read(t.Context(), inspect.Scope{Namespace: "infra"})
	if err != nil {
		t.Fatal(err)
	}
	rep := inspect.Decide(snap)
	full := v1alpha1.NewLockList()
	for _, r := range rep.Results {
		full.Items = append(full.Items, r.Lock())
	}
	// Many items, each with its own name, so that one written out of
	// order shows.
	many := v1alpha1.NewLockList()
	for n := range 775 {
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

// A stream that breaks mid-list ends the command with its error.
func TestLockListStopsAtABrokenStream(t *testing.T) {
	list := v1alpha1.NewLockList()
	for n := range 10000 {
		list.Items = append(list.Items, v1alpha1.Lock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lock-%d", n)}})
	}
	err := writeLockList(&failingWriter{n: 100 << 10}, list)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("got %v, want the write's error", err)
	}
}

// The streamed list is the JSON printer's output for the whole list, also
// with text the cluster's holders chose: every string parses back, and no
// invisible or control character is raw.
func TestLockListEscapesAsThePrinter(t *testing.T) {
	list := v1alpha1.NewLockList()
	for n, who := range []string{"c1\u009b", "non\uffff", "nel\u0085", "rlo\u202e", "zw\u200b", "tag\U000e0041"} {
		list.Items = append(list.Items, v1alpha1.Lock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("l-%d", n)}, Lock: &v1alpha1.LockInfo{Who: who}})
	}
	list.ContextErrors = []v1alpha1.ContextError{{Context: "c\u202e", Error: "e\u009b"}}
	var streamed, printed bytes.Buffer
	if err := writeLockList(&streamed, list.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := (jsonPrinter{}).PrintObj(&v1alpha1.Explanation{TypeMeta: list.TypeMeta}, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(list, "", indent)
	printed.Write(append(encode.JSON(data), '\n'))
	if streamed.String() != printed.String() {
		t.Errorf("streamed\n%s\nprinted\n%s", streamed.String(), printed.String())
	}
	assertSafe(t, streamed.String())
	var back v1alpha1.LockList
	if err := json.Unmarshal(streamed.Bytes(), &back); err != nil || !reflect.DeepEqual(&back, list) {
		t.Errorf("does not parse back: %v\n%s", err, streamed.String())
	}
}

// locks -o json of 10,000 locks (the verdicts world's, repeated), as the
// command writes it.
func BenchmarkLockListJSON(b *testing.B) {
	f, _ := verdictsWorld().factory(b)
	snap, err := f.clients.reader.Read(b.Context(), inspect.Scope{Namespace: "infra"})
	if err != nil {
		b.Fatal(err)
	}
	rep := inspect.Decide(snap)
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

// indentCompact trusts encoding/json's compact output; on any compact
// JSON it writes what json.Indent writes, strings with escapes, empty
// objects and arrays, and nesting included.
func FuzzIndentCompact(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{}],"b":"x\"y\\","c":{"d":[]}}`, `[{"k":"v:,{}[]"},null,true,-1.5e3]`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, in) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), itemPrefix, indent); err != nil {
			t.Fatal(err)
		}
		if got := indentCompact(nil, compact.Bytes(), itemPrefix, indent); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("indentCompact(%q)\n got %q\nwant %q", compact.Bytes(), got, want.Bytes())
		}
	})
}
