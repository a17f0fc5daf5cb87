package inspect

import (
	"strings"
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

// review26b N2, as CAPTF's reader orders the chunks (reader.go
// orderChunks): the base Secret gone and a chunk left, while CAPTF last
// recorded StateReadable True. Its next read finds chunk 0 missing and
// holds the state (StateInconsistent), so no Job but a restore starts.
func TestChunksWithoutTheBaseAreHeld(t *testing.T) {
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), chunk(demo, "1")}, withConditions([3]string{"StateReadable", "True", "StateRead"})).only(t)
	want(t, r, v1alpha1.Stale, "CAPTF will not clear it", "CAPTF's next read of its state fails on the state Secrets' names (its -part-N chunks have no base Secret tfstate-default-"+demo.Suffix()+")", "StateReadable False/StateInconsistent", "no Job but a restore starts")
	if r.Decision.StaleCase != StaleGateClosed || r.Decision.CAPTFClears {
		t.Errorf("case %v (captfClears %v): %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
	}
}

// A copy of the base Secret under another name that carries the state
// labels: CAPTF's reader refuses the set (unexpected name) and holds it,
// though both runtimes would read the base.
func TestAStateSecretOfAnotherNameIsHeld(t *testing.T) {
	other := stateSecret(demo)
	other.ObjectMeta = metav1.ObjectMeta{Name: other.Name + "-copy", Namespace: other.Namespace, Labels: other.Labels}
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo), other}, withConditions([3]string{"StateReadable", "True", "StateRead"})).only(t)
	want(t, r, v1alpha1.Stale, "state Secret tfstate-default-"+demo.Suffix()+"-copy is neither tfstate-default-"+demo.Suffix()+" nor one of its -part-N chunks", "StateReadable False/StateInconsistent", "no Job but a restore starts")
	if r.Decision.StaleCase != StaleGateClosed || r.Decision.CAPTFClears {
		t.Errorf("case %v (captfClears %v): %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
	}
}

// review26b N1: a chunked state (the base and -part-N Secrets, as
// terraform writes a large one): terraform's init reads it, OpenTofu's
// reads the base alone and fails, and nothing read names the runtime.
func TestChunkedStateDependsOnTheRuntime(t *testing.T) {
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo), chunk(demo, "1")}, withConditions([3]string{"StateReadable", "True", "StateRead"})).only(t)
	want(t, r, v1alpha1.Stale, "whether a Job clears it depends on the runtime", "its state has -part-N Secrets (tfstate-default-"+demo.Suffix()+"-part-1)", "with a Terraform image, init reads the base Secret and its chunks, a state split across them and a whole base with chunks left over from a larger state alike, and the force-unlock clears the lock", "with an OpenTofu image, init reads the base Secret alone, which holds the whole state only where the chunks are left over: a state split across them it cannot decode")
	if r.Decision.StaleCase != StaleChunked || r.Decision.CAPTFClears {
		t.Errorf("case %v (captfClears %v): %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
	}
	if got := RelabeledText("x"); !strings.Contains(got, "unless the state is split across -part-N Secrets, which OpenTofu's init cannot read") {
		t.Errorf("RelabeledText still says OpenTofu clears chunked state: %s", got)
	}
}
