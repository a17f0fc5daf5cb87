package cluster

import (
	"reflect"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// maxReadLockRequests bounds the requests of ReadLock, whatever the
// cluster, from one.go's plan:
//
//	1               the Lease, by name
//	+ 1             its namespace's runner Jobs
//	+ len(Kinds)    its namespace's CAPTF objects, kind by kind
//	+ 1             the pod its host names, by name
//	+ 1             the owner's CAPI Cluster, by name
//	+ 1             the TerraformCluster it names, or those labelled
//	                with its name
//	+ 4             a deleting owner's Secrets' metadata: its state and
//	                its backups by label, its two inputs records by name
//	+ 1             a deleting owner's namespace
var maxReadLockRequests = 1 + 1 + len(object.Kinds) + 1 + 1 + 1 + 4 + 1

// One lock is read in a handful of requests, in its namespace only,
// however many locks and pods the cluster holds.
func TestReadLockRequestsAreBounded(t *testing.T) {
	objs, _, _ := scaled(240)
	more, _ := world()
	srv, r := newReader(t, append(objs, more...)...)
	for _, c := range []struct {
		ref     object.Ref
		verdict v1alpha1.Verdict
		// requests is what the plan sends for this lock.
		requests int
	}{
		// Lease, Jobs, kinds, pod, Cluster, TerraformCluster, Secrets,
		// namespace.
		{m1, v1alpha1.Stale, maxReadLockRequests},
		// Lease, Jobs, kinds, pod, namespace (the owner is kept: held).
		{demo, v1alpha1.Live, 1 + 1 + len(object.Kinds) + 1 + 1},
		// Lease, Jobs, kinds: no host, no pod.
		{idle, v1alpha1.Unlocked, 1 + 1 + len(object.Kinds)},
	} {
		srv.ResetRequests()
		_, res := readOne(t, r, c.ref.Namespace, lockName(c.ref))
		wantVerdict(t, res, c.verdict)
		reqs := srv.Requests()
		if len(reqs) > maxReadLockRequests || len(reqs) != c.requests {
			t.Errorf("%s: %d requests, want %d (at most %d):%s", c.ref, len(reqs), c.requests, maxReadLockRequests, describe(reqs))
		}
		for _, q := range reqs {
			if q.Namespace != c.ref.Namespace && !(q.Resource == "namespaces" && q.Name == c.ref.Namespace) {
				t.Errorf("%s: a request beyond its namespace: %s %s", c.ref, q.Verb, q.Path)
			}
		}
	}
}

// A host that cannot be a runner pod's name is read by neither read, even
// when a pod of that name exists: a lock is decided alike by locks and
// explain.
func TestNoReadOfAHostThatIsNoRunnerPod(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "alice@tf-debug"), captfObject(demo, nil), podOf("default", "tf-debug", corev1.PodRunning, false))
	_, one := readOne(t, r, "default", lockName(demo))
	wantVerdict(t, one, v1alpha1.Foreign, "holder host tf-debug is not a runner pod of terraformcluster/demo")
	if strings.Contains(one.Decision.Reason, "that pod exists") {
		t.Errorf("reason %q", one.Decision.Reason)
	}
	if n := srv.Count("get", "pods"); n != 0 {
		t.Errorf("ReadLock sent %d pod GETs for a host that is no runner pod", n)
	}
	srv.ResetRequests()
	_, rep := readAll(t, r, inspect.Scope{})
	if all := resultOf(t, rep, "default", lockName(demo)); !reflect.DeepEqual(all.Decision, one.Decision) {
		t.Errorf("Read decides %q, ReadLock %q", all.Decision.Reason, one.Decision.Reason)
	}
	if n := srv.Count("get", "pods"); n != 0 {
		t.Errorf("Read sent %d pod GETs for a host that is no runner pod", n)
	}
}

// A Lease that does not exist is a NoLeaseError; a name that is no lock
// Lease's is refused before any request; a Lease RBAC hides is an error
// that says which read failed.
func TestReadLockErrors(t *testing.T) {
	srv, r := newReader(t, otherLeases("default")...)
	_, err := r.ReadLock(testCtx(t), "default", lockName(demo))
	if !isNoLease(err) || !strings.Contains(err.Error(), "nothing holds this state") {
		t.Errorf("missing Lease: %v", err)
	}
	srv.ResetRequests()
	for _, name := range []string{"captf-run-0b41ac905b337e94-c", "captf-cluster-0123456789abcdef", "node-1"} {
		if _, err := r.ReadLock(testCtx(t), "default", name); err == nil || !strings.Contains(err.Error(), "not a Terraform lock Lease") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("requests for Leases that are no locks:%s", describe(reqs))
	}
	forbidden(srv, is("get", "leases"))
	_, err = r.ReadLock(testCtx(t), "default", lockName(demo))
	if err == nil || isNoLease(err) || !strings.Contains(err.Error(), `cannot get leases in namespace "default"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("forbidden Lease: %v", err)
	}
}

// Refresh reads the Lease and its holder's pod again, and nothing else:
// a pod gone since the read and a Lease taken since are seen.
func TestRefreshSeesTheLeaseAndPodNow(t *testing.T) {
	pod := runnerPodName(demo)
	srv, r := newReader(t, heldLease(demo, "root@"+pod), captfObject(demo, nil), podOf("default", pod, corev1.PodRunning, true),
		heldLease(lost, "root@"+runnerPodName(lost)), captfObject(lost, nil))
	snap, rep := readAll(t, r, inspect.Scope{})
	wantVerdict(t, resultOf(t, rep, "default", lockName(demo)), v1alpha1.Live)
	refresh := func() inspect.Result {
		t.Helper()
		srv.ResetRequests()
		fresh, err := r.Refresh(testCtx(t), snap, "default", lockName(demo))
		if err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 || countWhere(reqs, is("get", "leases")) != 1 || countWhere(reqs, is("get", "pods")) != 1 {
			t.Errorf("%d requests, want the Lease's GET and its pod's:%s", len(reqs), describe(reqs))
		}
		if len(fresh.Leases) != 1 || fresh.Sources[inspect.Key("default", lockName(demo))] == nil {
			t.Errorf("Refresh gave %d Leases, sources %v", len(fresh.Leases), fresh.Sources)
		}
		res, ok := inspect.DecideLock(fresh, "default", lockName(demo))
		if !ok {
			t.Fatal("DecideLock found no lock in the refreshed snapshot")
		}
		return res
	}

	if err := srv.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "default", pod); err != nil {
		t.Fatal(err)
	}
	res := refresh()
	wantVerdict(t, res, v1alpha1.Stale, "holder pod "+pod+" no longer exists")
	if p := snap.Pods[inspect.Key("default", pod)]; p == nil || !p.Exists {
		t.Errorf("Refresh changed the snapshot it was given: %+v", p)
	}

	// Taken again by the next attempt's pod, which runs.
	next := strings.Replace(pod, "-a1-", "-a2-", 1)
	taken := heldLease(demo, "root@"+next)
	const id = "11111111-2222-3333-4444-555555555555"
	taken.Spec.HolderIdentity = ptrTo(id)
	taken.Annotations[inspect.AnnotationLock] = lockInfoOf(id, "root@"+next)
	if err := srv.Tracker().Add(podOf("default", next, corev1.PodRunning, true)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), taken, "default"); err != nil {
		t.Fatal(err)
	}
	res = refresh()
	wantVerdict(t, res, v1alpha1.Live, "holder pod "+next+" is Running")
	if res.Facts.Lease.ID != id || res.Source == nil || res.Source.ResourceVersion == resultOf(t, rep, "default", lockName(demo)).Facts.Lease.ResourceVersion {
		t.Errorf("the refreshed Lease: ID %q, source %+v", res.Facts.Lease.ID, res.Source)
	}
}

func ptrTo[T any](v T) *T { return &v }
