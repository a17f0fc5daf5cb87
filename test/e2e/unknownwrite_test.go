package e2e

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// forwardThenDrop forwards the request to the real server, then drops the
// connection without an answer: the write is applied and the plugin never
// hears of it, as when an API server restarts or a load balancer resets
// mid-write.
func forwardThenDrop(t *testing.T, w http.ResponseWriter, r *http.Request, fwd http.HandlerFunc) {
	rec := httptest.NewRecorder()
	fwd(rec, r)
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("the proxy cannot drop a connection")
		return
	}
	c, _, err := hj.Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	c.Close()
}

// A write the server applied but whose answer was lost is read again,
// reported and recorded as an unlock, so every cleared Lease has its
// Event; --all-stale goes on only once it knows (review27b F1).
func TestUnlockAllStaleAnswerLostIsStillRecorded(t *testing.T) {
	ns := "unknown-write"
	refs := staleLocks(t, ns, "a", "b", "c")
	fwd := adminForward(t)
	var mu sync.Mutex
	puts := 0
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/leases/") {
			return false
		}
		mu.Lock()
		puts++
		first := puts == 1
		mu.Unlock()
		if first {
			forwardThenDrop(t, w, r, fwd)
		}
		return first
	})
	res := captf(t, kc, "unlock", "--all-stale", "--confirm")
	cleared, events := clearedLeases(t, refs), unlockEventCount(t, ns)
	if cleared != 3 || events != 3 {
		t.Errorf("cleared %d locks, %d Events; want 3 and 3\n%s%s", cleared, events, res.out, res.err)
	}
	if !strings.Contains(res.out+res.err, "the answer to the write was lost") {
		t.Errorf("nothing says the write's answer was lost:\n%s%s", res.out, res.err)
	}
}

// A single unlock interrupted while its write is in flight, whose answer
// is then lost, still reports and records the write it made, and exits
// as interrupted (review27b F2).
func TestUnlockInterruptedAnswerLostIsStillRecorded(t *testing.T) {
	ns := "unknown-write-one"
	refs := staleLocks(t, ns, "a")
	fwd := adminForward(t)
	var mu sync.Mutex
	var cmd *exec.Cmd
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/leases/") {
			return false
		}
		mu.Lock()
		_ = cmd.Process.Signal(syscall.SIGINT)
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		forwardThenDrop(t, w, r, fwd)
		return true
	})
	mu.Lock()
	cmd = exec.Command(plugin, "--kubeconfig", kc, "unlock", "terraformcluster/a", "--confirm")
	cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		mu.Unlock()
		t.Fatal(err)
	}
	mu.Unlock()
	_ = cmd.Wait()
	cleared, events := clearedLeases(t, refs), unlockEventCount(t, ns)
	if cleared != 1 || events != 1 || cmd.ProcessState.ExitCode() != 130 {
		t.Errorf("exit %d, cleared %d, %d Events; want 130, 1 and 1\n%s%s", cmd.ProcessState.ExitCode(), cleared, events, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Unlocked: ") || !strings.Contains(out.String()+errb.String(), "the answer to the write was lost") {
		t.Errorf("the write is not reported:\n%s%s", out.String(), errb.String())
	}
}

// --reconcile does not patch the object after an unlock whose Event was
// refused: no write follows one not on record (review27b F3).
func TestReconcileNotAfterAnUnrecordedUnlock(t *testing.T) {
	ns := "unrecorded-reconcile"
	refs := staleLocks(t, ns, "a", "b")
	var mu sync.Mutex
	var writes []string
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodGet {
			mu.Lock()
			writes = append(writes, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/events") {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"admission webhook \"deny.events\" denied the request","reason":"Forbidden","code":403}`))
		return true
	})
	res := captf(t, kc, "unlock", "--all-stale", "--confirm", "--reconcile")
	if res.code != 1 || clearedLeases(t, refs) != 1 {
		t.Errorf("exit %d, %d cleared; want 1 and 1\n%s%s", res.code, clearedLeases(t, refs), res.out, res.err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range writes {
		if strings.HasPrefix(w, "PATCH") {
			t.Errorf("a write after an unlock not on record: %s (all: %v)", w, writes)
		}
	}
}

// A write answered with kube-apiserver's own timeout may still be applied
// after the plugin reads the Lease again and finds it unchanged, so an
// unchanged Lease is no proof that nothing was written: the run says the
// write may have reached the server and stops before any other write
// (review27c N1).
func TestUnlockAllStaleStopsAfterATimedOutWrite(t *testing.T) {
	ns := "timed-out-write"
	refs := staleLocks(t, ns, "a", "b", "c")
	var mu sync.Mutex
	puts := 0
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/leases/") {
			return false
		}
		mu.Lock()
		puts++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGatewayTimeout)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}`))
		return true
	})
	res := captf(t, kc, "unlock", "--all-stale", "--confirm")
	mu.Lock()
	defer mu.Unlock()
	if res.code != 1 || puts != 1 || clearedLeases(t, refs) != 0 {
		t.Errorf("exit %d, %d writes sent, %d cleared; want 1, 1 and 0\n%s%s", res.code, puts, clearedLeases(t, refs), res.out, res.err)
	}
	if out := flat(res.out + res.err); !strings.Contains(out, "may still be applied") || strings.Contains(out, "nothing was written") {
		t.Errorf("the output does not say the write may still be applied, or says nothing was written:\n%s", out)
	}
}
