package cluster

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// stateRead is a live object whose state CAPTF last read
// (StateReadable True/StateRead).
func stateRead(r object.Ref) *unstructured.Unstructured {
	return captfObject(r, map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "StateReadable", "status": "True", "reason": "StateRead"},
	}}})
}

// Issue 26's reproduction: a live owner of a held lock whose state Secret
// was deleted after CAPTF recorded StateReadable True. Its state Secrets'
// metadata are listed (four lists an owner up to gateGets: its state
// Secrets, its backups, its two inputs Secrets by name, which CAPTF's
// checkRetained reads for a live object too; past that, two lists in
// scope: the state Secrets, and the other Secrets CAPTF labels its own),
// and without one its next Job's init fails on the lock: captfClears is
// false.
func TestLiveOwnersStateSecretsAreListed(t *testing.T) {
	for _, n := range []int{1, gateGets, gateGets + 1, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var objs []runtime.Object
			var refs []object.Ref
			for i := range n {
				r := object.Ref{Kind: object.TerraformCluster, Namespace: fmt.Sprintf("ns%d", i%2), Name: fmt.Sprintf("c%d", i)}
				objs = append(objs, heldLease(r, "root@"+runnerPodName(r)), stateRead(r))
				if i%2 == 0 {
					objs = append(objs, stateSecretOf(r))
				}
				refs = append(refs, r)
			}
			srv, r := newReader(t, objs...)
			snap, rep := readAll(t, r, inspect.Scope{})
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings %q", rep.Warnings)
			}
			for i, ref := range refs {
				want := jobgate.Absent
				if i%2 == 0 {
					want = jobgate.Present
				}
				if st := snap.States[ref.Namespace+"/"+ref.Suffix()]; st.Presence != want || st.Why != "" {
					t.Errorf("%s: %+v, want %v", ref, st, want)
				}
				res := resultOf(t, rep, ref.Namespace, lockName(ref))
				wantVerdict(t, res, v1alpha1.Stale)
				if res.Decision.CAPTFClears != (want == jobgate.Present) {
					t.Errorf("%s: captfClears %v with state %v: %s", ref, res.Decision.CAPTFClears, want, res.Decision.Reason)
				}
				if want == jobgate.Absent && !strings.Contains(res.Decision.Reason, "it was deleted since") {
					t.Errorf("%s: reason %q", ref, res.Decision.Reason)
				}
			}
			var lists int
			for _, q := range srv.Requests() {
				if q.Resource != "secrets" {
					continue
				}
				lists++
				sel := q.Query.Get("labelSelector")
				switch {
				case q.Verb != "list":
					t.Errorf("a %s of a Secret: %s", q.Verb, q.Path)
				case n <= gateGets && !strings.HasPrefix(sel, "tfstate=true,"+inspect.LabelSecretSuffix+"=") &&
					!strings.HasPrefix(sel, jobgate.BackupLabel+"=true,") && !strings.HasPrefix(q.Query.Get("fieldSelector"), "metadata.name=captf-"):
					t.Errorf("selector %q (fields %q), want one owner's state Secrets, backups or inputs Secret", sel, q.Query.Get("fieldSelector"))
				case n > gateGets && (sel != "tfstate=true" && sel != "captf.io/managed=true,!tfstate" || q.Namespace != ""):
					t.Errorf("selector %q in %q, want the state Secrets or CAPTF's other Secrets in scope", sel, q.Namespace)
				}
			}
			want := 4 * n
			if n > gateGets {
				want = 2
			}
			if lists != want {
				t.Errorf("%d Secrets lists, want %d", lists, want)
			}
		})
	}
}

// Without the right to list Secrets, a live owner's state is unread and
// StateReadable decides, with no warning (the read-only role does not
// grant it): its next Job clears the lock.
func TestLiveOwnersStateSecretsForbidden(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), stateRead(demo))
	forbidden(srv, is("list", "secrets"))
	snap, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
	if st := snap.States["default/"+demo.Suffix()]; st.Presence != jobgate.Unread || !strings.Contains(st.Why, "could not be listed: Forbidden") {
		t.Errorf("state %+v", st)
	}
	res := resultOf(t, rep, "default", lockName(demo))
	if !res.Decision.CAPTFClears || srv.Count("list", "secrets") != 1 {
		t.Errorf("captfClears %v (%s), %d Secrets lists", res.Decision.CAPTFClears, res.Decision.Reason, srv.Count("list", "secrets"))
	}
}
