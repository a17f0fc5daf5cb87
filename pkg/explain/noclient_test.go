package explain

import (
	"os/exec"
	"strings"
	"testing"
)

// pkg/explain makes no request of its own: it explains what the reading
// layer read (cluster.Reader.ReadExplained). None of its dependencies can
// reach a server: neither the reading layer nor any of client-go's but
// the JSONPath template packages that cli-runtime's printers use (through
// pkg/escape).
func TestExplainHasNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{"k8s.io/client-go/util/jsonpath": true, "k8s.io/client-go/third_party/forked/golang/template": true}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/captf-io/kubectl-captf/pkg/inspect/cluster" || (strings.HasPrefix(p, "k8s.io/client-go/") && !allowed[p]) {
			t.Errorf("pkg/explain depends on %s, which reads the cluster", p)
		}
	}
}
