package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/k9s"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// runK9sPlugin runs an entry of docs/k9s/captf.yaml as k9s does for the
// selected row: its args with k9s's variables substituted, its command
// run on them without a shell, with kubectl (and the plugin beside it) on
// PATH. k9s was started with --kubeconfig (so KUBECONFIG is not in its
// environment; its $KUBECONFIG variable carries it) and a stdin that is
// no terminal, so less passes the output through.
func runK9sPlugin(t *testing.T, p k9s.Plugin, env k9s.Env) result {
	t.Helper()
	return runK9sPluginTyped(t, p, env, "")
}

// runK9sPluginTyped is runK9sPlugin with what the user types at the
// terminal k9s hands to a foreground command, one answer a line.
func runK9sPluginTyped(t *testing.T, p k9s.Plugin, env k9s.Env, typed string) result {
	t.Helper()
	cmd := p.Cmd(env)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = withEnv(map[string]string{"PATH": pathWithPlugin(), "KUBECONFIG": "", "NO_COLOR": "", "LESS": "FRX"})
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(typed), &out, &errb
	err := cmd.Run()
	r := result{out: out.String(), err: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", p.Command, err)
	}
	return r
}

// Every entry of the shipped k9s plugins file, run as k9s runs it on a
// real object's row and on a lock Lease's row: the overview lists every
// lock of every namespace, explain says the verdict, the dry run writes
// nothing, unlock --confirm clears the stale lock, and the entry that asks
// for the lock ID cancels on Enter, refuses a wrong ID, clears a
// workstation's lock with its ID and a live runner's only when force is
// typed too. An entry no view runs fails the test.
func TestK9sPlugins(t *testing.T) {
	plugins, err := k9s.Load()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kctx := raw.CurrentContext
	if kctx == "" {
		t.Fatal("the test-bed's kubeconfig has no current context")
	}
	const ns = "k9s-plugins"
	type row struct {
		scope string // the k9s view
		ref   object.Ref
		env   k9s.Env
	}
	var rows []row
	for _, k := range object.Kinds {
		r := newObject(t, ns, k, "sel-"+k.Code)
		g := k.GVR()
		rows = append(rows, row{k.Resource, r, k9s.ObjectEnv(kctx, "testbed", "admin", bed.Kubeconfig, g.Group, g.Version, g.Resource, ns, r.Name)})
	}
	leaseObj := newObject(t, ns, object.TerraformMachine, "by-lease")
	rows = append(rows, row{"leases", leaseObj, k9s.ObjectEnv(kctx, "testbed", "admin", bed.Kubeconfig, "coordination.k8s.io", "v1", "leases", ns,
		object.LockLeaseName("default", leaseObj.Suffix()))})

	// A lock in another namespace, which only the overview (-A) shows.
	elsewhere := newObject(t, ns+"-other", object.TerraformCluster, "elsewhere")
	syntheticLock(t, elsewhere, "6b6b6b6b-0000-4000-8000-000000000000", "alice@laptop", nil)

	ran := map[string]bool{}
	for i, rw := range rows {
		// A stale lock: its holder is the object's own runner pod, gone.
		holder := "root@" + runner.JobName(rw.ref.Kind, rw.ref.Name, "apply", 1, "abc123") + "-x7k2p"
		syntheticLock(t, rw.ref, fmt.Sprintf("5a5a5a5a-0000-4000-8000-%012d", i), holder, nil)

		var overview, explain, dryRun, confirm, withID *k9s.Plugin
		for _, name := range plugins.Names() {
			p := plugins.Plugins[name]
			if !slices.Contains(p.Scopes, rw.scope) {
				continue
			}
			ran[name] = true
			switch s := p.Args[1]; {
			case strings.Contains(s, "captf locks -A "):
				overview = &p
			case strings.Contains(s, "captf explain "):
				explain = &p
			case strings.Contains(s, "read -r captf_id"):
				withID = &p
			case strings.Contains(s, "captf unlock ") && strings.Contains(s, "--confirm"):
				confirm = &p
			case strings.Contains(s, "captf unlock "):
				dryRun = &p
			default:
				t.Errorf("%s: an entry this test does not run: %q", name, s)
			}
		}
		if overview == nil || explain == nil || dryRun == nil || confirm == nil || withID == nil {
			t.Fatalf("view %s: overview %v, explain %v, dry run %v, confirm %v, with ID %v", rw.scope, overview, explain, dryRun, confirm, withID)
		}
		what := rw.scope + "/" + rw.env["NAME"]
		lease := object.LockLeaseName("default", rw.ref.Suffix())

		// The overview: every namespace, wide, this lock among them.
		res := runK9sPlugin(t, *overview, rw.env)
		if res.code != 0 || !strings.HasPrefix(res.out, "NAMESPACE ") || !strings.Contains(res.out, "LOCK ID") || !strings.Contains(res.out, "RUNNER END") ||
			!regexp.MustCompile(`(?m)^`+ns+` +`+strings.ToLower(rw.ref.Kind.Name)+`/`+rw.ref.Name+` +Stale .* `+lease+` `).MatchString(res.out) ||
			!regexp.MustCompile(`(?m)^`+ns+`-other +terraformcluster/elsewhere +Foreign `).MatchString(res.out) {
			t.Errorf("%s: locks overview (%s): exit %d\n%s%s", what, overview.ShortCut, res.code, res.out, res.err)
		}

		res = runK9sPlugin(t, *explain, rw.env)
		if res.code != 0 || !strings.Contains(res.out, "Verdict:") || !strings.Contains(flat(res.out), "Stale") || !strings.Contains(res.out, holder) {
			t.Errorf("%s: explain (%s): exit %d\n%s%s", what, explain.ShortCut, res.code, res.out, res.err)
		}

		before := getLease(t, rw.ref)
		res = runK9sPlugin(t, *dryRun, rw.env)
		if res.code != 0 || !strings.Contains(flat(res.out), "Dry run: nothing was written") || !strings.Contains(flat(res.out), "Verdict: Stale") {
			t.Errorf("%s: dry run (%s): exit %d\n%s%s", what, dryRun.ShortCut, res.code, res.out, res.err)
		}
		assertUnchanged(t, rw.ref, before)

		if !confirm.Confirm || !confirm.Dangerous {
			t.Errorf("%s: unlock --confirm runs without k9s asking", what)
		}
		res = runK9sPlugin(t, *confirm, rw.env)
		if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked: update Lease") {
			t.Errorf("%s: unlock --confirm (%s): exit %d\n%s%s", what, confirm.ShortCut, res.code, res.out, res.err)
		}
		assertCleared(t, rw.ref, before)

		// Shift-I on a workstation's lock: Enter cancels, a wrong ID is
		// refused, the ID shown clears it.
		if !withID.Confirm || !withID.Dangerous {
			t.Errorf("%s: unlock --id runs without k9s asking", what)
		}
		foreignID := fmt.Sprintf("6a6a6a6a-0000-4000-8000-%012d", i)
		relock(t, rw.ref, foreignID, "alice@laptop")
		before = getLease(t, rw.ref)
		for _, c := range []struct {
			typed string
			code  int
			says  string
		}{
			{"\n", 0, "Cancelled: nothing was written."},
			{"6a6a6a6a-0000-4000-8000-999999999999\n\n", 3, "Refused:"},
		} {
			res = runK9sPluginTyped(t, *withID, rw.env, c.typed)
			if out := flat(res.out); res.code != c.code || !strings.Contains(out, "Verdict: Foreign") || !strings.Contains(out, `lock ID "`+foreignID+`"`) ||
				!strings.Contains(out, "type its lock ID") || !strings.Contains(out, c.says) || !strings.HasSuffix(out, "Press Enter to return to k9s.") {
				t.Errorf("%s: unlock --id (%s), typed %q: exit %d, want %d and %q\n%s%s", what, withID.ShortCut, c.typed, res.code, c.code, c.says, res.out, res.err)
			}
			assertUnchanged(t, rw.ref, before)
		}
		res = runK9sPluginTyped(t, *withID, rw.env, foreignID+"\n\n")
		if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked: update Lease") || strings.Contains(res.out, "force") {
			t.Errorf("%s: unlock --id (%s) with the ID: exit %d\n%s%s", what, withID.ShortCut, res.code, res.out, res.err)
		}
		assertCleared(t, rw.ref, before)

		// A live runner's lock: the ID alone is not enough; typing force is.
		livePod := runner.JobName(rw.ref.Kind, rw.ref.Name, "apply", 2, "def456") + "-m3n4p"
		if _, err := admin.RunnerPod(context.Background(), rw.ref, livePod, "Running"); err != nil {
			t.Fatal(err)
		}
		liveID := fmt.Sprintf("7a7a7a7a-0000-4000-8000-%012d", i)
		relock(t, rw.ref, liveID, "root@"+livePod)
		before = getLease(t, rw.ref)
		res = runK9sPluginTyped(t, *withID, rw.env, liveID+"\nno\n\n")
		if out := flat(res.out); res.code != 3 || !strings.Contains(out, "Verdict: Live") || !strings.Contains(out, "Type force to clear it anyway") || !strings.Contains(out, "Refused:") {
			t.Errorf("%s: unlock --id (%s) of a live lock, force not typed: exit %d\n%s%s", what, withID.ShortCut, res.code, res.out, res.err)
		}
		assertUnchanged(t, rw.ref, before)
		res = runK9sPluginTyped(t, *withID, rw.env, liveID+"\nforce\n\n")
		if res.code != 0 || !strings.Contains(flat(res.out), "Unlocked: update Lease") {
			t.Errorf("%s: unlock --id (%s) of a live lock, force typed: exit %d\n%s%s", what, withID.ShortCut, res.code, res.out, res.err)
		}
		assertCleared(t, rw.ref, before)
	}
	for _, name := range plugins.Names() {
		if !ran[name] {
			t.Errorf("%s: no view of this test runs it (scopes %q)", name, plugins.Plugins[name].Scopes)
		}
	}

	// kubectl captf's exit code reaches k9s through the pager: an object
	// that does not exist fails the entry, as k9s reports a failed plugin.
	for _, name := range plugins.Names() {
		p := plugins.Plugins[name]
		if !slices.Contains(p.Scopes, "terraformclusters") || !strings.Contains(p.Args[1], "captf explain ") {
			continue
		}
		env := k9s.ObjectEnv(kctx, "testbed", "admin", bed.Kubeconfig, "", "", "terraformclusters", ns, "missing")
		if res := runK9sPlugin(t, p, env); res.code != 1 || !strings.Contains(res.out, "error: ") {
			t.Errorf("missing object: exit %d\n%s%s", res.code, res.out, res.err)
		}
	}
}

// relock makes r's lock Lease held again, by id with who, as the backend
// takes a free lock: an update of the Lease it left.
func relock(t *testing.T, r object.Ref, id, who string) {
	t.Helper()
	l := getLease(t, r)
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Spec.HolderIdentity = &id
	l.Annotations[inspect.AnnotationLock] = testbed.LockInfo(id, who, time.Now().Add(-time.Minute))
	if _, err := admin.Kube.CoordinationV1().Leases(r.Namespace).Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
