package cmd

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
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
