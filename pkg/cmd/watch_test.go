package cmd

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
)

// syncBuffer is a buffer the watch writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watching runs `kubectl captf locks -w ...` on the factory until the
// test cancels it, and returns its stdout and its exit code.
func watching(t *testing.T, f *factory, args ...string) (out *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &syncBuffer{}}
	code := make(chan int, 1)
	go func() { code <- execute(ctx, streams, append([]string{"locks", "-w"}, args...), f) }()
	t.Cleanup(cancel)
	return out, func() int {
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("the watch did not end 30 s after its context")
		}
		return -1
	}
}

// waitFor waits until the output has n lines; the bound is for liveness.
func waitFor(t *testing.T, out *syncBuffer, n int, what string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s := out.String(); strings.Count(s, "\n") >= n {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in 30 s; output so far:\n%s", what, out.String())
	return ""
}

// release clears a lock as the runtimes' Unlock does, on the server
// (the watch sees it as any other client's write).
func release(t *testing.T, srv *fakeapi.Server, ns, name string) {
	t.Helper()
	l := trackedLease(t, srv, ns, name)
	l.Spec.HolderIdentity = nil
	delete(l.Annotations, "app.terraform.io/lock-info")
	if err := srv.Tracker().Update(leasesGVR, l, ns); err != nil {
		t.Fatal(err)
	}
}

// A watch's later rows stay under the first table's columns, and Ctrl-C
// (the context) ends it with 130.
func TestGoldenWatchRowsAligned(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"locks-watch.txt", nil},
		{"locks-watch-events-wide.txt", []string{"--output-watch-events", "-o", "wide"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, srv := verdictsWorld().factory(t)
			out, stop := watching(t, f, c.args...)
			waitFor(t, out, 6, "first table")
			release(t, srv, "infra", "lock-tfstate-default-693ddee8b12cf355-m") // db: Foreign -> Unlocked
			got := waitFor(t, out, 7, "row for the released lock")
			if code := stop(); code != ExitInterrupted {
				t.Errorf("exit %d after the context ended, want %d", code, ExitInterrupted)
			}
			golden(t, c.name, got)
		})
	}
}

// With --output-watch-events, json prints kubectl's WatchEvent, one per
// line; with --verdict, a lock leaving the filter is DELETED.
func TestWatchEventsJSON(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	out, stop := watching(t, f, "--output-watch-events", "-o", "json", "--verdict", "Foreign")
	first := waitFor(t, out, 1, "first event")
	release(t, srv, "infra", "lock-tfstate-default-693ddee8b12cf355-m")
	got := waitFor(t, out, 2, "DELETED event")
	stop()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if !strings.HasPrefix(first, `{"type":"ADDED","object":{"kind":"Lock","apiVersion":"captf.io/v1alpha1"`) ||
		!strings.HasPrefix(lines[1], `{"type":"DELETED","object":{"kind":"Lock"`) || !strings.Contains(lines[1], `"verdict":"Foreign"`) {
		t.Errorf("events:\n%s", got)
	}
}
