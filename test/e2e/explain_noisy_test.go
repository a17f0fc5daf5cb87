package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// eventAbout creates an events.k8s.io Event about kind/name in ns, as a
// controller reports it.
func eventAbout(t *testing.T, ns, kind, name, reason, note string) {
	t.Helper()
	if err := createEvent(ns, kind, name, reason, note); err != nil {
		t.Fatal(err)
	}
}

func createEvent(ns, kind, name, reason, note string) error {
	e := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(name) + "-", Namespace: ns},
		EventTime:  metav1.NewMicroTime(time.Now()),
		Regarding:  corev1.ObjectReference{Kind: kind, Name: name, Namespace: ns},
		Reason:     reason, Note: note, Type: corev1.EventTypeWarning, Action: "Run",
		ReportingController: "e2e.captf.io/seed", ReportingInstance: "e2e",
	}
	_, err := admin.Kube.EventsV1().Events(ns).Create(context.Background(), e, metav1.CreateOptions{})
	return err
}

// explain in a namespace full of other objects' Events (a management
// cluster's): the same explanation as without them, from the same
// requests, each list of Events selected on the server by the object it
// is about, so that the Events of other objects never reach the plugin.
// The lock is real terraform's, held by the object's own runner pod,
// gone.
func TestExplainInANoisyNamespace(t *testing.T) {
	ctx := context.Background()
	ns := "explain-noisy"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	pod := "captf-c-demo-apply-a1-d72d2a-x7k2p"
	if _, err := tf.LockAs(ctx, admin.Kube, r, pod); err != nil {
		t.Fatal(err)
	}
	eventAbout(t, ns, r.Kind.Name, r.Name, "StateLocked", "the state is locked")
	eventAbout(t, ns, "Pod", pod, "OOMKilling", "memory cgroup out of memory")
	var mu sync.Mutex
	var lists []string
	kc := newProxy(t, ns, func(_ http.ResponseWriter, q *http.Request, _ int) bool {
		if strings.HasSuffix(q.URL.Path, "/events") {
			mu.Lock()
			lists = append(lists, q.URL.Path+"?"+q.URL.Query().Get("fieldSelector"))
			mu.Unlock()
		}
		return false
	})
	explainOnce := func() (*v1alpha1.Explanation, []string, int) {
		mu.Lock()
		lists = nil
		mu.Unlock()
		x := explainJSONVia(t, kc, r.String())
		mu.Lock()
		got := slices.Sorted(slices.Values(lists))
		mu.Unlock()
		return x, got, requestCount(t, ns, "explain", r.String(), "-o", "json")
	}
	// Once first, so that both counts are of a warm discovery cache.
	requestCount(t, ns, "explain", r.String(), "-o", "json")
	quiet, quietLists, quietN := explainOnce()
	if quiet.Verdict != v1alpha1.Stale || len(quiet.Context.Events) != 1 || len(quiet.Context.RunnerEvents) != 1 {
		t.Fatalf("%s (%s), events %+v, runner events %+v", quiet.Verdict, quiet.Reason, quiet.Context.Events, quiet.Context.RunnerEvents)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 1000; i += 8 {
				if err := createEvent(ns, "Pod", fmt.Sprintf("app-%04d", i), "Pulled", "Successfully pulled image"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	noisy, noisyLists, noisyN := explainOnce()
	if !reflect.DeepEqual(quiet.Context, noisy.Context) || quiet.Verdict != noisy.Verdict || quiet.Reason != noisy.Reason || !reflect.DeepEqual(quiet.Steps, noisy.Steps) {
		t.Errorf("1,000 unrelated Events changed the explanation:\n%+v\n%+v", quiet.Context, noisy.Context)
	}
	if noisyN != quietN {
		t.Errorf("%d requests with 1,000 unrelated Events, %d without", noisyN, quietN)
	}
	if !reflect.DeepEqual(quietLists, noisyLists) || len(noisyLists) == 0 {
		t.Errorf("Events read\n%s\nthen\n%s", strings.Join(quietLists, "\n"), strings.Join(noisyLists, "\n"))
	}
	for _, l := range noisyLists {
		if !strings.Contains(l, "regarding.kind=") || !strings.Contains(l, "regarding.name=") {
			t.Errorf("a list of Events not selected by the object it is about: %s", l)
		}
	}
}

// explainJSONVia is explain -o json with a kubeconfig of its own.
func explainJSONVia(t *testing.T, kc string, args ...string) *v1alpha1.Explanation {
	t.Helper()
	res := captf(t, kc, append([]string{"explain", "-o", "json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("explain %v: exit %d: %s", args, res.code, res.err)
	}
	x := &v1alpha1.Explanation{}
	if err := json.Unmarshal([]byte(res.out), x); err != nil {
		t.Fatalf("decoding %q: %v", res.out, err)
	}
	return x
}
