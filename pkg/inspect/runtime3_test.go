package inspect

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// State Secrets whose labels are not the map CAPTF passes the backend:
// terraform lists the state with a selector of that map and finds none,
// OpenTofu reads the base by name, and nothing read says which runtime
// the image holds, so captfClears is false (review26 F1).
func TestRelabeledStateDependsOnTheRuntime(t *testing.T) {
	for _, c := range []struct {
		name    string
		relabel func(*corev1.Secret)
		want    StaleCase
		says    string
	}{
		{"as CAPTF labels it", func(*corev1.Secret) {}, StaleClears, "CAPTF clears it with the object's next Job"},
		{"another cluster", func(s *corev1.Secret) { s.Labels[jobgate.ClusterNameLabel] = "other" }, StaleRelabeled, `cluster.x-k8s.io/cluster-name="other" (CAPTF passes "c")`},
		{"no owner-name label", func(s *corev1.Secret) { delete(s.Labels, LabelOwnerName) }, StaleRelabeled, LabelOwnerName + ` (missing; CAPTF passes "demo")`},
		// review26b N3: the runtime's selector also requires managed-by.
		{"no managed-by label", func(s *corev1.Secret) { delete(s.Labels, LabelManagedBy) }, StaleRelabeled, LabelManagedBy + ` (missing; the runtime's selector requires "terraform")`},
		{"an extra label", func(s *corev1.Secret) { s.Labels["x"] = "y" }, StaleClears, "CAPTF clears it with the object's next Job"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := stateSecret(demo)
			c.relabel(s)
			r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), s}, withConditions([3]string{"StateReadable", "True", "StateRead"})).only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != c.want || r.Decision.CAPTFClears != (c.want == StaleClears) {
				t.Errorf("case %v (captfClears %v), want %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, c.want, r.Decision.Reason)
			}
			if c.want == StaleRelabeled {
				want(t, r, v1alpha1.Stale, "with a Terraform image, init lists the state with a selector of those labels, finds none", "with an OpenTofu image, init reads the base Secret by its name and the force-unlock clears the lock", "CAPTF records nothing of which runtime its image holds")
			}
		})
	}
}

// A lock ID that begins with "-" is a flag to the runtime's force-unlock
// (review26 F7); "-" alone is an argument.
func TestFlagLikeLockID(t *testing.T) {
	long := strings.Repeat("a", MaxArg-len(FlagForceUnlock)-1)
	for id, flag := range map[string]bool{"-x": true, "-lock=false": true, "--": true, "-": false, "a-b": false, lockID: false,
		// review26g F4: no argument holds a NUL, or MAX_ARG_STRLEN bytes.
		"a\x00b": true, long: false, long + "a": true} {
		if got := FlagID(id) != ""; got != flag {
			t.Errorf("FlagID(%q) = %v, want %v", id, got, flag)
		}
	}
	info := `{"ID":"-x","Operation":"OperationTypeApply","Who":"root@` + demoPod + `","Version":"1.11.4","Created":"2026-09-26T15:53:38Z"}`
	r := newCluster([]runtime.Object{lease(demo, ptr("-x"), &info), stateSecret(demo)}, demo).only(t)
	want(t, r, v1alpha1.Stale, `the ID CAPTF passes to force-unlock -force, "-x", begins with "-"`, "never clears")
	if r.Decision.StaleCase != StaleFlagID || r.Decision.CAPTFClears {
		t.Errorf("case %v (captfClears %v): %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
	}
}

// StateLost covers a missing state Secret and one without the inputs
// hash: where the Secrets are listed they tell; where they cannot be,
// the plugin is unsure, and says both (review26 F2, F3).
func TestStateLostWithItsSecret(t *testing.T) {
	for _, reason := range []string{"StateLost", "ApplyOutcomeUnknown"} {
		u := withConditions([3]string{"StateReadable", "False", reason})
		u.SetAnnotations(map[string]string{"captf.io/restore-state": "3"})
		r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo)}, u).only(t)
		if r.Decision.StaleCase != StaleGateUnsure || r.Decision.CAPTFClears || strings.Contains(r.Decision.Reason, "no Job clears it") {
			t.Errorf("%s, Secret present: case %v: %s", reason, r.Decision.StaleCase, r.Decision.Reason)
		}
		rt := RuntimeOf(demo, u, StateRead{Why: "Forbidden"})
		if ok, _ := rt.NoState(demo.Suffix()); ok {
			t.Errorf("%s, unread: NoState", reason)
		}
		if m := rt.MaybeNoState(); !strings.Contains(m, "covers a state Secret that is missing and one that is present") || !strings.Contains(m, "could not be listed (Forbidden)") {
			t.Errorf("%s, unread: %q", reason, m)
		}
	}
}

// A restore that already failed is not retried for the same serial:
// after the unlock nothing proceeds until it is asked for again (F5).
func TestRestoreFailedIsAskedForAgain(t *testing.T) {
	s := NoStateText(&jobgate.Gate{Next: "the restore Job", NextOp: jobgate.OpRestore}, Runtime{RestoreFailed: true})
	if strings.Contains(s, "proceeds") || !strings.Contains(s, RestoreRetry) {
		t.Errorf("%q", s)
	}
}

// The cluster name CAPTF passes: the object's cluster-name label, else a
// TerraformCluster's owning Cluster (shared/run.go ClusterName).
func TestClusterNameOf(t *testing.T) {
	u := full(demo, nil)
	if got := ClusterNameOf(demo.Kind, u); got != "c" {
		t.Errorf("owner only: %q", got)
	}
	u.SetLabels(map[string]string{jobgate.ClusterNameLabel: "labelled"})
	if got := ClusterNameOf(demo.Kind, u); got != "labelled" {
		t.Errorf("label and owner: %q", got)
	}
}
