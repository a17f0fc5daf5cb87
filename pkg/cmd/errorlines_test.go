package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
)

// cobra's messages keep their lines, as kubectl prints them.
func TestCobraErrorKeepsItsLines(t *testing.T) {
	res := captf(t, nil, "lock")
	want := "error: unknown command \"lock\" for \"kubectl captf\"\n\nDid you mean this?\n\tlocks\n\tunlock\n"
	if res.code != ExitError || res.err != want {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", res.code, res.err, want)
	}
}

// A server's message stays on its line, newlines included: it cannot
// fake a line of the plugin's output.
func TestServerMessageStaysOnItsLine(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Verb == "get" && r.Resource == "leases" },
		apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lock-tfstate-default-x",
			errors.New("RBAC says no\nerror: all locks cleared"))))
	res := captf(t, f, "explain", "lease/lock-tfstate-default-x", "-n", "infra")
	if res.code != ExitError || strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, `RBAC says no\nerror: all locks cleared`) {
		t.Errorf("exit %d, stderr %q; want one line with the server's newline escaped", res.code, res.err)
	}
}

// With no kubeconfig anywhere, the error says so and where one was
// looked for, in one line, before any request.
func TestNoKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, args := range [][]string{{"locks", "-A"}, {"explain", "terraformcluster/demo"}, {"unlock", "--all-stale", "-A"}} {
		res := captf(t, nil, append(args, "--cache-dir", t.TempDir())...)
		if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 ||
			!strings.HasPrefix(res.err, "error: no kubeconfig was found: KUBECONFIG="+missing+" names no file that exists") ||
			!strings.Contains(res.err, "in-cluster") || strings.Contains(res.err, "8080") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, res.code, res.out, res.err)
		}
	}
	// --server is a configuration.
	res := captf(t, nil, "locks", "-A", "--server", "https://127.0.0.1:1", "--cache-dir", t.TempDir())
	if strings.Contains(res.err, "no kubeconfig") {
		t.Errorf("with --server: %q", res.err)
	}
}

// An error of a command that ran is printed escaped whole, on one line,
// whatever error type carries the cluster's text; cobra's own errors,
// which come before a command runs, keep their lines (review29 F3).
func TestCommandErrorIsOneLine(t *testing.T) {
	var b bytes.Buffer
	printError(&b, &commandError{fmt.Errorf("reading: %w", errors.New("Object 'Kind' is missing in '{\n\"error: faked\":1}'"))})
	if got, want := b.String(), "error: reading: Object 'Kind' is missing in '{\\n\"error: faked\":1}'\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.Reset()
	printError(&b, errors.New("unknown command \"lock\" for \"kubectl captf\"\n\nDid you mean this?\n\tlocks\n"))
	if strings.Count(b.String(), "\n") != 4 {
		t.Errorf("cobra's lines were not kept: %q", b.String())
	}
}
