package cluster

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// coreEvent is a core/v1 Event about kind/name in ns.
func coreEvent(ns, kind, name, reason string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: strings.ToLower(kind + "." + name + "." + reason), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, Namespace: ns},
		Reason:         reason, Type: "Warning", Message: reason,
	}
}

// Where events.k8s.io cannot be listed, the Events come from core/v1,
// selected on the server as well, by involvedObject: one request about
// the object, one about its holder pod, one about that pod's Job; the
// Events about anything else never reach the client.
func TestReadExplainedSelectsCoreEvents(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "infra", Name: "demo"}
	pod := runnerPodName(r)
	job := runnerJobName(r, 1)
	objs := []runtime.Object{
		heldLease(r, "root@"+pod), captfObject(r, nil),
		coreEvent(r.Namespace, "TerraformCluster", "demo", "StateLocked"),
		coreEvent(r.Namespace, "Pod", pod, "OOMKilling"),
		coreEvent(r.Namespace, "Job", job, "DeadlineExceeded"),
		coreEvent(r.Namespace, "TerraformCluster", "other", "StateLocked"),
		coreEvent(r.Namespace, "Pod", "unrelated", "Killing"),
	}
	srv, rd := newReader(t, objs...)
	forbidden(srv, func(q fakeapi.Request) bool { return q.Group == "events.k8s.io" })
	snap, a, err := rd.ReadExplained(testCtx(t), r.Namespace, lockName(r), &r, nil)
	if err != nil || snap == nil {
		t.Fatalf("snapshot %v, error %v", snap, err)
	}
	names := func(evs []inspect.Event) (out []string) {
		for _, e := range evs {
			out = append(out, e.Kind+"/"+e.Name+"/"+e.Summary.Reason)
		}
		return out
	}
	if got := names(a.ObjectEvents); !slices.Equal(got, []string{"TerraformCluster/demo/StateLocked"}) {
		t.Errorf("object events %q", got)
	}
	if got := names(a.RunnerEvents); !slices.Equal(got, []string{"Pod/" + pod + "/OOMKilling", "Job/" + job + "/DeadlineExceeded"}) {
		t.Errorf("runner events %q", got)
	}
	if a.Unreadable != nil || a.Object == nil {
		t.Errorf("unreadable %q, object %v", a.Unreadable, a.Object)
	}
	var selectors []string
	for _, q := range srv.Requests() {
		if q.Resource == "events" && q.Group == "" {
			selectors = append(selectors, q.Query.Get("fieldSelector"))
		}
	}
	slices.Sort(selectors)
	want := []string{
		"involvedObject.kind=Job,involvedObject.name=" + job,
		"involvedObject.kind=Pod,involvedObject.name=" + pod,
		"involvedObject.kind=TerraformCluster,involvedObject.name=demo",
	}
	if !slices.Equal(selectors, want) {
		t.Errorf("core Event requests select\n%s\nwant\n%s", strings.Join(selectors, "\n"), strings.Join(want, "\n"))
	}
}

// When neither Events API can be listed, that is one line, with
// events.k8s.io's error; the rest is read as ever.
func TestReadExplainedEventsUnreadable(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "infra", Name: "demo"}
	srv, rd := newReader(t, heldLease(r, "root@"+runnerPodName(r)), captfObject(r, nil), stateSecretOf(r))
	forbidden(srv, is("list", "events"))
	_, a, err := rd.ReadExplained(testCtx(t), r.Namespace, lockName(r), &r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Unreadable) != 1 || !strings.HasPrefix(a.Unreadable[0], "events: ") || !strings.Contains(a.Unreadable[0], `"events.k8s.io"`) {
		t.Errorf("unreadable %q", a.Unreadable)
	}
	if !slices.Equal(a.SecretNames, []string{object.StateSecretName(object.DefaultWorkspace, r.Suffix())}) {
		t.Errorf("secret names %q", a.SecretNames)
	}
	for _, q := range srv.Requests() {
		if q.Resource == "secrets" && (q.Verb != "list" || !strings.Contains(q.Accept, "as=PartialObjectMetadataList")) {
			t.Errorf("Secrets read other than by metadata: %s %s", q.Verb, q.Path)
		}
	}
}

// The runner names are the holder pod and its Job, for one of the
// object's own pods only.
func TestRunnerNames(t *testing.T) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: "infra", Name: "demo"}
	if names := runnerNames(nil); names != nil {
		t.Errorf("runner names of no lock: %q", names)
	}
	for who, want := range map[string][]string{
		"root@" + runnerPodName(r): {runnerPodName(r), runnerJobName(r, 1)},
		"alice@laptop":             nil,
	} {
		snap := &inspect.Snapshot{Leases: []inspect.Lease{inspect.ParseLease(heldLease(r, who))}}
		res, _ := inspect.DecideLock(snap, r.Namespace, lockName(r))
		if got := runnerNames(&res); !slices.Equal(got, want) {
			t.Errorf("%s: runner names %q, want %q", who, got, want)
		}
	}
}
