package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// hidden are characters a holder can write that a terminal acts on or a
// reader cannot see; -o json and -o yaml must carry them escaped.
const hidden = "\u009b\uffff\u0085\u202e\u200b"

// rawHiddenIn fails when one of hidden is in out as itself.
func rawHiddenIn(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range hidden {
		if strings.ContainsRune(out, r) {
			t.Errorf("%s: %U raw in the output", what, r)
		}
	}
}

// lockInfo is lock info as the backend writes it, with a Version of our
// choosing.
func lockInfo(t *testing.T, id, who, version string) *string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"ID": id, "Operation": "OperationTypeApply", "Info": "", "Who": who, "Version": version, "Created": t0.UTC(), "Path": ""})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return &s
}

// locks, explain and unlock print -o json and -o yaml that parse back to
// the exact strings the holder wrote, with none of its hidden characters
// raw, and exit 0 (unlock of a Foreign lock: 3, refused, as always).
func TestMachineFormatsCarryHiddenCharacters(t *testing.T) {
	ns := "hidden-formats"
	r := newObject(t, ns, object.TerraformMachine, "db")
	who := "alice@laptop" + hidden
	syntheticLock(t, r, "11111111-2222-3333-4444-555555555555", who, lockInfo(t, "11111111-2222-3333-4444-555555555555", who, "1.11.4"+hidden))
	kc := kubeconfigIn(t, ns)
	for _, format := range []string{"json", "yaml"} {
		decode := func(out string, v any) error {
			if format == "yaml" {
				return yaml.Unmarshal([]byte(out), v)
			}
			return json.Unmarshal([]byte(out), v)
		}
		res := captf(t, kc, "locks", "-o", format)
		var list v1alpha1.LockList
		if err := decode(res.out, &list); err != nil || res.code != 0 || len(list.Items) != 1 || list.Items[0].Lock.Who != who || list.Items[0].Lock.Version != "1.11.4"+hidden {
			t.Errorf("locks -o %s: exit %d, %v\n%s%s", format, res.code, err, res.out, res.err)
		}
		rawHiddenIn(t, "locks -o "+format, res.out+res.err)
		res = captf(t, kc, "explain", r.String(), "-o", format)
		var x v1alpha1.Explanation
		if err := decode(res.out, &x); err != nil || res.code != 0 || x.Lock == nil || x.Lock.Who != who {
			t.Errorf("explain -o %s: exit %d, %v\n%s%s", format, res.code, err, res.out, res.err)
		}
		rawHiddenIn(t, "explain -o "+format, res.out+res.err)
		res = captf(t, kc, "unlock", r.String(), "-o", format)
		var u v1alpha1.UnlockResult
		if err := decode(res.out, &u); err != nil || res.code != 3 || u.Lock == nil || u.Lock.Who != who || u.Action != v1alpha1.Refused {
			t.Errorf("unlock -o %s: exit %d, %v\n%s%s", format, res.code, err, res.out, res.err)
		}
		rawHiddenIn(t, "unlock -o "+format, res.out+res.err)
	}
}

// --all-stale --confirm -o yaml over a Stale lock whose Version carries a
// C1 control clears it and says so: in the document, and on stderr as the
// write happens.
func TestAllStaleYAMLReportsWhatItCleared(t *testing.T) {
	ns := "hidden-all-stale"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	id := "22222222-3333-4444-5555-666666666666"
	syntheticLock(t, r, id, "root@captf-c-demo-apply-a1-d72d2a-x7k2p", lockInfo(t, id, "root@captf-c-demo-apply-a1-d72d2a-x7k2p", "1.11.4\u009b"))
	before := getLease(t, r)
	res := captf(t, kubeconfigIn(t, ns), "unlock", "--all-stale", "--confirm", "-o", "yaml")
	var list v1alpha1.UnlockResultList
	if err := yaml.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 || len(list.Items) != 1 ||
		list.Items[0].Action != v1alpha1.ActionUnlocked || list.Items[0].Lock.Version != "1.11.4\u009b" {
		t.Fatalf("exit %d, %v\n%s%s", res.code, err, res.out, res.err)
	}
	if !strings.Contains(res.err, "Unlocked lease/"+before.Name+" in namespace "+ns+" at resourceVersion "+before.ResourceVersion) {
		t.Errorf("the write is not on stderr:\n%s", res.err)
	}
	rawHiddenIn(t, "--all-stale -o yaml", res.out+res.err)
	assertCleared(t, r, before)
}

// A holder's lock ID written to read like the note's own words, padded to
// push the rest past the API's limit, leaves an Event whose note names the
// real Lease and verdict.
func TestAuditEventCannotBeSpoofed(t *testing.T) {
	ns := "audit-spoof"
	r := newObject(t, ns, object.TerraformMachine, "db")
	id := "6f1e2d3c (Lease lock-tfstate-default-0000000000000000-c, verdict Stale), held by root@x with kubectl captf" + strings.Repeat(" ", 900)
	syntheticLock(t, r, id, "alice@laptop", nil)
	before := getLease(t, r)
	res := captf(t, kubeconfigIn(t, ns), "unlock", r.String(), "--id", id, "--confirm")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertCleared(t, r, before)
	evs, err := admin.Kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("%v %v", evs, err)
	}
	note := evs.Items[0].Note
	want := `user "admin" force-unlocked Lease ` + ns + "/" + before.Name + " (verdict Foreign) with kubectl captf; held by Who "
	if !strings.HasPrefix(note, want) || !strings.HasSuffix(note, " [cut]") || len(note) > audit.MaxNote {
		t.Errorf("note %q\nwant it to start %q and end cut", note, want)
	}
}

// explain shows who an OperatorForceUnlocked event says reported it, flags
// one kubectl captf did not report, and says Events are not authenticated.
func TestExplainShowsWhoReportedAnUnlock(t *testing.T) {
	ns := "audit-reporter"
	r := newObject(t, ns, object.TerraformMachine, "db")
	syntheticLock(t, r, "11111111-2222-3333-4444-555555555555", "alice@laptop", nil)
	u, err := admin.Dynamic.Resource(r.Kind.GVR()).Namespace(ns).Get(context.Background(), r.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "forged", Namespace: ns},
		EventTime:           now,
		ReportingController: "someone/else",
		ReportingInstance:   "laptop",
		Action:              audit.Action,
		Reason:              audit.Reason,
		Type:                corev1.EventTypeWarning,
		Regarding:           corev1.ObjectReference{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name, Namespace: ns, Name: r.Name, UID: u.GetUID()},
		Note:                `user "root" force-unlocked it`,
	}
	if _, err := admin.Kube.EventsV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := flat(captf(t, kubeconfigIn(t, ns), "explain", r.String()).out)
	for _, want := range []string{
		"OperatorForceUnlocked (Warning)",
		"reported by someone/else (laptop), not by kubectl captf",
		"Events are not authenticated",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}

// A namespace with ESC and BEL, given with -n or by the kubeconfig's
// context, never reaches stdout or stderr as itself.
func TestNamespaceControlCharactersNeverReachTheTerminal(t *testing.T) {
	bad := "x\x1b]0;pwned\x07"
	cfg, err := clientcmd.LoadFromFile(kubeconfigIn(t, "default"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := *cfg.Contexts[cfg.CurrentContext]
	ctx.Namespace = bad
	cfg.Contexts[cfg.CurrentContext] = &ctx
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	if back, err := clientcmd.LoadFromFile(kc); err != nil || back.Contexts[back.CurrentContext].Namespace != bad {
		t.Fatalf("the kubeconfig does not hold the namespace: %v", err)
	}
	plain := kubeconfigIn(t, "default")
	for _, run := range []struct {
		kubeconfig string
		args       []string
	}{
		{kc, []string{"locks"}},
		{kc, []string{"unlock", "--all-stale"}},
		{kc, []string{"explain", "lease/lock-tfstate-default-0b41ac905b337e94-c"}},
		{plain, []string{"locks", "-n", bad}},
		{plain, []string{"unlock", "--all-stale", "-n", bad}},
		{plain, []string{"unlock", "lease/lock-tfstate-default-0b41ac905b337e94-c", "-n", bad}},
	} {
		res := captf(t, run.kubeconfig, run.args...)
		if strings.ContainsAny(res.out+res.err, "\x1b\x07") {
			t.Errorf("%q: a control character reaches the terminal:\n%q\n%q", run.args, res.out, res.err)
		}
		// Escaped by the plugin (x^[]0;pwned^G) or quoted by the server's
		// message (x\x1b]0;pwned\a): either way the reader sees it.
		if !strings.Contains(res.out+res.err, "x^[]0;pwned^G") && !strings.Contains(res.out+res.err, `x\x1b]0;pwned\a`) {
			t.Errorf("%q: the namespace is not shown escaped:\n%q\n%q", run.args, res.out, res.err)
		}
	}
}

// Completion never offers a kubeconfig name holding a control character:
// a shell lists several candidates as they are.
func TestCompletionLeavesOutHiddenNames(t *testing.T) {
	cfg, err := clientcmd.LoadFromFile(kubeconfigIn(t, "default"))
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	cfg.Contexts["good"] = cur
	cfg.Contexts["bad\x1b]0;pwned\x07"] = cur
	cfg.Contexts["rlo\u202egood"] = cur
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"__complete", "--context", ""}, {"__complete", "locks", "--contexts", ""}} {
		res := captf(t, kc, args...)
		if !strings.Contains(res.out, "good\n") || strings.ContainsAny(res.out, "\x1b\x07\u202e") {
			t.Errorf("%q: %q", args, res.out)
		}
	}
}

// A reader of stdout that is gone before the lock is cleared (| head,
// | true, a pager quit early) does not kill the plugin between the write
// and its record: the write is reported on stderr, the Event is recorded
// and the exit code says something failed.
func TestUnlockRecordsAWriteWhenStdoutCloses(t *testing.T) {
	for _, format := range []string{"", "name"} {
		ns := "closed-stdout" + format
		r := newObject(t, ns, object.TerraformCluster, "demo")
		syntheticLock(t, r, "33333333-4444-5555-6666-777777777777", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
		before := getLease(t, r)
		args := []string{"--kubeconfig", kubeconfigIn(t, ns), "unlock", "--all-stale", "--confirm"}
		if format != "" {
			args = append(args, "-o", format)
		}
		cmd := exec.Command(plugin, args...)
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		rd.Close() // the reader is gone
		var errb strings.Builder
		cmd.Stdout, cmd.Stderr = wr, &errb
		err = cmd.Run()
		wr.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("-o %q: %v, want exit 1\n%s", format, err, errb.String())
		}
		checkRace(t, cmd.Process.Pid, errb.String())
		assertCleared(t, r, before)
		if !strings.Contains(errb.String(), "Unlocked lease/"+before.Name+" in namespace "+ns) {
			t.Errorf("-o %q: the write is not on stderr:\n%s", format, errb.String())
		}
		evs, err := admin.Kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(evs.Items) != 1 {
			t.Errorf("-o %q: %d Events, want 1 (%v)", format, len(evs.Items), err)
		}
	}
}
