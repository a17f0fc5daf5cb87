package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/test/testbed"
)

// twoContexts is a kubeconfig with the test-bed ("up", namespace verdicts)
// and a cluster that is down ("down", nothing listens on 127.0.0.1:1).
func twoContexts(t *testing.T) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: up
  cluster: {server: "` + bed.Server + `", certificate-authority: "` + bed.CAFile + `"}
- name: down
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: admin
  user: {token: "` + testbed.Token(testbed.AdminUser) + `"}
contexts:
- name: up
  context: {cluster: up, user: admin, namespace: ` + verdictsNS + `}
- name: down
  context: {cluster: down, user: admin, namespace: default}
current-context: up
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

func TestManyContexts(t *testing.T) {
	seedVerdicts(t)
	kc := twoContexts(t)
	for _, args := range [][]string{{"locks", "--contexts", "up,down"}, {"locks", "--all-contexts"}} {
		res := captf(t, kc, append(args, "--context-timeout", "10s")...)
		if res.code != 0 {
			t.Fatalf("%v: exit %d %q", args, res.code, res.err)
		}
		if !strings.HasPrefix(res.out, "CONTEXT   OBJECT") || !regexp.MustCompile(`(?m)^up +terraformcluster/stale-gone +Stale`).MatchString(res.out) ||
			!regexp.MustCompile(`(?m)^down +<error> +<none>`).MatchString(res.out) {
			t.Errorf("%v:\n%s", args, res.out)
		}
		if lines := strings.Split(strings.TrimSpace(res.err), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "Warning: context down: cannot list leases") {
			t.Errorf("%v: stderr %q", args, res.err)
		}
	}
	res := captf(t, kc, "locks", "--all-contexts", "-o", "json")
	list := locksJSONFrom(t, res.out)
	if len(list.Items) != len(expectations) || len(list.ContextErrors) != 1 || list.ContextErrors[0].Context != "down" {
		t.Fatalf("%d items, errors %+v", len(list.Items), list.ContextErrors)
	}
	for _, l := range list.Items {
		if l.Context != "up" {
			t.Errorf("item %s has context %q", l.Name, l.Context)
		}
	}
	// Only down: nothing could be read, which is an error.
	if res := captf(t, kc, "locks", "--contexts", "down"); res.code != 1 || !strings.Contains(res.err, "none of the 1 contexts could be read") {
		t.Errorf("all down: exit %d %q", res.code, res.err)
	}
	if res := captf(t, kc, "locks", "--contexts", "nope"); res.code != 1 || !strings.Contains(res.err, `context "nope" is not in the kubeconfig`) {
		t.Errorf("unknown context: exit %d %q", res.code, res.err)
	}
}
