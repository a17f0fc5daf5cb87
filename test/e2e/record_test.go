package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// unlockEvents are the OperatorForceUnlocked Events in ns, by the name
// of the object each is about.
func unlockEvents(t *testing.T, ns string) map[string]string {
	t.Helper()
	list, err := admin.Kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range list.Items {
		if e.Reason == audit.Reason {
			out[e.Regarding.Name] = e.Note
		}
	}
	return out
}

// unlockEventCount counts the OperatorForceUnlocked Events in ns.
func unlockEventCount(t *testing.T, ns string) int {
	t.Helper()
	list, err := admin.Kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Reason == audit.Reason {
			n++
		}
	}
	return n
}

// clearedLeases counts the lock Leases of refs that have no holder.
func clearedLeases(t *testing.T, refs []object.Ref) int {
	t.Helper()
	n := 0
	for _, r := range refs {
		if getLease(t, r).Spec.HolderIdentity == nil {
			n++
		}
	}
	return n
}

// staleLong makes a Stale lock of an object of that name: its runner pod,
// named as CAPTF names a long-named object's, is gone.
func staleLong(t *testing.T, ns, name string, i int) object.Ref {
	t.Helper()
	r := newObject(t, ns, object.TerraformCluster, name)
	syntheticLock(t, r, fmt.Sprintf("eeeeeeee-0000-0000-0000-%012d", i), "root@"+runner.JobName(r.Kind, name, "apply", 1, "d72d2a")+"-x7k2p", nil)
	return r
}

// An unlock of an object whose name has the most characters a name may
// have (253) is recorded: the API server accepts the Event's name. The
// cut of a long name may fall on a "-" or a ".": such names too.
func TestUnlockOfALongNamedObjectIsRecorded(t *testing.T) {
	ns := "record-long"
	names := []string{
		strings.Repeat("l", 253),
		strings.Repeat("d", 218) + "-" + strings.Repeat("e", 34),
		strings.Repeat("p", 218) + "." + strings.Repeat("q", 34),
		strings.Repeat("a.b-", 59) + "c.de-f.g", // dots and dashes all along
	}
	var refs []object.Ref
	for i, n := range names {
		if len(n) > validation.DNS1123SubdomainMaxLength || len(validation.IsDNS1123Subdomain(n)) > 0 {
			t.Fatalf("%q (%d) is not a valid name", n, len(n))
		}
		refs = append(refs, staleLong(t, ns, n, i))
	}
	kc := kubeconfigIn(t, ns)
	// One by name, the others with --all-stale.
	res := captf(t, kc, "unlock", "terraformcluster/"+names[0], "--confirm")
	if res.code != 0 || res.err != "" || !strings.Contains(res.out, "Recorded Event ") {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	res = captf(t, kc, "unlock", "--all-stale", "--confirm")
	if res.code != 0 || res.err != "" || strings.Count(res.out, "Recorded Event ") != 3 {
		t.Fatalf("--all-stale: exit %d\n%s%s", res.code, res.out, res.err)
	}
	evs := unlockEvents(t, ns)
	for _, r := range refs {
		if _, ok := evs[r.Name]; !ok {
			t.Errorf("no Event about %s (%d characters)", r.Name, len(r.Name))
		}
	}
	if n := clearedLeases(t, refs); n != len(refs) {
		t.Errorf("%d of %d cleared", n, len(refs))
	}
}

// When the Event cannot be created (here the user may not create Events),
// the lock is cleared but not on record: the command fails with exit 1,
// says so, and --all-stale clears no other lock.
func TestUnlockNotOnRecordFails(t *testing.T) {
	ns := "record-forbidden"
	refs := staleLocks(t, ns, "a", "b", "c")
	grant(t, ns, testbed.Viewer,
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "update"}},
		read("", "pods"), read("batch", "jobs"),
		read(object.Group, "terraformclusters", "terraformmachines", "terraformmachinepools"))
	kc, err := bed.KubeconfigFor(testbed.Viewer, ns)
	if err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "unlock", "--all-stale", "--confirm")
	if res.code != 1 || !strings.Contains(res.err, `Warning: the unlock was not recorded as an Event: events.events.k8s.io is forbidden: User "viewer" cannot create resource "events"`) ||
		!strings.Contains(res.err, "was unlocked, but the unlock is not on record: its Event could not be created (the warning above says why); the run stopped there, so no other lock was cleared\n") ||
		!strings.Contains(flat(res.out), "1 stale lock: unlocked 1. Stopped:") {
		t.Errorf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	if n := clearedLeases(t, refs); n != 1 {
		t.Errorf("%d locks cleared, want 1", n)
	}
}

// Impersonation configured on the kubeconfig's user (as:, as-groups:) is
// marked in the Event as the --as flag is: the user it names is not who
// ran the command.
func TestUnlockImpersonatedByTheKubeconfig(t *testing.T) {
	ns := "record-as"
	refs := staleLocks(t, ns, "a", "b")
	base, err := os.ReadFile(kubeconfigIn(t, ns))
	if err != nil {
		t.Fatal(err)
	}
	tok := "    token: " + testbed.Token(testbed.AdminUser) + "\n"
	if !bytes.Contains(base, []byte(tok)) {
		t.Fatalf("no token line in\n%s", base)
	}
	kc := t.TempDir() + "/kubeconfig"
	text := strings.Replace(string(base), tok, tok+"    as: alice\n    as-groups:\n    - system:masters\n", 1)
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := captf(t, kc, "unlock", "terraformcluster/a", "--confirm"); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
	}
	// The same with --as, for comparison.
	if res := captf(t, kubeconfigIn(t, ns), "--as", "alice", "--as-group", "system:masters", "unlock", "terraformcluster/b", "--confirm"); res.code != 0 {
		t.Fatalf("--as: exit %d\n%s%s", res.code, res.out, res.err)
	}
	evs := unlockEvents(t, ns)
	for _, r := range refs {
		if !strings.HasPrefix(evs[r.Name], `user "alice" (impersonated) force-unlocked Lease `) {
			t.Errorf("%s: note %q", r.Name, evs[r.Name])
		}
	}
}

// openPTY opens a pseudo-terminal: its master, and its slave for the
// process under test.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// An interrupt in the middle of `unlock --all-stale --confirm` over many
// Stale locks (SIGHUP from the terminal closing under it, SIGQUIT,
// SIGTERM) ends the run as Ctrl-C (SIGINT) does: the write in flight when it comes
// is finished and recorded, nothing after it is written, so every lock
// cleared has its Event, and the exit code is 128 + the signal. The
// signal comes while the server holds the fourth Lease write. After the
// hangup the terminal is gone and every write to it fails (EIO): the
// Event is created all the same.
func TestUnlockAllStaleInterruptedKeepsEveryRecord(t *testing.T) {
	const locks, at = 10, 4
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"terminal hung up", syscall.SIGHUP, 129},
		{"Ctrl-C", syscall.SIGINT, 130},
		{"SIGQUIT", syscall.SIGQUIT, 131},
		{"SIGTERM", syscall.SIGTERM, 143},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := "record-" + strings.ToLower(strings.TrimPrefix(c.sig.String(), "SIG"))
			ns = strings.ReplaceAll(ns, " ", "-")
			var names []string
			for i := range locks {
				names = append(names, fmt.Sprintf("l%02d", i))
			}
			refs := staleLocks(t, ns, names...)
			var (
				mu    sync.Mutex
				cmd   *exec.Cmd
				fired bool
			)
			var master, slave *os.File
			if c.sig == syscall.SIGHUP {
				master, slave = openPTY(t)
			}
			puts := 0
			kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
				if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/leases/") {
					return false
				}
				mu.Lock()
				defer mu.Unlock()
				if puts++; puts == at && !fired {
					fired = true
					if master != nil {
						master.Close() // the terminal goes: the kernel sends SIGHUP
					} else if err := cmd.Process.Signal(c.sig); err != nil {
						t.Error(err)
					}
				}
				return false
			})
			mu.Lock()
			cmd = exec.Command(plugin, "--kubeconfig", kc, "unlock", "--all-stale", "--confirm")
			cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm")
			var out, errb bytes.Buffer
			var drained chan struct{}
			if slave != nil {
				cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
				drained = make(chan struct{})
				go func() { _, _ = io.Copy(&out, master); close(drained) }()
			} else {
				cmd.Stdout, cmd.Stderr = &out, &errb
			}
			if err := cmd.Start(); err != nil {
				mu.Unlock()
				t.Fatal(err)
			}
			mu.Unlock()
			if slave != nil {
				slave.Close()
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(120 * time.Second): // liveness, not speed
				_ = cmd.Process.Kill()
				t.Fatal("still running 120 s after the start")
			}
			if drained != nil {
				<-drained
			}
			checkRace(t, cmd.Process.Pid, errb.String())
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			n, evs := clearedLeases(t, refs), unlockEventCount(t, ns)
			if !fired || cmd.ProcessState.ExitCode() != c.code {
				t.Errorf("fired %v; exit %d (signalled %v %s), want %d\n%s%s", fired, cmd.ProcessState.ExitCode(), ws.Signaled(), ws.Signal(), c.code, out.String(), errb.String())
			}
			// The signal comes during write number at; its handling is
			// asynchronous, so the run may be one lock further when it
			// sees it, but never cleared a lock without its Event, nor
			// went on to the end.
			if n != evs || n < at || n >= locks {
				t.Errorf("%d locks cleared, %d Events: want equal, at least %d and fewer than %d\n%s%s", n, evs, at, locks, out.String(), errb.String())
			}
			if strings.Contains(errb.String(), "goroutine ") {
				t.Errorf("a goroutine dump:\n%s", errb.String())
			}
			t.Logf("%s: %d cleared, %d Events, exit %d", c.name, n, evs, cmd.ProcessState.ExitCode())
		})
	}
}

// A lock whose lock info claims a creation time far in the future (a
// holder wrote Created: 9999-01-01) has no age anyone can trust: the cron
// check keeps it, as it keeps a lock whose time cannot be read, whatever
// --older-than says, 0s included.
func TestOlderThanKeepsALockDatedInTheFuture(t *testing.T) {
	ns := "record-future"
	far := newObject(t, ns, object.TerraformMachine, "far")
	info := testbed.LockInfo("f0f0f0f0-0000-0000-0000-000000000001", "alice@laptop", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	syntheticLock(t, far, "f0f0f0f0-0000-0000-0000-000000000001", "alice@laptop", &info)
	young := newObject(t, ns, object.TerraformMachine, "young")
	info2 := testbed.LockInfo("f0f0f0f0-0000-0000-0000-000000000002", "bob@laptop", time.Now().Add(-time.Minute))
	syntheticLock(t, young, "f0f0f0f0-0000-0000-0000-000000000002", "bob@laptop", &info2)
	kc := kubeconfigIn(t, ns)
	farLease := "lease.coordination.k8s.io/" + object.LockLeaseName("default", far.Suffix())
	for _, older := range []string{"0s", "30m", "87600h"} {
		res := captf(t, kc, "locks", "--verdict", "Stale,Foreign,Unknown", "--older-than", older, "--exit-code", "-o", "name")
		want := farLease + "\n"
		if older == "0s" {
			// The young lock is a minute old: older than 0s.
			want = farLease + "\n" + "lease.coordination.k8s.io/" + object.LockLeaseName("default", young.Suffix()) + "\n"
		}
		if res.code != 4 || !sameLines(res.out, want) {
			t.Errorf("--older-than %s: exit %d, listed\n%s\nwant\n%s%s", older, res.code, res.out, want, res.err)
		}
	}
	table := captf(t, kc, "locks", "--older-than", "30m")
	if table.code != 0 || !strings.Contains(table.out, "terraformmachine/far") || strings.Contains(table.out, "terraformmachine/young") {
		t.Errorf("table: exit %d\n%s%s", table.code, table.out, table.err)
	}
	t.Logf("the table shows:\n%s", table.out)
}

// sameLines is whether a and b hold the same lines in any order.
func sameLines(a, b string) bool {
	la, lb := strings.Split(strings.TrimSpace(a), "\n"), strings.Split(strings.TrimSpace(b), "\n")
	if len(la) != len(lb) {
		return false
	}
	seen := map[string]int{}
	for _, l := range la {
		seen[l]++
	}
	for _, l := range lb {
		if seen[l]--; seen[l] < 0 {
			return false
		}
	}
	return true
}

// explain and unlock of a type that cannot be a lock (a Secret) refuse it
// with one line before any request reads it: no request for the Secret
// reaches the API server, and -v=6 logs none.
func TestNotALockIsNeverRead(t *testing.T) {
	ns := "record-secret"
	if err := admin.Namespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}, StringData: map[string]string{"tfstate": "credentials"}}
	if _, err := admin.Kube.CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	kc := newProxy(t, ns, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		return false
	})
	const refusal = "error: secret has no Terraform state: name a TerraformCluster, TerraformMachine, TerraformMachinePool or a lock lease\n"
	for _, args := range [][]string{
		{"explain", "secret/x"}, {"unlock", "secret/x"}, {"unlock", "secrets", "x", "--confirm"},
	} {
		for _, verbose := range []bool{false, true} {
			a := args
			if verbose {
				a = append([]string{"-v=6"}, args...)
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			res := captf(t, kc, a...)
			if res.code != 1 || res.out != "" || !strings.HasSuffix(res.err, refusal) || (!verbose && res.err != refusal) {
				t.Errorf("%v: exit %d\n%s%s", a, res.code, res.out, res.err)
			}
			if verbose && strings.Contains(res.err, "/secrets") {
				t.Errorf("%v: -v=6 logs a request for the Secret:\n%s", a, res.err)
			}
			mu.Lock()
			for _, s := range seen {
				if strings.Contains(s, "/secrets") {
					t.Errorf("%v: %s reached the server", a, s)
				}
			}
			mu.Unlock()
		}
	}
}
