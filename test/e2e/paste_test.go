package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/shell"
)

// interactiveShells are the shells people paste into, as they run for a
// person: interactive, so with history expansion on, under a terminal.
var interactiveShells = []struct{ name, command string }{
	{"bash", "bash --norc --noprofile -i"},
	{"zsh", "zsh -i"},
	{"fish", "fish --no-config -i"},
}

// previousCommand is typed before each pasted line, so that a history
// reference (!!, !$, ^a^b) that escaped its quotes has something to expand
// to and changes the argv.
const previousCommand = "true prev-command"

// pasteInto types line into an interactive shell under a pseudo-terminal
// (script, from util-linux), after previousCommand, in a directory of its
// own whose fake kubectl records its argv (and fake clusterctl its name
// and argv). It returns that argv (nil when
// kubectl did not run) and the directory, where a file "pwned" is the sign
// that the line ran something else. kubectl, when not empty, is run by the
// fake for `kubectl captf ...` with the argv after "captf".
func pasteInto(t *testing.T, command, line, plugin string, env ...string) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "argv")
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > " + rec + "\n"
	if plugin != "" {
		fake += "[ \"$1\" = captf ] && shift && exec " + plugin + " \"$@\"\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// clusterctl's fake records its own name first, so that its argv is
	// told from kubectl's.
	clusterctl := "#!/bin/sh\nfor a in clusterctl \"$@\"; do printf '%s\\0' \"$a\"; done > " + rec + "\n"
	if err := os.WriteFile(filepath.Join(dir, "clusterctl"), []byte(clusterctl), 0o755); err != nil {
		t.Fatal(err)
	}
	// An empty .zshrc: zsh's first-run menu otherwise takes the input.
	if err := os.WriteFile(filepath.Join(dir, ".zshrc"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"script", strings.Fields(command)[0]} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: the pasted-command tests run every printed command in an interactive bash, zsh and fish under script(1) (Debian: bsdutils, zsh, fish; .ci/run installs them)", bin)
		}
	}
	cmd := exec.Command("script", "-qec", command, "/dev/null")
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "ZDOTDIR=" + dir, "PATH=" + dir + ":/usr/bin:/bin", "TERM=dumb"}, env...)
	cmd.Stdin = strings.NewReader(previousCommand + "\n" + line + "\nexit\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	b, err := os.ReadFile(rec)
	if os.IsNotExist(err) {
		return nil, dir
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), dir
}

// hostileIDs are lock IDs whose text an interactive shell expands unless
// it is single-quoted: history references, quick substitution, quotes.
var hostileIDs = []string{
	`'!#';touch pwned;#'`,
	`\';touch pwned;#`,
	`a\b\\`,
	"x==ls",
	"NUL",
	"abc!!def",
	"!!",
	"x!$y",
	"^prev^touch pwned^",
	`it's "quoted" $(touch pwned)`,
	"=touch",
	"~root",
}

// Every command unlock and explain print for a Foreign lock with a hostile
// ID, pasted into an interactive bash and zsh after a previous command,
// runs kubectl with exactly the argv the plugin built, and nothing else.
func TestPastedCommandsRunTheirArgvInInteractiveShells(t *testing.T) {
	ns := "paste-interactive"
	kc := kubeconfigIn(t, ns)
	for n, id := range hostileIDs {
		r := newObject(t, ns, object.TerraformMachine, fmt.Sprintf("m%d", n))
		syntheticLock(t, r, id, "alice@laptop", nil)
		// The argv the plugin built, as -o json gives it.
		res := captf(t, kc, "unlock", r.String(), "-o", "json")
		var u v1alpha1.UnlockResult
		if err := json.Unmarshal([]byte(res.out), &u); err != nil || len(u.Commands) != 1 {
			t.Fatalf("%q: %v\n%s%s", id, err, res.out, res.err)
		}
		want := u.Commands[0].Argv
		if !slices.Contains(want, id) || !slices.Contains(want, "--context") || !slices.Contains(want, kc) {
			t.Fatalf("%q: the command %q does not name the ID and the connection", id, want)
		}
		for _, args := range [][]string{{"unlock", r.String()}, {"explain", r.String()}} {
			out := captf(t, kc, args...).out
			assertTerminalSafe(t, id, out)
			var withID []string
			for _, c := range commands(out) {
				if strings.Contains(c, " --id ") {
					withID = append(withID, c)
				}
			}
			if len(withID) != 1 {
				t.Fatalf("%q %v: %d unlock commands with --id in\n%s", id, args, len(withID), out)
			}
			for _, sh := range interactiveShells {
				got, dir := pasteInto(t, sh.command, withID[0], "")
				if !slices.Equal(got, want[1:]) {
					t.Errorf("%s, %q %v: pasted\n%s\nran kubectl %q, want %q", sh.name, id, args, withID[0], got, want[1:])
				}
				if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
					t.Errorf("%s, %q %v: pasting ran part of the lock ID", sh.name, id, args)
				}
			}
		}
	}
}

// Advice computed with --kubeconfig and --context names them, and pasted
// into a shell whose own kubeconfig points elsewhere it reaches the
// cluster it was computed for: the printed --confirm clears the lock.
func TestPastedCommandReachesTheClusterItWasComputedFor(t *testing.T) {
	ns := "paste-cluster"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	syntheticLock(t, r, "11111111-2222-3333-4444-555555555555", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", nil)
	before := getLease(t, r)
	// prod: the test-bed under another context name, in a file the
	// pasting shell does not know.
	cfg, err := clientcmd.LoadFromFile(kubeconfigIn(t, ns))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts["prod"], cfg.CurrentContext = cfg.Contexts[cfg.CurrentContext], ""
	prod := filepath.Join(t.TempDir(), "prod.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, prod); err != nil {
		t.Fatal(err)
	}
	// The shell's own kubeconfig: a current context on a dead server.
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.kubeconfig")
	dead := "apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: x, user: {}}]\ncontexts: [{name: x, context: {cluster: x, user: x, namespace: " + ns + "}}]\ncurrent-context: x\n"
	if err := os.WriteFile(elsewhere, []byte(dead), 0o600); err != nil {
		t.Fatal(err)
	}
	res := captf(t, prod, "--context", "prod", "unlock", "terraformcluster/demo")
	cmds := commands(res.out)
	if res.code != 0 || len(cmds) != 1 || !strings.Contains(flat(cmds[0]), "--kubeconfig "+prod+" --context prod unlock") {
		t.Fatalf("dry run: exit %d\n%s%s", res.code, res.out, res.err)
	}
	assertUnchanged(t, r, before)
	got, _ := pasteInto(t, interactiveShells[0].command, cmds[0], plugin, "KUBECONFIG="+elsewhere)
	if !slices.Contains(got, "--confirm") {
		t.Fatalf("pasted %q ran %q", cmds[0], got)
	}
	assertCleared(t, r, before)
}

// -o jsonpath writes the cluster's bytes as they are to a pipe, which is
// what scripts want, and escaped to a terminal, as the table does.
func TestTemplatesEscapeForATerminalOnly(t *testing.T) {
	ns := "jsonpath-terminal"
	r := newObject(t, ns, object.TerraformMachine, "db")
	who := "alice@\x1b]0;pwned\x07\u009b\u202e"
	syntheticLock(t, r, "11111111-2222-3333-4444-555555555555", who, nil)
	kc := kubeconfigIn(t, ns)
	for _, args := range [][]string{
		{"locks", "-o", "jsonpath={.items[0].lock.who}"},
		{"locks", "-o", "jsonpath", "--template={.items[0].lock.who}"},
		{"locks", "-o", "go-template={{(index .items 0).lock.who}}"},
		{"locks", "-o", "go-template", "--template={{(index .items 0).lock.who}}"},
	} {
		if res := captf(t, kc, args...); res.code != 0 || res.out != who {
			t.Errorf("%q to a pipe: exit %d, %q, want %q", args, res.code, res.out, who)
		}
		line, err := shell.Line(append([]string{plugin, "--kubeconfig", kc}, args...), nil)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("script", "-qec", line, "/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got := strings.TrimRight(string(out), "\r\n"); got != escape.Text(who) {
			t.Errorf("%q to a terminal: %q, want %q", args, got, escape.Text(who))
		}
	}
}
