package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// result classifies a hand-made lock the way the engine does.
func result(ns, name string, owner *object.Ref, holder *string, info string, pod *inspect.Pod) inspect.Result {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	l.Spec.HolderIdentity = holder
	if info != "" {
		l.Annotations = map[string]string{inspect.AnnotationLock: info}
	}
	f := inspect.Facts{Lease: inspect.ParseLease(l), Pod: pod}
	if owner != nil {
		yes := true
		f.Owner = &inspect.Owner{Ref: *owner, Exists: &yes, Via: "object"}
	}
	return inspect.Result{Facts: f, Decision: inspect.Classify(f)}
}

func ptr(s string) *string { return &s }

func fixtures() []inspect.Result {
	demo := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "demo"}
	created := now.Add(-2 * time.Hour).Format(time.RFC3339Nano)
	return []inspect.Result{
		result("default", "lock-tfstate-default-"+demo.Suffix(), &demo, ptr("id-1"),
			`{"ID":"id-1","Operation":"OperationTypeApply","Who":"root@captf-c-demo-apply-a1-d72d2a-x7k2p","Version":"1.11.4","Created":"`+created+`"}`, nil),
		result("team-a", "lock-tfstate-default-x", nil, ptr("id-2"),
			`{"ID":"id-2","Operation":"state-rm","Who":"evil\u001b]0;pwned\u0007\nuser@laptop","Version":"1.12.6","Created":"`+created+`"}`, nil),
		result("team-a", "lock-tfstate-default-y", nil, nil, "", nil),
	}
}

func render(t *testing.T, o tableOptions) string {
	t.Helper()
	var buf bytes.Buffer
	var locks []v1alpha1.Lock
	for _, r := range fixtures() {
		locks = append(locks, r.Lock())
	}
	p := &tablePrinter{opts: o, colorFor: func(io.Writer) bool { return o.color }, now: func() time.Time { return now }}
	if err := p.PrintObj(&v1alpha1.LockList{Items: locks}, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTable(t *testing.T) {
	got := render(t, tableOptions{namespace: true})
	want := `NAMESPACE   OBJECT                  VERDICT    HOLDER                                    OPERATION   AGE
default     terraformcluster/demo   Stale      root@captf-c-demo-apply-a1-d72d2a-x7k2p   apply       120m
team-a      <none>                  Foreign    evil^[]0;pwned^G\nuser@laptop             state-rm    120m
team-a      <none>                  Unlocked   <none>                                    <none>      <none>
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The holder writes Who: escape sequences and newlines never reach the terminal.
func TestTableEscapesHolderText(t *testing.T) {
	for _, o := range []tableOptions{{}, {wide: true}} {
		got := render(t, o)
		if strings.ContainsAny(got, "\x1b\x07") || strings.Count(got, "\n") != 4 {
			t.Errorf("unescaped:\n%q", got)
		}
	}
}

func TestTableWideAndNoHeaders(t *testing.T) {
	got := render(t, tableOptions{wide: true, noHeaders: true})
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 3 || strings.Contains(got, "VERDICT") {
		t.Fatalf("got\n%s", got)
	}
	if !regexp.MustCompile(`id-1 +lock-tfstate-default-`).MatchString(lines[0]) || !strings.Contains(lines[0], "holder pod captf-c-demo-apply-a1-d72d2a-x7k2p no longer exists") {
		t.Errorf("wide row %q", lines[0])
	}
}

func TestTableColor(t *testing.T) {
	got := render(t, tableOptions{color: true})
	if !strings.Contains(got, "\x1b[33mStale\x1b[0m") || !strings.Contains(got, "\x1b[31mForeign\x1b[0m") || strings.Contains(got, "\x1b[0mUnlocked") {
		t.Errorf("colours:\n%q", got)
	}
}

func TestExecuteErrorsAreOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"locks", "--bogus"},
		{"locks", "extra-arg"},
		{"locks", "--kubeconfig", "/nonexistent/kubeconfig"},
		{"nosuchcommand"},
	} {
		s, _, out, errOut := genericiooptions.NewTestIOStreams()
		if code := Execute(s, args); code != ExitError {
			t.Errorf("%v: exit %d", args, code)
		}
		if e := errOut.String(); !strings.HasPrefix(e, "error: ") || strings.Count(e, "\n") != 1 || out.Len() != 0 {
			t.Errorf("%v: stdout %q stderr %q", args, out.String(), e)
		}
	}
}

func TestHelpSaysKubectlCaptf(t *testing.T) {
	s, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := Execute(s, []string{"locks", "--help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "kubectl captf locks [flags]") || !strings.Contains(out.String(), "wide, name, json, yaml") {
		t.Errorf("help:\n%s", out.String())
	}
}

// hostileLocks are the fixtures and one lock whose holder wrote a
// 250,000-character Who and lock ID, and one whose Who fakes columns with
// runs of spaces.
func hostileLocks() []v1alpha1.Lock {
	var locks []v1alpha1.Lock
	for _, r := range fixtures() {
		locks = append(locks, r.Lock())
	}
	long := strings.Repeat("w", 250000)
	created := now.Add(-2 * time.Hour).Format(time.RFC3339Nano)
	for _, who := range []string{long + "@" + long, "ops@laptop   apply   2m   "} {
		info, _ := json.Marshal(map[string]string{"ID": long, "Operation": long, "Who": who, "Version": long, "Created": created})
		locks = append(locks, result("team-b", "lock-tfstate-default-"+who[:1], nil, ptr(long), string(info), nil).Lock())
	}
	return locks
}

// A cell costs at most its column's bound, cut with a marker: a holder
// that writes a quarter of a megabyte gets a row of its bounds, and the
// other rows are laid out as before, wider by what the bounds allow.
func TestTableBoundsEveryCell(t *testing.T) {
	for _, o := range []tableOptions{{namespace: true}, {namespace: true, wide: true}} {
		var buf bytes.Buffer
		p := &tablePrinter{opts: o, now: func() time.Time { return now }}
		if err := p.PrintObj(&v1alpha1.LockList{Items: hostileLocks()}, &buf); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		if len(lines) != 6 || buf.Len() > 6*(len(header(o))*(sentenceWidth+len(columnGap))) {
			t.Fatalf("wide %v: %d lines, %d bytes", o.wide, len(lines), buf.Len())
		}
		holder := strings.Index(lines[0], "HOLDER")
		cell := strings.Fields(lines[4][holder:])[0]
		if !strings.HasSuffix(cell, escape.Cut) || twwidth.Width(cell) != textWidth || !strings.HasPrefix(cell, "wwww") {
			t.Errorf("wide %v: holder cell %q", o.wide, cell)
		}
		// The fixtures' own rows keep their cells whole.
		if !strings.Contains(lines[1], "root@captf-c-demo-apply-a1-d72d2a-x7k2p ") {
			t.Errorf("wide %v: %q", o.wide, lines[1])
		}
		// The spaces in a Who never read as a gap between columns: the
		// columns after HOLDER start where the header's do.
		row := lines[5]
		if got := row[holder:]; !strings.HasPrefix(got, `ops@laptop\x20\x20\x20apply\x20\x20\x202m\x20\x20\x20 `) {
			t.Errorf("wide %v: spaces shown as %q", o.wide, got)
		}
		op := strings.Index(lines[0], "OPERATION")
		if len(row) <= op || row[op-1] != ' ' || row[op] == ' ' {
			t.Errorf("wide %v: OPERATION is not at column %d:\n%s\n%s", o.wide, op, lines[0], row)
		}
	}
}

// Every column of cluster text has a bound; the plugin's own words
// (verdict, age, event type) need none.
func TestEveryColumnHasABound(t *testing.T) {
	h := header(tableOptions{wide: true, namespace: true, context: true, events: true})
	for _, c := range h {
		if _, ok := columnWidths[c]; !ok && c != "VERDICT" && c != "AGE" && c != "EVENT" {
			t.Errorf("column %s has no bound in columnWidths", c)
		}
	}
	for c := range columnWidths {
		if !slices.Contains(h, c) {
			t.Errorf("columnWidths names %s, which is no column", c)
		}
	}
}

// docs/output.md's table of bounds is columnWidths.
func TestDocsListTheColumnBounds(t *testing.T) {
	b, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z][A-Z ,]+?)(?:, a context's error)? \| (\d+|none) \|`).FindAllStringSubmatch(string(b), -1) {
		for _, c := range strings.Split(m[1], ", ") {
			if m[2] != "none" {
				documented[c], _ = strconv.Atoi(m[2])
			}
		}
	}
	if !maps.Equal(documented, columnWidths) {
		t.Errorf("docs/output.md lists the bounds\n%v\nthe table has\n%v", documented, columnWidths)
	}
}
