package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
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

// watchEvents starts `locks -w -o json --output-watch-events` and streams
// its events.
func watchEvents(t *testing.T, ns string) (<-chan event, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(plugin, "--kubeconfig", kubeconfigIn(t, ns), "locks", "-w", "-o", "json", "--output-watch-events")
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
	b := testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.OwnerLabels(r)}
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
	events, cmd := watchEvents(t, ns)
	if e := next(t, events, "the initial list"); e.Type != "ADDED" || e.Object.Verdict != v1alpha1.Live {
		t.Fatalf("initial: %s %s", e.Type, e.Object.Verdict)
	}

	time.Sleep(2 * time.Second) // let the informers sync before the change
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
	time.Sleep(3 * time.Second)
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
