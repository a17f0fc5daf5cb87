package cmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// An unreachable server is one "error:" line and exit 1 for every
// command, those that resolve their target through discovery included:
// the libraries' own log lines of each failed attempt stay out of it
// unless -v asks for them.
func TestUnreachableServerIsOneLine(t *testing.T) {
	kc := testKubeconfig(t, "https://127.0.0.1:1")
	lease := object.LockLeaseName(object.DefaultWorkspace, "d72d2a")
	for _, args := range [][]string{
		{"locks", "-A"},
		{"locks", "-w", "-n", "infra"},
		{"explain", "lease/" + lease, "-n", "infra"},
		{"explain", "terraformcluster/demo", "-n", "infra"},
		{"unlock", "lease/" + lease, "-n", "infra"},
		{"unlock", "--all-stale", "-A"},
	} {
		done := make(chan ran, 1)
		go func() {
			done <- captf(t, nil, append(args, "--kubeconfig", kc, "--cache-dir", t.TempDir())...)
		}()
		select {
		case res := <-done:
			if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: ") ||
				!strings.Contains(res.err, "127.0.0.1:1") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one error line naming the server", args, res.code, res.out, res.err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%v still runs a minute after the server refused it", args)
		}
	}
	// -v still shows them.
	res := captf(t, nil, "explain", "lease/"+lease, "-n", "infra", "--kubeconfig", kc, "--cache-dir", t.TempDir(), "-v=1")
	if res.code != ExitError || strings.Count(res.err, "\n") < 2 {
		t.Errorf("with -v=1: exit %d, stderr %q; want the library's lines before the error", res.code, res.err)
	}
	res = captf(t, nil, "explain", "lease/"+lease, "-n", "infra", "--kubeconfig", kc, "--cache-dir", t.TempDir())
	if strings.Count(res.err, "\n") != 1 {
		t.Errorf("-v=1 of an earlier run stays on: stderr %q", res.err)
	}
}

// A refused read of the target names the permission the plugin needs, as
// every read of the reading layer does.
func TestTargetReadRefused(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Verb == "get" && r.Resource == "leases" },
		apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lock-tfstate-default-x", errors.New("RBAC says no"))))
	for _, cmd := range []string{"explain", "unlock"} {
		res := captf(t, f, cmd, "lease/lock-tfstate-default-x", "-n", "infra")
		want := `error: cannot get leases.coordination.k8s.io "lock-tfstate-default-x" in namespace "infra" (the plugin needs get on leases.coordination.k8s.io): `
		if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, want) || !strings.Contains(res.err, "RBAC says no") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line starting %q", cmd, res.code, res.out, res.err, want)
		}
	}
}

// A refused discovery is no read of the target: its error is passed on
// as the server gave it, not dressed as one.
func TestTargetDiscoveryRefused(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	srv.Intercept(fakeapi.Fail(func(r fakeapi.Request) bool { return r.Resource == "" && strings.HasPrefix(r.Path, "/api") },
		apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("discovery says no"))))
	// demo exists: without the refusal, explain would succeed.
	res := captf(t, f, "explain", "terraformcluster/demo", "-n", "infra")
	if res.code != ExitError || strings.Count(res.err, "\n") != 1 || strings.Contains(res.err, "the plugin needs") || strings.Contains(res.err, `""`) {
		t.Errorf("exit %d, stderr %q", res.code, res.err)
	}
}

// explain and unlock end at once on a signal while they resolve their
// target on a server that takes connections and never answers: nothing is
// written before, and cli-runtime's builder would wait out its timeouts.
func TestSignalEndsTargetResolution(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); srv.Close() })
	kc := testKubeconfig(t, srv.URL)
	for _, args := range [][]string{{"explain", "terraformcluster/demo"}, {"unlock", "terraformcluster/demo", "--confirm"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(500*time.Millisecond, func() { cancel(interrupted{syscall.SIGINT}) })
		s, _, out, errOut := genericiooptions.NewTestIOStreams()
		done := make(chan int, 1)
		go func() {
			done <- execute(ctx, s, append(args, "--kubeconfig", kc, "--insecure-skip-tls-verify", "--cache-dir", t.TempDir()), nil)
		}()
		select {
		case code := <-done:
			if code != 130 || out.Len() != 0 {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 130 and nothing printed", args, code, out, errOut)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v still runs 10 s after SIGINT", args)
		}
	}
}
