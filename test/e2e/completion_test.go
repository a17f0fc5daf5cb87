package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// pathWithPlugin is PATH with the built plugin (and the shim, once
// installed) first, as a user's PATH has them.
func pathWithPlugin() string {
	return binDir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// installShim puts the repository's kubectl_complete-captf beside the
// built plugin, as the README tells users to.
func installShim(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "kubectl_complete-captf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "kubectl_complete-captf"), b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// withEnv is the environment with the given variables replaced.
func withEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := vars[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// kubectlComplete runs `kubectl __complete captf args...`, as the shell
// does for `kubectl captf <TAB>`, and returns the completions (without
// their descriptions) and the directive line.
func kubectlComplete(t *testing.T, path string, args ...string) ([]string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The real kubectl completes a plugin's arguments (1.26 and later)
	// through the kubectl_complete-<plugin> shim on PATH.
	cmd := exec.CommandContext(ctx, needKubectl(t), append([]string{"__complete", "captf"}, args...)...)
	cmd.Env = withEnv(map[string]string{"PATH": path, "KUBECONFIG": bed.Kubeconfig})
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl __complete captf %q: %v\n%s%s", args, err, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, lines[len(lines)-1]
}

// `kubectl captf <TAB>` through kubectl and the shim: a subcommand, a
// flag value, a namespace, a context and an object name.
func TestCompletionThroughKubectl(t *testing.T) {
	installShim(t)
	const ns = "completion-e2e"
	newObject(t, ns, object.TerraformCluster, "alpha")
	newObject(t, ns, object.TerraformMachine, "web-1")

	for _, tc := range []struct {
		args []string
		has  []string
		not  []string
	}{
		{args: []string{"ex"}, has: []string{"explain"}, not: []string{"locks", "unlock"}},
		{args: []string{""}, has: []string{"locks", "explain", "unlock", "version", "completion"}},
		{args: []string{"locks", "-o", ""}, has: []string{"json", "yaml", "wide", "name"}},
		{args: []string{"locks", "--color", ""}, has: []string{"auto", "always", "never"}},
		{args: []string{"-n", ""}, has: []string{ns, "default", "kube-system"}},
		{args: []string{"locks", "-n", "completion-"}, has: []string{ns}, not: []string{"default"}},
		{args: []string{"--context", ""}, has: []string{"testbed"}},
		{args: []string{"unlock", "--context", "test"}, has: []string{"testbed"}},
		{args: []string{"--cluster", ""}, has: []string{"testbed"}},
		{args: []string{"locks", "--contexts", "te"}, has: []string{"testbed"}},
		{args: []string{"explain", "-n", ns, "terraformcluster/"}, has: []string{"terraformcluster/alpha"}, not: []string{"terraformmachine/web-1"}},
		{args: []string{"explain", "-n", ns, "terraformmachine/"}, has: []string{"terraformmachine/web-1"}},
		{args: []string{"unlock", "-n", ns, ""}, has: []string{"lease/", "terraformcluster/", "terraformmachine/", "terraformmachinepool/"}},
	} {
		got, directive := kubectlComplete(t, pathWithPlugin(), tc.args...)
		for _, want := range tc.has {
			if !slices.Contains(got, want) {
				t.Errorf("kubectl captf %s<TAB>: no %q in %q", strings.Join(tc.args, " "), want, got)
			}
		}
		for _, bad := range tc.not {
			if slices.Contains(got, bad) {
				t.Errorf("kubectl captf %s<TAB>: %q in %q", strings.Join(tc.args, " "), bad, got)
			}
		}
		// kubectl passes the plugin's directive through: never files.
		if !strings.HasPrefix(directive, ":") || directive == ":0" {
			t.Errorf("kubectl captf %s<TAB>: directive %q", strings.Join(tc.args, " "), directive)
		}
	}

	// The shim is what makes it work: with the plugin on PATH but not the
	// shim, kubectl completes the plugin's name and nothing after it.
	noShim := t.TempDir()
	if err := os.Symlink(plugin, filepath.Join(noShim, "kubectl-captf")); err != nil {
		t.Fatal(err)
	}
	path := noShim + string(os.PathListSeparator) + os.Getenv("PATH")
	if got, _ := kubectlComplete(t, path, "explain", "-n", ns, "terraformcluster/"); len(got) != 0 {
		t.Errorf("without the shim: %q", got)
	}
	if got, _ := kubectlComplete(t, path, "ex"); len(got) != 0 {
		t.Errorf("without the shim: %q", got)
	}
}
