package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

type event struct {
	Type   string        `json:"type"`
	Object v1alpha1.Lock `json:"object"`
}

// watchVia starts `locks -w -o json --output-watch-events` with more
// flags, through a kubeconfig, and streams its events.
func watchVia(t *testing.T, kubeconfig string, args ...string) (<-chan event, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(plugin, append([]string{"--kubeconfig", kubeconfig, "locks", "-w", "-o", "json", "--output-watch-events"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	events := make(chan event, 16)
	go func() {
		defer close(events)
		dec := json.NewDecoder(bufio.NewReader(out))
		for {
			var e event
			if err := dec.Decode(&e); err != nil {
				if err != io.EOF && !errors.Is(err, os.ErrClosed) {
					t.Logf("decoding the watch: %v", err)
				}
				return
			}
			events <- e
		}
	}()
	return events, cmd
}

// next waits for the next event; the bound is for liveness, not speed.
func next(t *testing.T, events <-chan event, what string) event {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatalf("the watch ended before %s", what)
		}
		return e
	case <-time.After(60 * time.Second):
		t.Fatalf("no event for %s in 60 s", what)
	}
	return event{}
}

// A watch sees Live -> Stale when the runner pod fails, keeps watching
// across a kube-apiserver restart (its watches end and must relist), and
// sees Stale -> Unlocked when a real terraform force-unlock clears it.
func TestWatch(t *testing.T) {
	ctx := context.Background()
	ns := "watch"
	r := newObject(t, ns, object.TerraformCluster, "demo")
	b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(r, testbed.ObjectCluster)}
	dir, err := tf.Init(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	host := "captf-c-demo-apply-a1-d72d2a-x7k2p"
	id, err := tf.KilledLock(ctx, admin.Kube, dir, b, host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := admin.RunnerPod(ctx, r, host, corev1.PodRunning)
	if err != nil {
		t.Fatal(err)
	}
	events, cmd := watchWith(t, ns)
	if e := next(t, events, "the initial list"); e.Type != "ADDED" || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("initial: %s %s", e.Type, e.Object.Verdict)
	}

	// The first list is printed once the watch is in place: no wait.
	p, err = admin.Kube.CoreV1().Pods(ns).Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetPhase(ctx, p, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events, "the pod failing"); e.Type != "MODIFIED" || e.Object.Verdict != v1alpha1.Stale || !strings.Contains(e.Object.Reason, "is Failed") {
		t.Fatalf("after the pod failed: %s %s %q", e.Type, e.Object.Verdict, e.Object.Reason)
	}

	// Force every watch to end; the informers reconnect and relist.
	if err := bed.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// Whether the change lands before or after the informers reconnect,
	// their relist or their new watch brings it.
	if out, err := tf.Run(ctx, dir, "force-unlock", "-force", id); err != nil {
		t.Fatalf("terraform force-unlock: %v\n%s", err, out)
	}
	if e := next(t, events, "terraform force-unlock"); e.Type != "MODIFIED" || e.Object.Verdict != v1alpha1.Unlocked {
		t.Fatalf("after force-unlock: %s %s", e.Type, e.Object.Verdict)
	}

	// Ctrl-C ends it cleanly.
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
}

// workstationLock is terraformmachine/db's lock, held from a workstation
// (Foreign) with the given ID; it returns the Lease's name.
func workstationLock(t *testing.T, ns, id string) string {
	t.Helper()
	r := newObject(t, ns, object.TerraformMachine, "db")
	info := testbed.LockInfo(id, "root@workstation", time.Now())
	if _, err := admin.LockLease(context.Background(), ns, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), &id, &info); err != nil {
		t.Fatal(err)
	}
	return object.LockLeaseName("default", r.Suffix())
}

// lockList is the test's own answer to the plugin's list of the Leases:
// the real list, read as admin, encoded as the server would.
func lockList(ctx context.Context, w http.ResponseWriter, ns string) error {
	list, err := admin.Kube.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	list.APIVersion, list.Kind = "coordination.k8s.io/v1", "LeaseList"
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(list)
}

// firstRead is true for the plugin's own list of the Leases, as opposed
// to its informer's (which lists from the watch cache, resourceVersion=0)
// and its watch.
func firstRead(r *http.Request) bool {
	q := r.URL.Query()
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/leases") && q.Get("watch") == "" && q.Get("resourceVersion") != "0"
}

// A lock that changes after the watch's first read, before its first
// event, is shown changed: the read is answered, then the lock is
// released, all before the plugin prints anything; the watch must then
// print it MODIFIED, Unlocked. No sleep: the proxy acts at that exact point.
func TestWatchSeesChangeAfterFirstRead(t *testing.T) {
	ns := "watchgap"
	name := workstationLock(t, ns, "11111111-2222-3333-4444-555555555555")
	var once sync.Once
	kc := newProxy(t, ns, func(w http.ResponseWriter, req *http.Request, _ int) bool {
		if !firstRead(req) {
			return false
		}
		answered := false
		once.Do(func() {
			answered = true
			if err := lockList(req.Context(), w, ns); err != nil {
				t.Errorf("answering the first read: %v", err)
				return
			}
			l, err := admin.Kube.CoordinationV1().Leases(ns).Get(req.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("reading the lock: %v", err)
				return
			}
			l.Spec.HolderIdentity = nil
			delete(l.Annotations, "app.terraform.io/lock-info")
			if _, err := admin.Kube.CoordinationV1().Leases(ns).Update(req.Context(), l, metav1.UpdateOptions{}); err != nil {
				t.Errorf("releasing the lock: %v", err)
			}
		})
		return answered
	})
	events, cmd := watchVia(t, kc)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr: %s", cmd.Stderr)
		}
	})
	if e := next(t, events, "the first list"); e.Type != "ADDED" || e.Object.Verdict != v1alpha1.Foreign {
		t.Fatalf("first list: %s %s, want ADDED Foreign (the lock as first read)", e.Type, e.Object.Verdict)
	}
	if e := next(t, events, "the release after the first read"); e.Type != "MODIFIED" || e.Object.Verdict != v1alpha1.Unlocked || e.Object.Name != name {
		t.Fatalf("after the release: %s %s %s, want MODIFIED Unlocked", e.Type, e.Object.Name, e.Object.Verdict)
	}
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
}

// Ctrl-C while a lock is being re-read ends the watch at once, without
// waiting for the read: the proxy holds the re-read until the test ends,
// so a plugin that waited behind it would still be running at interrupt's
// bound.
func TestWatchCtrlCDuringRecheck(t *testing.T) {
	ctx := context.Background()
	ns := "watchctrlc"
	name := workstationLock(t, ns, "11111111-2222-3333-4444-666666666666")
	held, release := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	var once sync.Once
	// A re-check decides from the informers' stores and reads live only
	// what they do not hold: here the lock's owner, in full.
	kc := newProxy(t, ns, func(w http.ResponseWriter, req *http.Request, _ int) bool {
		if !armed.Load() || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/terraformmachines/db") {
			return false
		}
		once.Do(func() { close(held) })
		<-release
		http.Error(w, "released", http.StatusServiceUnavailable)
		return true
	})
	t.Cleanup(func() { close(release) })
	events, cmd := watchVia(t, kc)
	if e := next(t, events, "the first list"); e.Type != "ADDED" {
		t.Fatalf("first list: %s", e.Type)
	}
	armed.Store(true)
	l, err := admin.Kube.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Labels["touched"] = "yes"
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the watch did not re-read the changed lock in 60 s")
	}
	start := time.Now()
	if code := interrupt(t, cmd); code != 130 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	t.Logf("Ctrl-C during a re-read: ended in %s", time.Since(start).Round(time.Millisecond))
}
