package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// Whatever a holder writes into the Lease gets a sane verdict and output.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	ns := "bad-input"
	mk := func(name string, info string) object.Ref {
		r := newObject(t, ns, object.TerraformCluster, name)
		syntheticLock(t, r, "abababab-0000-0000-0000-000000000000", "", &info)
		return r
	}
	// The API server caps all annotations of an object at 256 KiB, so the
	// largest lock info a Lease can carry is just under that (a 1 MiB one
	// is refused by the server, and covered by the unit tests).
	big := mk("big", `{"ID":"abababab-0000-0000-0000-000000000000","Who":"root@laptop","Info":"`+strings.Repeat("x", 250*1024)+`"}`)
	badUTF8 := mk("bad-utf8", "{\"ID\":\"abababab-0000-0000-0000-000000000000\",\"Operation\":\"OperationTypeApply\",\"Who\":\"r\xffo\xfeot@laptop\",\"Created\":\"2026-11-30T10:00:00Z\"}")
	wrongTypes := mk("wrong-types", `{"ID":1,"Operation":true,"Who":["root@laptop"],"Created":5}`)
	unknownOp := mk("unknown-op", `{"ID":"abababab-0000-0000-0000-000000000000","Operation":"OperationTypeTeleport","Who":"root@captf-c-unknown-op-apply-a1-d72d2a-x7k2p","Created":"2026-11-30T10:00:00Z"}`)
	// A lease with Terraform's labels but not a lock's name is not a lock.
	notALock := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "tfstate-imposter", Namespace: ns, Labels: map[string]string{"tfstate": "true", "tfstateSecretSuffix": big.Suffix()}}}
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Create(ctx, notALock, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A second lock Lease claiming the same suffix through its label.
	dup := big.Suffix()
	id := "cdcdcdcd-0000-0000-0000-000000000000"
	info := testbed.LockInfo(id, "bob@desk", t0)
	copyLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-default-copy", Namespace: ns,
		Labels: map[string]string{"tfstate": "true", "tfstateSecretSuffix": dup, "tfstateWorkspace": "default"}, Annotations: map[string]string{"app.terraform.io/lock-info": info}}}
	copyLease.Spec.HolderIdentity = &id
	if _, err := admin.Kube.CoordinationV1().Leases(ns).Create(ctx, copyLease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A 1 MiB annotation is refused by the server itself.
	huge := strings.Repeat("y", 1<<20)
	if _, err := admin.LockLease(ctx, ns, "1111111111111111-c", nil, &id, &huge); err == nil || !strings.Contains(err.Error(), "Too long") {
		t.Errorf("the server took a 1 MiB annotation: %v", err)
	}

	kc := kubeconfigIn(t, ns)
	for _, args := range [][]string{{"locks"}, {"locks", "-o", "wide"}, {"locks", "-o", "yaml"}} {
		res := captf(t, kc, args...)
		if res.code != 0 || res.err != "" || strings.Contains(res.out, "panic") || strings.ContainsAny(res.out, "\x1b\x07") && args[len(args)-1] != "yaml" {
			t.Errorf("%v: exit %d %q", args, res.code, res.err)
		}
		if args[len(args)-1] == "wide" && strings.Contains(res.out, strings.Repeat("x", 100)) {
			t.Error("the 250 KiB Info field reached the table")
		}
	}
	list := locksJSON(t, kc)
	byName := map[string]v1alpha1.Lock{}
	for _, l := range list.Items {
		byName[l.Name] = l
		if l.Name == "tfstate-imposter" {
			t.Error("a lease without the lock- prefix was listed")
		}
	}
	check := func(r object.Ref, verdict v1alpha1.Verdict, reason string) v1alpha1.Lock {
		t.Helper()
		l := byName[object.LockLeaseName("default", r.Suffix())]
		if l.Verdict != verdict || !strings.Contains(l.Reason, reason) {
			t.Errorf("%s: %s %q, want %s %q", r.Name, l.Verdict, l.Reason, verdict, reason)
		}
		return l
	}
	check(big, v1alpha1.Foreign, "holder host laptop")
	// Invalid UTF-8 arrives as U+FFFD through JSON; the verdict stands.
	if l := check(badUTF8, v1alpha1.Foreign, "holder host laptop"); !strings.Contains(l.Lock.Who, "\uFFFD") {
		t.Errorf("who %q", l.Lock.Who)
	}
	check(wrongTypes, v1alpha1.Unknown, "the lock info does not parse")
	if l := check(unknownOp, v1alpha1.Stale, "no longer exists"); l.Lock.Operation != "OperationTypeTeleport" {
		t.Errorf("operation %q", l.Lock.Operation)
	}
	table := captf(t, kc, "locks")
	if !regexp.MustCompile(`terraformcluster/unknown-op +Stale +root@\S+ +OperationTypeTeleport`).MatchString(table.out) {
		t.Errorf("an unknown operation is shown as it is:\n%s", table.out)
	}
	// A Lease whose label claims big's suffix is not big's lock: CAPTF
	// finds a lock by its name only. The label is a warning.
	if c, ok := byName["lock-tfstate-default-copy"]; !ok || c.Object != nil || c.Verdict != v1alpha1.Foreign || !strings.Contains(c.Reason, "disagrees with the Lease name") {
		t.Errorf("duplicate suffix: %+v", c)
	}
	// explain takes them as well.
	for _, r := range []object.Ref{big, badUTF8, wrongTypes, unknownOp} {
		if res := captf(t, kc, "explain", r.String()); res.code != 0 || res.err != "" {
			t.Errorf("explain %s: exit %d %q", r, res.code, res.err)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg, err := os.ReadFile(bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, bytes.Replace(cfg, []byte(testbed.Token(testbed.AdminUser)), []byte("wrong-token"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	res := captf(t, kc, "locks", "-A")
	if res.code != 1 || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: cannot list leases in all namespaces: you must be logged in to the server (Unauthorized)") {
		t.Errorf("exit %d %q", res.code, res.err)
	}
}

// hangingServer accepts connections on 127.0.0.1 and never answers. It
// returns a kubeconfig for it, and a channel closed once a client has
// connected: from then on, the client is waiting on the server.
func hangingServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	connected := make(chan struct{})
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if conns = append(conns, c); len(conns) == 1 {
				close(connected)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://" + l.Addr().String() + "\n    insecure-skip-tls-verify: true\nusers:\n- name: x\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: x\n    user: x\n    namespace: default\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc, connected
}

// A server that never answers: --request-timeout ends the wait with a
// one-line error.
func TestRequestTimeout(t *testing.T) {
	kc, _ := hangingServer(t)
	res := captf(t, kc, "locks", "-A", "--request-timeout", "2s")
	if res.code != 1 || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: cannot list leases in all namespaces") {
		t.Errorf("exit %d %q", res.code, res.err)
	}
}

// Ctrl-C while waiting on the server ends the command with 130.
func TestInterrupt(t *testing.T) {
	kc, connected := hangingServer(t)
	cmd := exec.Command(plugin, "--kubeconfig", kc, "locks", "-A")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ctrl-C once the plugin is waiting on the server, not before.
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the plugin did not connect to the server in 20 s")
	}
	if code := interrupt(t, cmd); code != 130 || strings.Contains(errb.String(), "goroutine") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// requestBound is the most requests `locks` makes in one namespace,
// whatever the number of locks in it: one list each of the Leases, the
// runner Jobs and each CAPTF kind; the pods, listed by label and, with
// many holders, without (2 lists); the holder pods missing from the list,
// read by name, 16 at most; and the gates of stale locks' owners, read by
// name, 3 at most. Beyond those counts a list replaces the reads by name.
var requestBound = 1 + 1 + len(object.Kinds) + 2 + 16 + 3

// requestCount runs the plugin with its request counter and returns the
// number of API requests it made.
func requestCount(t *testing.T, ns string, args ...string) int {
	t.Helper()
	cmd := exec.Command(plugin, append([]string{"--kubeconfig", kubeconfigIn(t, ns)}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_CAPTF_COUNT_REQUESTS=1")
	out, err := cmd.CombinedOutput()
	checkRace(t, cmd.Process.Pid, string(out))
	m := regexp.MustCompile(`captf-requests: (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%v: no count (%v) in %s", args, err, out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// The request count of locks is bounded by a constant, not by the number
// of locks; explain stays within 18 requests. Counted by the plugin's own
// transport. The costliest lock is a stale one whose runner pod is gone
// and whose object exists: its pod is read by name, its owner's gate in
// full. A namespace with a few of them, and one with more of them than the
// bound has requests, stay within the same bound; so does the namespace
// with a lock of every verdict.
func TestRequestCounts(t *testing.T) {
	seedVerdicts(t)
	staleOwn := func(ns string, n int) {
		for i := range n {
			name := fmt.Sprintf("gone-%02d", i)
			r := newObject(t, ns, object.TerraformCluster, name)
			syntheticLock(t, r, fmt.Sprintf("cccccccc-0000-0000-0000-%012d", i), "root@captf-c-"+name+"-apply-a1-d72d2a-x7k2p", nil)
		}
	}
	many := requestBound + 5
	staleOwn("counts-few", 2)
	staleOwn("counts-many", many)
	for _, c := range []struct {
		ns    string
		locks int
	}{{"counts-few", 2}, {"counts-many", many}, {verdictsNS, 0}} {
		n := requestCount(t, c.ns, "locks", "-o", "json")
		if n > requestBound {
			t.Errorf("locks in %s: %d requests, want at most %d", c.ns, n, requestBound)
		}
		if c.locks == 0 {
			continue
		}
		// Each of them is the costly case it is meant to be.
		items := locksJSON(t, kubeconfigIn(t, c.ns)).Items
		if len(items) != c.locks {
			t.Errorf("%s: %d locks listed, want %d", c.ns, len(items), c.locks)
		}
		for _, l := range items {
			if l.Verdict != v1alpha1.Stale || !strings.Contains(l.Reason, "no longer exists") {
				t.Errorf("%s: %s is %s (%s), want Stale, its pod gone", c.ns, l.Name, l.Verdict, l.Reason)
			}
		}
	}
	// No lock: nothing is read but the Leases.
	if n := requestCount(t, "bad-input-none", "locks"); n != 1 {
		t.Errorf("locks of an empty namespace: %d requests, want 1", n)
	}
	// The lock's read (with its owner's namespace and, for an owner whose
	// StateReadable is True, the list of its state Secrets' metadata that
	// decides whether its next Job's init can clear the lock: issue 26),
	// the run lease, the Events about the object, its holder pod and that
	// pod's Job. The state Secrets' names are those of that one list: no
	// second list of them (review26).
	// As client-go logs its requests at -v=6: the owner's Secrets are
	// listed as CAPTF's read of its state reads them, each list once, for
	// the decision and the names alike: its state Secrets, its backups and
	// its two inputs Secrets, by name (review26g F3: checkRetained reads
	// them for a live object too).
	cmd := exec.Command(plugin, "--kubeconfig", kubeconfigIn(t, verdictsNS), "-v=6", "explain", "terraformcluster/stale-gone", "-o", "json")
	out, err := cmd.CombinedOutput()
	checkRace(t, cmd.Process.Pid, string(out))
	if err != nil {
		t.Fatalf("explain -v=6: %v\n%s", err, out)
	}
	logged := regexp.MustCompile(`"Response" verb="[A-Z]+" url="[^"]*"`).FindAll(out, -1)
	// The read of one lock (the Lease, the object, its three kinds, the
	// Jobs, the pod, a Cluster, a TerraformCluster, the namespace and four
	// lists of Secrets' metadata: 14) and explain's own (the run lease and
	// three lists of Events).
	if n := requestCount(t, verdictsNS, "explain", "terraformcluster/stale-gone", "-o", "json"); n > 18 {
		t.Errorf("explain: %d requests, want at most 18:\n%s", n, bytes.Join(logged, []byte("\n")))
	}
	lists := regexp.MustCompile(`verb="(?:GET|LIST)" url="https?://[^"]*/api/v1/namespaces/[^/"]+/secrets\?([^"]*)"`).FindAllSubmatch(out, -1)
	var queries []string
	for _, l := range lists {
		q, err := url.QueryUnescape(string(l[1]))
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, q)
	}
	slices.Sort(queries)
	suffix := ref(object.TerraformCluster, "stale-gone").Suffix()
	want := []string{
		"fieldSelector=metadata.name=captf-applied-c-stale-gone",
		"fieldSelector=metadata.name=captf-inputs-c-stale-gone",
		"labelSelector=captf.io/state-backup=true,captf.io/state-backup-suffix=" + suffix,
		"labelSelector=tfstate=true,tfstateSecretSuffix=" + suffix + ",tfstateWorkspace=default",
	}
	if !slices.Equal(queries, want) {
		t.Errorf("explain -v=6 lists Secrets as\n%s\nwant each of\n%s\nonce", strings.Join(queries, "\n"), strings.Join(want, "\n"))
	}
}
