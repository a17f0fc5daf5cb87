package inspect

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// chunk is the state Secret tfstate-default-<suffix>-part-<n> of r, as
// terraform writes the chunks of a large state.
func chunk(r object.Ref, n string) *corev1.Secret {
	s := stateSecret(r)
	s.ObjectMeta = metav1.ObjectMeta{Name: s.Name + "-part-" + n, Namespace: s.Namespace, Labels: s.Labels}
	return s
}

// review26b N2: the base Secret gone and a chunk left, while CAPTF last
// recorded StateReadable True: CAPTF's reader still finds state, the
// runtimes read the base by name and find none, so init fails on the lock.
func TestChunksWithoutTheBaseAreNoState(t *testing.T) {
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), chunk(demo, "1")}, withConditions([3]string{"StateReadable", "True", "StateRead"})).only(t)
	want(t, r, v1alpha1.Stale, "no Job clears it", "is the base Secret tfstate-default-"+demo.Suffix()+" the runtime reads", "tfstate-default-"+demo.Suffix()+"-part-1 only", "init fails and the force-unlock step never runs")
	if r.Decision.StaleCase != StaleNoState || r.Decision.CAPTFClears {
		t.Errorf("case %v (captfClears %v): %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
	}
}
