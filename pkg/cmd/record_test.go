package cmd

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// staleWorld has n Stale locks in infra, their runner pods gone.
func staleWorld(n int) *world {
	w := newWorld("infra")
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		w.lock(w.object(object.TerraformCluster, name), fmt.Sprintf("cccccccc-0000-0000-0000-%012d", i), "root@captf-c-"+name+"-apply-a1-d72d2a-x7k2p", "", clock.Add(-time.Hour))
	}
	return w
}

// cleared counts the Leases of infra that no longer have a holder.
func cleared(t *testing.T, srv *fakeapi.Server, w *world) int {
	t.Helper()
	n := 0
	for _, o := range w.objs {
		if l, ok := o.(interface{ GetName() string }); ok && strings.HasPrefix(l.GetName(), object.LockLeasePrefix) {
			if trackedLease(t, srv, "infra", l.GetName()).Spec.HolderIdentity == nil {
				n++
			}
		}
	}
	return n
}

// flat folds wrapped output into one line, as a reader reads it.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

var createEvents = func(r fakeapi.Request) bool { return r.Verb == "create" && r.Resource == "events" }

// An unlock whose Event the server refuses is cleared, but not on
// record: the command fails (exit 1) with a line that says so, and
// --all-stale stops before its next write.
func TestUnrecordedUnlockFails(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", fmt.Errorf("no create"))

	w := verdictsWorld()
	f, srv := w.factory(t)
	srv.Intercept(fakeapi.Fail(createEvents, forbidden))
	res := captf(t, f, "unlock", "terraformmachine/web-1", "--confirm")
	if res.code != ExitError || !strings.Contains(res.out, "Unlocked: ") ||
		!strings.Contains(res.err, "Warning: the unlock was not recorded as an Event: ") ||
		!strings.HasSuffix(res.err, "error: lease lock-tfstate-default-2f32fa8c86da1c86-m in namespace infra was unlocked, but the unlock is not on record: its Event could not be created (the warning above says why)\n") {
		t.Errorf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	if n := srv.Count("create", "events"); n != 1 {
		t.Errorf("%d creates of a refused Event, want 1 (a refusal is not sent again)", n)
	}

	w = staleWorld(4)
	f, srv = w.factory(t)
	srv.Intercept(fakeapi.Fail(createEvents, forbidden))
	res = captf(t, f, "unlock", "--all-stale", "--confirm")
	if res.code != ExitError || !strings.Contains(flat(res.out), "1 stale lock: unlocked 1. Stopped: the last unlock could not be recorded as an Event") ||
		!strings.Contains(res.err, "the run stopped there, so no other lock was cleared") {
		t.Errorf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	if n := cleared(t, srv, w); n != 1 {
		t.Errorf("%d locks cleared, want 1: none after the one not on record", n)
	}

	// json: the document, then the error.
	f, srv = staleWorld(3).factory(t)
	srv.Intercept(fakeapi.Fail(createEvents, forbidden))
	res = captf(t, f, "unlock", "--all-stale", "--confirm", "-o", "json")
	if res.code != ExitError || strings.Count(res.out, `"action": "Unlocked"`) != 1 || !strings.Contains(res.out, "the unlock was not recorded as an Event") {
		t.Errorf("json: exit %d\n%s%s", res.code, res.out, res.err)
	}
}

// An Event create that failed without a refusal (a 500) is sent again and
// recorded; so is one whose answer was lost after the server stored it:
// the second create finds its fixed name taken, and one Event is kept.
func TestEventCreateIsRetried(t *testing.T) {
	for _, stored := range []bool{false, true} {
		f, srv := verdictsWorld().factory(t)
		failed := 0
		srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if !createEvents(fakeapi.RequestInfo(r)) || failed > 0 {
				return false
			}
			failed++
			if stored {
				ev := decodeBody(t, fakeapi.RequestInfo(r))
				if err := srv.Tracker().Create(eventsGVR, ev, "infra"); err != nil {
					t.Error(err)
				}
			}
			fakeapi.WriteError(w, apierrors.NewInternalError(fmt.Errorf("injected")))
			return true
		})
		res := captf(t, f, "unlock", "terraformmachine/web-1", "--confirm")
		if res.code != 0 || !strings.Contains(res.out, "Recorded Event ") || res.err != "" {
			t.Errorf("stored %v: exit %d\n%s%s", stored, res.code, res.out, res.err)
		}
		if n := len(events(t, srv, "infra")); n != 1 {
			t.Errorf("stored %v: %d Events, want 1", stored, n)
		}
	}
}

var eventsGVR = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// Impersonation set on the kubeconfig's user (as:, as-groups:), not on
// the command line, is impersonation all the same: the Event says so.
func TestKubeconfigImpersonationIsInTheEvent(t *testing.T) {
	for _, c := range []struct {
		name   string
		user   clientcmdapi.AuthInfo
		as     string // --as
		marked bool
	}{
		{"none", clientcmdapi.AuthInfo{}, "", false},
		{"as: in the kubeconfig", clientcmdapi.AuthInfo{Impersonate: "alice"}, "", true},
		{"as: and as-groups:", clientcmdapi.AuthInfo{Impersonate: "alice", ImpersonateGroups: []string{"ops"}}, "", true},
		{"--as", clientcmdapi.AuthInfo{}, "alice", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, srv := verdictsWorld().factory(t)
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: srv.URL()}
			cfg.AuthInfos["test"] = &c.user
			cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test", Namespace: "infra"}
			cfg.CurrentContext = "test"
			kc := t.TempDir() + "/kubeconfig"
			if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
				t.Fatal(err)
			}
			// The clients come from the kubeconfig and the flags, as in
			// production.
			flags := genericclioptions.NewConfigFlags(false)
			flags.KubeConfig, flags.Impersonate = &kc, &c.as
			f.getter, f.flags, f.clients = flags, flags, nil
			s, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := execute(context.Background(), s, []string{"unlock", "terraformmachine/web-1", "--confirm"}, f)
			evs := events(t, srv, "infra")
			if code != 0 || len(evs) != 1 {
				t.Fatalf("exit %d, %d Events\n%s%s", code, len(evs), out, errOut)
			}
			if got := strings.Contains(evs[0].Note, "(impersonated)"); got != c.marked {
				t.Errorf("note %q: impersonated %v, want %v", evs[0].Note, got, c.marked)
			}
		})
	}
}

// Every interrupt cancels the run's context and gives the shell's exit
// code, 128 + the signal; the process is not ended by it.
func TestInterruptSignals(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGHUP, 129}, {syscall.SIGINT, 130}, {syscall.SIGQUIT, 131}, {syscall.SIGTERM, 143}} {
		ctx, stop := notifyContext(context.Background())
		if err := syscall.Kill(os.Getpid(), c.sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second): // liveness, not speed
			t.Fatalf("%s did not end the context", c.sig)
		}
		if got := exitFor(context.Cause(ctx)); got != c.code {
			t.Errorf("%s: exit %d, want %d", c.sig, got, c.code)
		}
		stop()
	}
	if got := exitFor(context.Canceled); got != ExitInterrupted {
		t.Errorf("a context cancelled otherwise: exit %d, want %d", got, ExitInterrupted)
	}
}

// An interrupt while the Lease write is in flight does not cancel it: the
// write is finished, reported and recorded, and the run then stops, so
// the locks cleared and the Events match.
func TestInterruptDuringTheWriteFinishesItsRecord(t *testing.T) {
	w := staleWorld(4)
	f, srv := w.factory(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	puts := 0
	srv.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/leases/") {
			if puts++; puts == 2 {
				// The interrupt comes while the server holds the write;
				// a client that cancelled it hangs up (within the bound,
				// 1 s, for liveness: the fixed client never does).
				cancel()
				select {
				case <-r.Context().Done():
				case <-time.After(time.Second):
				}
			}
		}
		return false
	})
	s, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := execute(ctx, s, []string{"unlock", "--all-stale", "--confirm"}, f)
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if n, evs := cleared(t, srv, w), len(events(t, srv, "infra")); n != 2 || evs != 2 {
		t.Errorf("%d locks cleared, %d Events: want 2 and 2\n%s%s", n, evs, out, errOut)
	}
	if o := flat(out.String()); strings.Count(o, "Recorded Event ") != 2 || !strings.Contains(o, "2 stale locks: unlocked 2. Interrupted") {
		t.Errorf("output:\n%s%s", out, errOut)
	}
}

// A type that cannot be a lock is refused before any request reads the
// object: naming a Secret never fetches its data.
func TestNotALockIsRefusedBeforeItIsRead(t *testing.T) {
	w := verdictsWorld()
	w.add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "infra"}, Data: map[string][]byte{"tfstate": []byte("credentials")}})
	w.add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "infra"}})
	for _, args := range [][]string{
		{"explain", "secret/x"}, {"unlock", "secret/x"}, {"unlock", "secrets", "x", "--confirm"},
		{"explain", "pod/p"}, {"unlock", "pods/p"},
	} {
		f, srv := w.factory(t)
		res := captf(t, f, args...)
		kind := "secret"
		if strings.Contains(args[1], "pod") {
			kind = "pod"
		}
		if res.code != ExitError || res.out != "" || res.err != "error: "+kind+" has no Terraform state: name a TerraformCluster, TerraformMachine, TerraformMachinePool or a lock lease\n" {
			t.Errorf("%v: exit %d\n%s%s", args, res.code, res.out, res.err)
		}
		if got := requested(srv); len(got) != 0 {
			t.Errorf("%v: requests %q, want none (discovery only)", args, got)
		}
	}
}
