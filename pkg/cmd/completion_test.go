package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// testKubeconfig has three contexts, two clusters and two users; its
// clusters point at server.
func testKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: east
  cluster: {server: "` + server + `"}
- name: west
  cluster: {server: "` + server + `"}
users:
- name: admin
  user: {token: a}
- name: viewer
  user: {token: v}
contexts:
- name: dev
  context: {cluster: east, user: admin}
- name: prod
  context: {cluster: west, user: admin}
- name: prod-eu
  context: {cluster: west, user: viewer}
`
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// complete runs `__complete args...` through the root command, as the
// shells and kubectl's plugin completion do, and returns the completions
// (descriptions cut off) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out bytes.Buffer
	root, _ := newRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}}, nil)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	directive := lines[len(lines)-1]
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, directive
}

// noFileComp is cobra's directive line for ShellCompDirectiveNoFileComp.
const noFileComp = ":4"

func TestCompletionKubeconfigNames(t *testing.T) {
	kc := testKubeconfig(t, "https://127.0.0.1:1")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--context", ""}, []string{"dev", "prod", "prod-eu"}},
		{[]string{"--context", "pr"}, []string{"prod", "prod-eu"}},
		{[]string{"--context=pr"}, []string{"prod", "prod-eu"}},
		{[]string{"locks", "--context", "d"}, []string{"dev"}},
		{[]string{"--cluster", ""}, []string{"east", "west"}},
		{[]string{"explain", "--cluster", "w"}, []string{"west"}},
		{[]string{"--user", ""}, []string{"admin", "viewer"}},
		{[]string{"unlock", "--user", "v"}, []string{"viewer"}},
		{[]string{"locks", "--contexts", ""}, []string{"dev", "prod", "prod-eu"}},
		{[]string{"locks", "--contexts", "p"}, []string{"prod", "prod-eu"}},
		// A list: the last element completes after the ones given, which
		// are not offered again.
		{[]string{"locks", "--contexts", "dev,"}, []string{"dev,prod", "dev,prod-eu"}},
		{[]string{"locks", "--contexts", "prod,dev,p"}, []string{"prod,dev,prod-eu"}},
		{[]string{"locks", "--contexts=dev,prod"}, []string{"dev,prod", "dev,prod-eu"}},
		{[]string{"--context", "nope"}, nil},
	} {
		got, directive := complete(t, append([]string{"--kubeconfig", kc}, tc.args...)...)
		if !slices.Equal(got, tc.want) || directive != noFileComp {
			t.Errorf("%v: got %q %s, want %q %s", tc.args, got, directive, tc.want, noFileComp)
		}
	}
}

// The kubeconfig is the one every command reads: $KUBECONFIG too.
func TestCompletionKubeconfigFromEnv(t *testing.T) {
	t.Setenv("KUBECONFIG", testKubeconfig(t, "https://127.0.0.1:1"))
	if got, _ := complete(t, "--context", "prod-"); !slices.Equal(got, []string{"prod-eu"}) {
		t.Errorf("got %q", got)
	}
}

// An unreadable kubeconfig completes nothing, and no file names either.
func TestCompletionKubeconfigMissing(t *testing.T) {
	got, directive := complete(t, "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--context", "")
	if len(got) != 0 || directive != noFileComp {
		t.Errorf("got %q %s", got, directive)
	}
}

func TestCompletionNamespaces(t *testing.T) {
	var objs []runtime.Object
	for _, n := range []string{"default", "infra", "infra-dr", "team-a"} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	srv := fakeapi.New(t, objs...)
	kc := testKubeconfig(t, srv.URL())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-n", ""}, []string{"default", "infra", "infra-dr", "team-a"}},
		{[]string{"--namespace", "inf"}, []string{"infra", "infra-dr"}},
		{[]string{"explain", "-n", "t"}, []string{"team-a"}},
		{[]string{"-n", "x"}, nil},
	} {
		got, directive := complete(t, append([]string{"--kubeconfig", kc}, tc.args...)...)
		if !slices.Equal(got, tc.want) || directive != noFileComp {
			t.Errorf("%v: got %q %s, want %q %s", tc.args, got, directive, tc.want, noFileComp)
		}
	}
	// One list of the namespaces a TAB, and nothing else.
	if n, all := srv.Count("list", "namespaces"), len(srv.Requests()); n != 4 || all != 4 {
		t.Errorf("%d lists of namespaces in %d requests, want 4 in 4", n, all)
	}
	// A cluster that cannot be reached completes nothing.
	srv.Close()
	if got, directive := complete(t, "--kubeconfig", kc, "--request-timeout", "2s", "-n", ""); len(got) != 0 || directive != noFileComp {
		t.Errorf("unreachable cluster: got %q %s", got, directive)
	}
}

// TYPE/NAME arguments complete from the cluster: the type prefixes, then
// the objects of a kind, by metadata, or the lock Leases after "lease/".
func TestCompletionTargets(t *testing.T) {
	w := verdictsWorld()
	w.add(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-x", Namespace: w.ns}})
	f, srv := w.factory(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", ""}, []string{"lease/", "terraformcluster/", "terraformmachine/", "terraformmachinepool/"}},
		{[]string{"explain", "terraformmachine/"}, []string{"terraformmachine/db", "terraformmachine/web-1"}},
		// The shell keeps those that start with what was typed.
		{[]string{"unlock", "terraformcluster/d"}, []string{"terraformcluster/demo", "terraformcluster/free"}},
		// The lock Leases only, not CAPTF's run Leases.
		{[]string{"unlock", "lease/"}, []string{
			"lease/lock-tfstate-default-2f32fa8c86da1c86-m", "lease/lock-tfstate-default-63b6a266408c9e9e-mp",
			"lease/lock-tfstate-default-693ddee8b12cf355-m", "lease/lock-tfstate-default-757a6ceac8aaae20-c",
			"lease/lock-tfstate-default-d980a2553508a5e1-c",
		}},
		{[]string{"explain", "terraformcluster/demo", ""}, nil},
	} {
		res := captf(t, f, append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
		lines := strings.Split(strings.TrimSuffix(res.out, "\n"), "\n")
		var got []string
		for _, l := range lines[:len(lines)-1] {
			name, _, _ := strings.Cut(l, "\t")
			got = append(got, name)
		}
		slices.Sort(got)
		if res.code != 0 || !slices.Equal(got, tc.want) {
			t.Errorf("%q: exit %d, got %q, want %q", tc.args, res.code, got, tc.want)
		}
	}
	// The objects are listed by metadata only; nothing is written.
	for _, r := range srv.Requests() {
		if r.Group == object.Group && !strings.Contains(r.Accept, "as=PartialObjectMetadataList") {
			t.Errorf("%s %s in full (Accept %q)", r.Verb, r.Path, r.Accept)
		}
	}
	if w := writes(srv); len(w) != 0 {
		t.Errorf("completion writes %q", w)
	}
}

// The scripts are for the binary, kubectl-captf, not for the root's Use.
func TestCompletionScriptsNameTheBinary(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_kubectl-captf kubectl-captf",
		"zsh":        "#compdef kubectl-captf",
		"fish":       "complete -c kubectl-captf ",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-captf'",
	} {
		for _, extra := range [][]string{nil, {"--no-descriptions"}} {
			var out bytes.Buffer
			code := Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, append([]string{"completion", shell}, extra...))
			if code != 0 || !strings.Contains(out.String(), want) {
				t.Errorf("completion %s %v: exit %d, no %q in\n%.400s", shell, extra, code, want, out.String())
			}
			if strings.Contains(out.String(), "__start_captf") || strings.Contains(out.String(), "-c captf ") {
				t.Errorf("completion %s %v still names captf", shell, extra)
			}
		}
	}
	// Help keeps kubectl's name for the plugin, also after a script.
	var out bytes.Buffer
	root, _ := newRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, nil)
	root.SetOut(&out)
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if root.Name() != "captf" || !strings.HasPrefix(root.Commands()[0].CommandPath(), "kubectl captf ") {
		t.Errorf("root renamed: %q, %q", root.Name(), root.Commands()[0].CommandPath())
	}
	out.Reset()
	root.SetArgs([]string{"completion", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl_complete-captf", `kubectl-captf __complete "$@"`, "kubectl captf completion [command]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("completion --help lacks %q:\n%s", want, out.String())
		}
	}
}

// A kubeconfig name that kubectl's bash completion would expand, through
// compgen -W, into a command is never offered (review27 m2).
func TestCompletionLeavesOutExpandingNames(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: a}\ncontexts:\n" +
		"- name: ok\n  context: {cluster: c, user: u}\n" +
		"- name: \"$(touch /tmp/pwned)\"\n  context: {cluster: c, user: u}\n" +
		"- name: \"`id`\"\n  context: {cluster: c, user: u}\n" +
		"- name: \"a\\\\b\"\n  context: {cluster: c, user: u}\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--context", "--contexts"} {
		got, _ := complete(t, "--kubeconfig", kc, "locks", flag, "")
		if !slices.Equal(got, []string{"ok"}) {
			t.Errorf("%s: got %q, want only ok", flag, got)
		}
	}
}
