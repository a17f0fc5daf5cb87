package cluster

import (
	"context"
	"fmt"
	"mime"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// The objects of the varied world.
var (
	idle    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "idle"}
	demo    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "demo"}
	done    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "done"}
	lost    = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "lost"}
	quiet   = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "quiet"}
	laptop  = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "laptop"}
	broken  = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "broken"}
	nohost  = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "nohost"}
	orphan  = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "orphan"}
	deleted = object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "deleted"}
	web     = object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "web"}
	web1    = object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "web-1"}
	m1      = object.Ref{Kind: object.TerraformMachine, Namespace: "team-a", Name: "m1"}
)

// stagingName is the Lease of idle's state in workspace staging.
var stagingName = object.LockLeaseName("staging", idle.Suffix())

// worldLock is one lock of the varied world and its expected verdict.
type worldLock struct {
	ref     object.Ref
	verdict v1alpha1.Verdict
	reason  []string
}

// world is a cluster with a lock of every verdict in two namespaces,
// CAPTF's own Leases beside them, and a lock of workspace staging.
func world() ([]runtime.Object, []worldLock) {
	ptr := func(s string) *string { return &s }
	_, m1Obj := machineOf("team-a", "m1", "prod")
	deleting(m1Obj)
	deletedLease := heldLease(deleted, "root@"+runnerPodName(deleted))
	deletedLease.Labels[inspect.LabelOwnerKind], deletedLease.Labels[inspect.LabelOwnerName] = deleted.Kind.Name, deleted.Name
	staging := heldLease(idle, "alice@laptop")
	staging.Name, staging.Labels[inspect.LabelWorkspace] = stagingName, "staging"
	objs := []runtime.Object{
		lockLease(idle, nil, nil), captfObject(idle, nil), staging,
		heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil), podOf("default", runnerPodName(demo), corev1.PodRunning, true),
		runnerJob(demo, runnerJobName(demo, 2), false), runnerJob(demo, runnerJobName(demo, 1), true),
		heldLease(done, "root@"+runnerPodName(done)), captfObject(done, nil), podOf("default", runnerPodName(done), corev1.PodFailed, true),
		heldLease(lost, "root@"+runnerPodName(lost)), captfObject(lost, nil),
		heldLease(quiet, "root@"+runnerPodName(quiet)), captfObject(quiet, nil), podOf("default", runnerPodName(quiet), corev1.PodRunning, false),
		heldLease(laptop, "alice@laptop"), captfObject(laptop, nil),
		lockLease(broken, ptr(fixtureLockID), nil), captfObject(broken, nil),
		lockLease(nohost, ptr(fixtureLockID), ptr(lockInfoOf(fixtureLockID, "alice"))), captfObject(nohost, nil),
		heldLease(orphan, "alice@laptop"),
		deletedLease,
		heldLease(web, "root@"+runnerPodName(web1)), captfObject(web, nil), captfObject(web1, nil), podOf("team-a", runnerPodName(web1), corev1.PodRunning, true),
		heldLease(m1, "root@"+runnerPodName(m1)), m1Obj,
		capiCluster("team-a", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")), terraformCluster("team-a", "prod-tc", ""),
		stateSecretOf(m1),
		// Pods that hold no lock: one unlabelled, one a runner pod.
		podOf("default", "web-0", corev1.PodRunning, false), podOf("team-a", "captf-c-x-apply-a1-d72d2a-aaaaa", corev1.PodRunning, true),
	}
	objs = append(append(objs, otherLeases("default")...), otherLeases("team-a")...)
	locks := []worldLock{
		{idle, v1alpha1.Unlocked, []string{"no holder"}},
		{demo, v1alpha1.Live, []string{"holder pod " + runnerPodName(demo) + " is Running"}},
		{done, v1alpha1.Stale, []string{"holder pod " + runnerPodName(done) + " is Failed", "next Job"}},
		{lost, v1alpha1.Stale, []string{"holder pod " + runnerPodName(lost) + " no longer exists", "next Job"}},
		{quiet, v1alpha1.Live, []string{"holder pod " + runnerPodName(quiet) + " is Running"}},
		{laptop, v1alpha1.Foreign, []string{"holder host laptop is not a runner pod of terraformcluster/laptop"}},
		{broken, v1alpha1.Unknown, []string{"no app.terraform.io/lock-info annotation"}},
		{nohost, v1alpha1.Unknown, []string{`has no "@"`}},
		{orphan, v1alpha1.Foreign, []string{"no CAPTF object owns suffix " + orphan.Suffix()}},
		{deleted, v1alpha1.Stale, []string{"terraformcluster/deleted no longer exists"}},
		{web, v1alpha1.Foreign, []string{"not a runner pod of terraformmachine/web", "(that pod exists, Running)"}},
		{m1, v1alpha1.Stale, []string{"holder pod " + runnerPodName(m1) + " no longer exists"}},
	}
	return objs, locks
}

// A varied cluster read whole gives every verdict, each from what the
// snapshot read; and each lock read alone (explain, unlock) is decided
// the same: one code path.
func TestReadGivesEveryVerdict(t *testing.T) {
	objs, locks := world()
	_, r := newReader(t, objs...)
	snap, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Results) != len(locks) {
		var got []string
		for _, res := range rep.Results {
			got = append(got, res.Facts.Lease.Namespace+"/"+res.Facts.Lease.Name)
		}
		t.Fatalf("%d results, want %d: %v", len(rep.Results), len(locks), got)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
	verdicts := map[v1alpha1.Verdict]bool{}
	for _, l := range locks {
		res := resultOf(t, rep, l.ref.Namespace, lockName(l.ref))
		wantVerdict(t, res, l.verdict, l.reason...)
		verdicts[res.Decision.Verdict] = true
	}
	if len(verdicts) != 5 {
		t.Errorf("verdicts %v: the world should have all five", verdicts)
	}
	// What the snapshot holds for them, as pkg/inspect's fixtures expect.
	if p := snap.Pods[inspect.Key("default", runnerPodName(lost))]; p == nil || p.Exists {
		t.Errorf("lost's holder pod %+v: want read and proven gone", p)
	}
	if p := snap.Pods[inspect.Key("default", runnerPodName(quiet))]; p == nil || !p.Exists {
		t.Errorf("quiet's unlabelled holder pod %+v: want read by name", p)
	}
	if _, ok := snap.Pods[inspect.Key("default", "web-0")]; ok {
		t.Error("a pod that is no holder and not labelled was kept")
	}
	if _, ok := snap.Objects[web1]; ok {
		t.Error("web-1 holds no lock, yet was read in full")
	}
	if u := snap.Objects[m1]; u == nil || u.GetManagedFields() != nil {
		t.Errorf("m1, a held lock's owner, read in full: %v", u)
	}
	if _, ok := snap.Objects[idle]; ok {
		t.Error("idle's lock is not held, yet its owner was read in full")
	}
	if got := rep.Results[0].Facts.Lease.Namespace; got != "default" {
		t.Errorf("first result in %s: want the report ordered by namespace", got)
	}
	demoRes := resultOf(t, rep, "default", lockName(demo))
	if demoRes.ActiveJobName() != runnerJobName(demo, 2) {
		t.Errorf("demo's active Job %q, want %s", demoRes.ActiveJobName(), runnerJobName(demo, 2))
	}
	if st, ok := snap.States["team-a/"+m1.Suffix()]; !ok || st.Presence != jobgate.Present {
		t.Errorf("m1's state Secret: %+v, %v", st, ok)
	}

	for _, all := range rep.Results {
		l := all.Facts.Lease
		name := l.Namespace + "/" + l.Name
		if o := all.Facts.Owner; o != nil {
			name = l.Namespace + "/" + o.Ref.String()
		}
		t.Run(name, func(t *testing.T) {
			_, one := readOne(t, r, l.Namespace, l.Name)
			if !reflect.DeepEqual(one.Decision, all.Decision) {
				t.Errorf("ReadLock decides %s (%s), Read %s (%s)\nsteps %+v\nvs    %+v", one.Decision.Verdict, one.Decision.Reason,
					all.Decision.Verdict, all.Decision.Reason, one.Decision.Steps, all.Decision.Steps)
			}
			if one.ActiveJobName() != all.ActiveJobName() || !reflect.DeepEqual(one.Facts.Owner, all.Facts.Owner) ||
				!slices.Equal(one.Unreadable, all.Unreadable) || !reflect.DeepEqual(one.Death, all.Death) {
				t.Errorf("ReadLock: job %q owner %+v unreadable %v death %+v; Read: job %q owner %+v unreadable %v death %+v",
					one.ActiveJobName(), one.Facts.Owner, one.Unreadable, one.Death, all.ActiveJobName(), all.Facts.Owner, all.Unreadable, all.Death)
			}
			if one.Source == nil || one.Source.Name != l.Name || one.Source.ResourceVersion != l.ResourceVersion {
				t.Errorf("ReadLock kept the Lease as %+v", one.Source)
			}
		})
	}
}

// No lock in scope: only the Leases are listed.
func TestReadWithoutLocks(t *testing.T) {
	objs := append(otherLeases("default"), captfObject(demo, nil), podOf("default", runnerPodName(demo), corev1.PodRunning, true))
	srv, r := newReader(t, objs...)
	_, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Results) != 0 {
		t.Fatalf("%d results", len(rep.Results))
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Verb != "list" || reqs[0].Resource != "leases" {
		t.Errorf("%d requests, want the Leases list alone:%s", len(reqs), describe(reqs))
	}
}

// Scope: a namespace, all namespaces, all workspaces, a label selector on
// the Leases; CAPTF's own Leases are never locks.
func TestReadScope(t *testing.T) {
	objs, _ := world()
	srv, r := newReader(t, objs...)
	names := func(s inspect.Scope) []string {
		_, rep := readAll(t, r, s)
		var out []string
		for _, res := range rep.Results {
			l := res.Facts.Lease
			if !inspect.IsLockLease(l.Name) {
				t.Errorf("%+v: %s/%s is no lock Lease", s, l.Namespace, l.Name)
			}
			out = append(out, l.Namespace+"/"+l.Name)
		}
		sort.Strings(out)
		return out
	}
	all := names(inspect.Scope{})
	if len(all) != 12 || slices.Contains(all, "default/"+stagingName) {
		t.Errorf("all namespaces: %v", all)
	}
	srv.ResetRequests()
	inDefault := names(inspect.Scope{Namespace: "default"})
	if len(inDefault) != 10 || slices.ContainsFunc(inDefault, func(s string) bool { return !strings.HasPrefix(s, "default/") }) {
		t.Errorf("namespace default: %v", inDefault)
	}
	if reqs := srv.Requests(); countWhere(reqs, func(q fakeapi.Request) bool { return q.Resource != "" && q.Namespace != "default" && q.Verb == "list" }) != 0 {
		t.Errorf("a namespaced read listed beyond its namespace:%s", describe(reqs))
	}
	teamA := []string{"team-a/" + lockName(m1), "team-a/" + lockName(web)}
	sort.Strings(teamA)
	if got := names(inspect.Scope{Namespace: "team-a"}); !reflect.DeepEqual(got, teamA) {
		t.Errorf("namespace team-a: %v", got)
	}
	withStaging := names(inspect.Scope{Namespace: "default", AllWorkspaces: true})
	if len(withStaging) != 11 || !slices.Contains(withStaging, "default/"+stagingName) {
		t.Errorf("all workspaces: %v", withStaging)
	}
	srv.ResetRequests()
	if got := names(inspect.Scope{Selector: inspect.LabelWorkspace + "=staging", AllWorkspaces: true}); !reflect.DeepEqual(got, []string{"default/" + stagingName}) {
		t.Errorf("selector: %v", got)
	}
	if reqs := srv.Requests(); reqs[0].Resource != "leases" || reqs[0].Query.Get("labelSelector") != inspect.LabelWorkspace+"=staging" {
		t.Errorf("the selector is not the Leases list's: %+v", reqs[0])
	}
	// The staging lock is no lock CAPTF reads, whoever holds it.
	_, rep := readAll(t, r, inspect.Scope{Namespace: "default", AllWorkspaces: true})
	wantVerdict(t, resultOf(t, rep, "default", stagingName), v1alpha1.Foreign, `workspace "staging"`)
}

// The Leases arrive as protobuf, as the plugin asks, and only the lock
// Leases among them come out: CAPTF's own (captf-run-*, captf-cluster-*)
// and others' are skipped.
func TestReadLeasesAsProtobufSkipsOtherLeases(t *testing.T) {
	var objs []runtime.Object
	var want []string
	for i := range 5 {
		ref := object.Ref{Kind: object.TerraformCluster, Namespace: "ns", Name: fmt.Sprintf("c%d", i)}
		objs = append(objs, lockLease(ref, nil, nil), captfObject(ref, nil))
		want = append(want, lockName(ref))
		objs = append(objs, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "captf-run-" + ref.Suffix(), Namespace: "ns"}})
	}
	objs = append(objs, otherLeases("ns")...)
	srv, r := newReader(t, objs...)
	_, rep := readAll(t, r, inspect.Scope{})
	var got []string
	for _, res := range rep.Results {
		got = append(got, res.Facts.Lease.Name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Leases %v, want %v", got, want)
	}
	for _, q := range srv.Requests() {
		if q.Resource != "leases" {
			continue
		}
		if mt, _, err := mime.ParseMediaType(strings.Split(q.Accept, ",")[0]); err != nil || mt != "application/vnd.kubernetes.protobuf" {
			t.Errorf("the Leases list asks for %q, not protobuf first", q.Accept)
		}
	}
}

// A holder pod that lost CAPTF's label is missing from the labelled list:
// one GET by name finds it alive.
func TestUnlabelledLiveHolderIsReadByName(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil),
		podOf("default", runnerPodName(demo), corev1.PodRunning, false))
	_, rep := readAll(t, r, inspect.Scope{Namespace: "default"})
	wantVerdict(t, resultOf(t, rep, "default", lockName(demo)), v1alpha1.Live, "is Running")
	reqs := srv.Requests()
	if n := countWhere(reqs, is("get", "pods")); n != 1 {
		t.Errorf("%d pod GETs, want 1:%s", n, describe(reqs))
	}
	for _, q := range reqs {
		if q.Verb == "get" && q.Resource == "pods" && (q.Name != runnerPodName(demo) || q.Namespace != "default") {
			t.Errorf("GET of %s/%s, want the holder's", q.Namespace, q.Name)
		}
	}
}

// Past holderGets holders missing from the labelled list, one list of
// every pod replaces the GETs: it proves the others gone and finds an
// unlabelled live one alike.
func TestManyMissingHoldersUseOneWholePodList(t *testing.T) {
	var objs []runtime.Object
	for i := range holderGets + 1 {
		ref := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: fmt.Sprintf("c%d", i)}
		objs = append(objs, heldLease(ref, "root@"+runnerPodName(ref)), captfObject(ref, nil))
	}
	c0 := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: "c0"}
	objs = append(objs, podOf("default", runnerPodName(c0), corev1.PodRunning, false), podOf("default", "web-0", corev1.PodRunning, false))
	srv, r := newReader(t, objs...)
	snap, rep := readAll(t, r, inspect.Scope{})
	for _, res := range rep.Results {
		if res.Facts.Owner.Ref == c0 {
			wantVerdict(t, res, v1alpha1.Live, "is Running")
		} else {
			wantVerdict(t, res, v1alpha1.Stale, "no longer exists")
		}
	}
	if len(rep.Results) != holderGets+1 {
		t.Errorf("%d results", len(rep.Results))
	}
	if _, ok := snap.Pods["default/web-0"]; ok {
		t.Error("the whole list kept a pod that is no holder")
	}
	reqs := srv.Requests()
	whole := countWhere(reqs, func(q fakeapi.Request) bool {
		return q.Verb == "list" && q.Resource == "pods" && q.Query.Get("labelSelector") == ""
	})
	if n := countWhere(reqs, is("get", "pods")); n != 0 || whole != 1 {
		t.Errorf("%d pod GETs and %d whole pod lists, want none and one:%s", n, whole, describe(reqs))
	}
}

// A holder host client-go refuses ("/", "%", ".."), or one no pod can
// have, is never put into a request, whether every lock is read or one.
func TestInvalidHolderHostsAreNeverRequested(t *testing.T) {
	for _, c := range []struct {
		who     string
		verdict v1alpha1.Verdict
		says    string
	}{
		{"root@captf-c-demo-apply-a1-d72d2a-ab/cd", v1alpha1.Stale, "may not contain '/'"},
		{"root@captf-c-demo-apply-a1-d72d2a-ab%cd", v1alpha1.Stale, "may not contain '%'"},
		{"root@captf-c-demo-apply-a1-d72d2a-AB_CD", v1alpha1.Stale, "not a valid pod name"},
		{"alice@host/../../secrets", v1alpha1.Foreign, "holder host host/../../secrets is not a runner pod"},
		{"alice@..", v1alpha1.Foreign, "holder host .. is not a runner pod"},
	} {
		t.Run(c.who, func(t *testing.T) {
			srv, r := newReader(t, heldLease(demo, c.who), captfObject(demo, nil), stateSecretOf(demo))
			_, rep := readAll(t, r, inspect.Scope{})
			wantVerdict(t, resultOf(t, rep, "default", lockName(demo)), c.verdict, c.says)
			_, one := readOne(t, r, "default", lockName(demo))
			wantVerdict(t, one, c.verdict, c.says)
			_, host, _ := strings.Cut(c.who, "@")
			for _, q := range srv.Requests() {
				sent := q.Path
				for _, v := range q.Query {
					sent += " " + strings.Join(v, " ")
				}
				if q.Verb == "get" && q.Resource == "pods" || q.Resource == "secrets" || strings.Contains(sent, host) || strings.Contains(q.Path, "..") {
					t.Errorf("a request for the holder host: %s %s?%s", q.Verb, q.Path, q.Query.Encode())
				}
			}
		})
	}
}

// Without pods no verdict can be given: a pod list RBAC refuses fails the
// read, in one line naming the resource and the namespace.
func TestPodsForbiddenFailsTheRead(t *testing.T) {
	for _, ns := range []string{"default", ""} {
		srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil))
		forbidden(srv, is("list", "pods"))
		snap, err := r.Read(testCtx(t), inspect.Scope{Namespace: ns})
		where := `in namespace "default"`
		if ns == "" {
			where = "in all namespaces"
		}
		if err == nil || !strings.Contains(err.Error(), "cannot list pods "+where) || strings.Contains(err.Error(), "\n") {
			t.Errorf("namespace %q: snapshot %v, err %v", ns, snap != nil, err)
		}
		t.Logf("namespace %q: %v", ns, err)
	}
}

// Jobs and one CAPTF kind that cannot be listed degrade the verdicts and
// say so: a warning each, the lock Stale with its owner unreadable.
func TestJobsAndAKindForbiddenDegrade(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil), runnerJob(demo, runnerJobName(demo, 1), false))
	forbidden(srv, is("list", "jobs"))
	forbidden(srv, is("list", "terraformclusters"))
	_, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Warnings) != 2 {
		t.Fatalf("warnings %q, want 2", rep.Warnings)
	}
	for n, w := range []string{"cannot list terraformclusters." + object.Group, "cannot list jobs.batch"} {
		if !strings.Contains(strings.Join(rep.Warnings, "|"), w) || strings.Contains(rep.Warnings[n], "\n") {
			t.Errorf("warnings %q lack %q", rep.Warnings, w)
		}
	}
	res := resultOf(t, rep, "default", lockName(demo))
	// The holder pod's name still identifies the object; whether it
	// exists is unknown.
	wantVerdict(t, res, v1alpha1.Stale, "could not be read")
	if res.Decision.CAPTFClears || !slices.Equal(res.Unreadable, []string{"terraformclusters", "jobs"}) || res.ActiveJob != nil {
		t.Errorf("clears %v, unreadable %v, active Job %v", res.Decision.CAPTFClears, res.Unreadable, res.ActiveJob)
	}
	if o := res.Facts.Owner; o == nil || o.Exists != nil || o.Via != "holder pod name" {
		t.Errorf("owner %+v, want from the holder pod name, existence unknown", o)
	}
	_, one := readOne(t, r, "default", lockName(demo))
	if !reflect.DeepEqual(one.Decision, res.Decision) || !slices.Equal(one.Unreadable, res.Unreadable) {
		t.Errorf("ReadLock: %s (%s) unreadable %v", one.Decision.Verdict, one.Decision.Reason, one.Unreadable)
	}
}

// Without CAPTF's CRDs, the holder pod's name still names the object,
// which then does not exist; a workstation's lock names none.
func TestWithoutCAPTFCRDs(t *testing.T) {
	srv, r := newReaderWith(t, fakeapi.Options{CustomResources: []fakeapi.CustomResource{}},
		heldLease(demo, "root@"+runnerPodName(demo)), heldLease(laptop, "alice@laptop"))
	_, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q: a kind not served is no failure", rep.Warnings)
	}
	res := resultOf(t, rep, "default", lockName(demo))
	wantVerdict(t, res, v1alpha1.Stale, "no longer exists")
	if o := res.Facts.Owner; o == nil || o.Via != "holder pod name" || o.Exists == nil || *o.Exists {
		t.Errorf("owner %+v", o)
	}
	wantVerdict(t, resultOf(t, rep, "default", lockName(laptop)), v1alpha1.Foreign, "no CAPTF object owns suffix "+laptop.Suffix(), "serves none")
	for _, k := range object.Kinds {
		if n := srv.Count("list", k.Resource); n != 1 {
			t.Errorf("%d lists of %s, want 1", n, k.Resource)
		}
	}
	_, one := readOne(t, r, "default", lockName(demo))
	if one.Decision.Reason != res.Decision.Reason {
		t.Errorf("ReadLock: %q", one.Decision.Reason)
	}
}

// A Job is kept with the two runner args the force-unlock evidence reads
// (its --force-unlock and --image) and nothing else of its spec: the rest
// (env, volumes, the other args) costs memory and decides nothing.
func TestJobsKeepOnlyTheirForceUnlockAndImage(t *testing.T) {
	j := runnerJob(demo, runnerJobName(demo, 1), false)
	j.Spec.Template.Spec.Containers = []corev1.Container{
		{Name: "source", Image: "registry.example/mod:1", Args: []string{"--op=apply", "--image=registry.example/mod:1", "--backend-config=namespace=default", "--force-unlock=abc"},
			Env: []corev1.EnvVar{{Name: "TF_INPUT", Value: "0"}}},
		{Name: "sidecar", Args: []string{"--verbose"}},
	}
	j.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "runner", Args: []string{"--force-unlock=not-this"}}}
	_, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), captfObject(demo, nil), j)
	snap, err := r.Read(context.Background(), inspect.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 1 {
		t.Fatalf("%d Jobs", len(snap.Jobs))
	}
	want := batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "source", Args: []string{"--image=registry.example/mod:1", "--force-unlock=abc"}}}}}}
	if got := snap.Jobs[0].Spec; !reflect.DeepEqual(got, want) {
		t.Errorf("kept spec %+v, want %+v", got, want)
	}
}
