package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/k9s"
)

// runK9sPlugin runs an entry of docs/k9s/captf.yaml as k9s does for the
// selected row: its args with k9s's variables substituted, its command
// run on them without a shell, with kubectl (and the plugin beside it) on
// PATH. k9s was started with --kubeconfig (so KUBECONFIG is not in its
// environment; its $KUBECONFIG variable carries it) and a stdin that is
// no terminal, so less passes the output through.
func runK9sPlugin(t *testing.T, p k9s.Plugin, env k9s.Env) result {
	t.Helper()
	cmd := p.Cmd(env)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = withEnv(map[string]string{"PATH": pathWithPlugin(), "KUBECONFIG": "", "NO_COLOR": "", "LESS": "FRX"})
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
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
// real object's row and on a lock Lease's row: explain says the verdict,
// the dry run writes nothing, unlock --confirm clears the stale lock.
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

	for i, rw := range rows {
		// A stale lock: its holder is the object's own runner pod, gone.
		holder := "root@" + runner.JobName(rw.ref.Kind, rw.ref.Name, "apply", 1, "abc123") + "-x7k2p"
		syntheticLock(t, rw.ref, fmt.Sprintf("5a5a5a5a-0000-4000-8000-%012d", i), holder, nil)

		var explain, dryRun, confirm *k9s.Plugin
		for _, name := range plugins.Names() {
			p := plugins.Plugins[name]
			if !slices.Contains(p.Scopes, rw.scope) {
				continue
			}
			switch s := p.Args[1]; {
			case strings.Contains(s, "captf explain "):
				explain = &p
			case strings.Contains(s, "captf unlock ") && strings.Contains(s, "--confirm"):
				confirm = &p
			case strings.Contains(s, "captf unlock "):
				dryRun = &p
			}
		}
		if explain == nil || dryRun == nil || confirm == nil {
			t.Fatalf("view %s: explain %v, dry run %v, confirm %v", rw.scope, explain, dryRun, confirm)
		}
		what := rw.scope + "/" + rw.env["NAME"]

		res := runK9sPlugin(t, *explain, rw.env)
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
