package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// cobra's messages keep their lines, as kubectl prints them.
func TestErrorKeepsCobrasLines(t *testing.T) {
	res := captf(t, bed.Kubeconfig, "lock")
	want := "error: unknown command \"lock\" for \"kubectl captf\"\n\nDid you mean this?\n\tlocks\n\tunlock\n"
	if res.code != 1 || res.out != "" || res.err != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and\n%s", res.code, res.out, res.err, want)
	}
}

// A message the cluster writes, here a refusal with a newline in it as an
// authorizer, an aggregated API server or a webhook may send, stays on
// the error's one line: it cannot fake a line of the plugin's output.
func TestServerMessageCannotFakeALine(t *testing.T) {
	const ns = "errorlines"
	newObject(t, ns, object.TerraformCluster, "a")
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/leases") {
			return false
		}
		st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
			Message: "leases is forbidden: not today\nerror: every lock was cleared\x1b[2K"}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(st)
		return true
	})
	res := captf(t, kc, "locks")
	if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: ") ||
		!strings.Contains(res.err, `not today\nerror: every lock was cleared^[[2K`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one error line with the server's newline escaped", res.code, res.out, res.err)
	}
}

// With no kubeconfig anywhere, every command says so and where it looked,
// in one line, and sends no request (to the default localhost:8080).
func TestNoKubeconfigSaysWhereItLooked(t *testing.T) {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "KUBECONFIG" && k != "HOME" && !strings.HasPrefix(k, "KUBERNETES_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	for _, args := range [][]string{{"locks", "-A"}, {"explain", "terraformcluster/demo"}, {"unlock", "terraformcluster/demo"}} {
		cmd := exec.Command(plugin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: %v", args, err)
		}
		checkRace(t, cmd.Process.Pid, errb.String())
		want := "error: no kubeconfig was found: KUBECONFIG is not set and " + filepath.Join(home, ".kube", "config") + " does not exist, and this is not a pod"
		if ee.ExitCode() != 1 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.HasPrefix(errb.String(), want) ||
			!strings.Contains(errb.String(), "in-cluster") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line starting %q", args, ee.ExitCode(), out.String(), errb.String(), want)
		}
	}
}

// A body a library quotes in its error, here a TerraformCluster answered
// without its kind (apimachinery quotes the whole body), stays on the
// error's one line: every error of a command that ran is escaped whole,
// whatever error type carries the cluster's text (review29 F3).
func TestQuotedBodyCannotFakeALine(t *testing.T) {
	const ns = "errorlines-body"
	newObject(t, ns, object.TerraformCluster, "a")
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/terraformclusters/a") {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{\"apiVersion\":\"infrastructure.cluster.x-k8s.io/v1alpha1\",\n\"error: every lock was cleared\":1}"))
		return true
	})
	res := captf(t, kc, "explain", "terraformcluster/a")
	if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one error line", res.code, res.out, res.err)
	}
}
