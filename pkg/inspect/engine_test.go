package inspect

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

func job(ns, name string, owner object.Ref, finished bool) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		LabelManaged: "true", LabelOwnerKind: owner.Kind.Name, LabelOwnerName: owner.Name,
	}}}
	ctrl := true
	j.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: object.Group + "/" + object.Version, Kind: owner.Kind.Name, Name: owner.Name, UID: uidOf(owner), Controller: &ctrl,
	}}
	if finished {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	return j
}

// notServed makes every CAPTF kind answer 404, as without the CRDs.
func notServed(c *cluster) {
	c.metadata.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
	})
}

func forbid(f *k8stesting.Fake, verb, resource string) {
	f.PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", fmt.Errorf("User %q cannot %s resource %q", "bob", verb, resource))
	})
}

func TestParseLeaseWorkspaceAndSuffix(t *testing.T) {
	cases := []struct {
		name   string
		labels map[string]string
		ws     string
		suffix string
	}{
		{"lock-tfstate-default-0b41ac905b337e94-c", map[string]string{LabelWorkspace: "default", LabelSecretSuffix: "0b41ac905b337e94-c"}, "default", "0b41ac905b337e94-c"},
		// Dashes in both: only the labels can split them.
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelWorkspace: "my-ws", LabelSecretSuffix: "my-suffix"}, "my-ws", "my-suffix"},
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelSecretSuffix: "my-suffix"}, "my-ws", "my-suffix"},
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelWorkspace: "my-ws"}, "my-ws", "my-suffix"},
		// No labels: a CAPTF suffix is recognised from the right.
		{"lock-tfstate-default-0b41ac905b337e94-c", nil, "default", "0b41ac905b337e94-c"},
		{"lock-tfstate-blue-green-7c1ed7a877508259-mp", nil, "blue-green", "7c1ed7a877508259-mp"},
		{"lock-tfstate-default-other", nil, "default", "other"},
	}
	for _, c := range cases {
		l := ParseLease(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels}})
		if l.Workspace != c.ws || l.Suffix != c.suffix {
			t.Errorf("%s %v: workspace %q suffix %q, want %q %q", c.name, c.labels, l.Workspace, l.Suffix, c.ws, c.suffix)
		}
	}
}

func TestSplitWho(t *testing.T) {
	for who, host := range map[string]string{"root@pod": "pod", "@pod": "pod", "a@b@pod": "pod"} {
		if h, err := SplitWho(who); err != nil || h != host {
			t.Errorf("SplitWho(%q) = %q, %v", who, h, err)
		}
	}
	for _, who := range []string{"", "root", "root@", "a@b@"} {
		if h, err := SplitWho(who); err == nil {
			t.Errorf("SplitWho(%q) = %q, want an error", who, h)
		}
	}
}

// Only lock-tfstate-<default>-* Leases are locks; CAPTF's own leases and
// other workspaces are left out unless asked for.
func TestScope(t *testing.T) {
	other := lease(demo, nil, nil)
	other.Name, other.Labels[LabelWorkspace] = "lock-tfstate-staging-"+demo.Suffix(), "staging"
	objs := []runtime.Object{
		lease(demo, nil, nil), other,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-" + demo.Suffix(), Namespace: "default", Labels: map[string]string{"captf.io/lease": "run"}}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-cluster-0123456789abcdef", Namespace: "default"}},
		lease(web, nil, nil),
	}
	c := newCluster(objs, demo, web)
	names := func(rep *Report) (out []string) {
		for _, r := range rep.Results {
			out = append(out, r.Facts.Lease.Namespace+"/"+r.Facts.Lease.Name)
		}
		return out
	}
	if got := names(c.inspect(t, Scope{})); len(got) != 2 || got[0] != "default/"+object.LockLeaseName("default", demo.Suffix()) || got[1] != "team-a/"+object.LockLeaseName("default", web.Suffix()) {
		t.Errorf("all namespaces: %v", got)
	}
	if got := names(c.inspect(t, Scope{Namespace: "default"})); len(got) != 1 {
		t.Errorf("namespace default: %v", got)
	}
	if got := names(c.inspect(t, Scope{Namespace: "default", AllWorkspaces: true})); len(got) != 2 {
		t.Errorf("all workspaces: %v", got)
	}
	if got := names(c.inspect(t, Scope{Selector: "tfstateWorkspace=staging", AllWorkspaces: true})); len(got) != 1 || !strings.Contains(got[0], "staging") {
		t.Errorf("selector: %v", got)
	}
}

// maxLocksRequests bounds the requests of Locks, whatever the number of
// locks: one list each of Leases, the three CAPTF kinds and Jobs, at most
// two of pods (a labelled one cut short by a whole one), and at most
// holderGets GETs of holder pods and gateGets of owners.
const maxLocksRequests = 1 + 3 + 1 + 2 + holderGets + gateGets

// The requests do not grow with the number of Leases: below one bound for
// 3 locks as for 240. (Their exact number varies by one from run to run:
// the labelled pod list may be cut short before or after it is sent.)
func TestRequestsDoNotGrowWithLeases(t *testing.T) {
	count := func(n int) (requests, gets int) {
		var objs []runtime.Object
		var refs []object.Ref
		for i := 0; i < n; i++ {
			r := object.Ref{Kind: object.TerraformCluster, Namespace: fmt.Sprintf("ns%d", i%3), Name: fmt.Sprintf("c%d", i)}
			refs = append(refs, r)
			podName := fmt.Sprintf("captf-c-c%d-apply-a1-d72d2a-x7k2p", i)
			objs = append(objs, held(r, "root@"+podName))
			if i%2 == 0 {
				objs = append(objs, pod(r.Namespace, podName, corev1.PodRunning, true))
			}
		}
		objs = append(objs, pod("ns0", "captf-c-c1-apply-a1-d72d2a-x7k2p", corev1.PodRunning, false))
		c := newCluster(objs, refs...)
		rep := c.inspect(t, Scope{})
		if len(rep.Results) != n {
			t.Fatalf("%d results for %d locks", len(rep.Results), n)
		}
		for _, a := range append(append(c.client.Actions(), c.metadata.Actions()...), c.dynamic.Actions()...) {
			requests++
			if a.GetVerb() == "get" {
				gets++
			}
		}
		return requests, gets
	}
	sizes := []int{3, 2 * holderGets, 60, 240}
	for _, n := range sizes {
		r, g := count(n)
		if r > maxLocksRequests || g > holderGets+gateGets {
			t.Errorf("%d locks: %d requests (%d GETs), want at most %d (%d GETs)", n, r, g, maxLocksRequests, holderGets+gateGets)
		}
	}
}

// The full pod list proves absence and finds unlabelled live pods alike.
func TestManyMissingHoldersUseOneFullList(t *testing.T) {
	var objs []runtime.Object
	var refs []object.Ref
	for i := 0; i <= holderGets; i++ {
		r := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: fmt.Sprintf("c%d", i)}
		refs = append(refs, r)
		objs = append(objs, held(r, fmt.Sprintf("root@captf-c-c%d-apply-a1-d72d2a-x7k2p", i)))
	}
	// c0's pod lost its labels but runs; the others are gone.
	objs = append(objs, pod("default", "captf-c-c0-apply-a1-d72d2a-x7k2p", corev1.PodRunning, false))
	rep := newCluster(objs, refs...).inspect(t, Scope{})
	for _, r := range rep.Results {
		want := v1alpha1.Stale
		if r.Facts.Owner.Ref.Name == "c0" {
			want = v1alpha1.Live
		}
		if r.Decision.Verdict != want {
			t.Errorf("%s: %s (%s)", r.Facts.Owner.Ref.Name, r.Decision.Verdict, r.Decision.Reason)
		}
	}
}

func TestPodsForbiddenIsAnError(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod)}, demo)
	forbid(&c.client.Fake, "list", "pods")
	_, err := (&Inspector{Client: c.client, Metadata: c.metadata}).Locks(context.Background(), Scope{Namespace: "default"})
	if err == nil || !strings.Contains(err.Error(), `cannot list pods in namespace "default"`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}

func TestJobsAndObjectsForbiddenDegrade(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod)}, demo)
	forbid(&c.client.Fake, "list", "jobs")
	forbid(&c.metadata.Fake, "list", "terraformclusters")
	rep := c.inspect(t, Scope{})
	if len(rep.Warnings) != 2 {
		t.Fatalf("warnings %q", rep.Warnings)
	}
	r := rep.Results[0]
	// The pod name still identifies the object; whether it exists is unknown.
	want(t, r, v1alpha1.Stale, "could not be read")
	if r.Decision.CAPTFClears || strings.Join(r.Unreadable, ",") != "terraformclusters,jobs" {
		t.Errorf("clears=%v unreadable=%v", r.Decision.CAPTFClears, r.Unreadable)
	}
	if o := r.Lock().Object; o.Exists != nil {
		t.Errorf("exists should be unknown, is %v", *o.Exists)
	}
}

// Nothing is read beyond the Leases when there is no lock.
func TestNoLocks(t *testing.T) {
	c := newCluster(nil, demo)
	if rep := c.inspect(t, Scope{}); len(rep.Results) != 0 {
		t.Fatalf("%d results", len(rep.Results))
	}
	if n := len(c.client.Actions()) + len(c.metadata.Actions()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
