package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// review29c n1: explain's Holder line says a known operation short and
// quotes any other, so a holder's Operation cannot pass for the plugin's
// own words ("apply, for 3h") or for a known type.
func TestHolderLineQuotesAnUnknownOperation(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	created := now.Add(-5 * time.Minute)
	for op, want := range map[string]string{
		"OperationTypeApply": "Holder:   root@runner (apply, for 5m)",
		"apply, for 3h":      `Holder:   root@runner ("apply, for 3h", for 5m)`,
		"apply":              `Holder:   root@runner ("apply", for 5m)`,
	} {
		var buf bytes.Buffer
		x := &v1alpha1.Explanation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lock-tfstate-default-x"}, Lock: &v1alpha1.LockInfo{Who: "root@runner", ID: "id", Operation: op, Created: &created}}
		printExplanation(&buf, x, now)
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("operation %q: want line %q in\n%s", op, want, buf.String())
		}
	}
}
