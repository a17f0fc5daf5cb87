package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// hangingServer accepts connections on 127.0.0.1 and never answers.
func hangingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://" + l.Addr().String() + "\n    insecure-skip-tls-verify: true\nusers:\n- name: x\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: x\n    user: x\n    namespace: default\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// A server that never answers: --request-timeout ends the wait with a
// one-line error.
func TestRequestTimeout(t *testing.T) {
	res := captf(t, hangingServer(t), "locks", "-A", "--request-timeout", "2s")
	if res.code != 1 || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: cannot list leases in all namespaces") {
		t.Errorf("exit %d %q", res.code, res.err)
	}
}

// Ctrl-C while waiting on the server ends the command with 130.
func TestInterrupt(t *testing.T) {
	cmd := exec.Command(plugin, "--kubeconfig", hangingServer(t), "locks", "-A")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if code := interrupt(t, cmd); code != 130 || strings.Contains(errb.String(), "goroutine") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// The request count of locks does not grow with the number of locks, and
// explain stays within 10 requests. Counted by the plugin's own transport.
func TestRequestCounts(t *testing.T) {
	seedVerdicts(t)
	count := func(args ...string) int {
		t.Helper()
		cmd := exec.Command(plugin, append([]string{"--kubeconfig", kubeconfigIn(t, verdictsNS)}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECTL_CAPTF_COUNT_REQUESTS=1")
		out, _ := cmd.CombinedOutput()
		m := regexp.MustCompile(`captf-requests: (\d+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no count in %s", out)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	// verdicts holds 20 locks; 4 own-pod holders are not in the labelled
	// pod list (the stale-gone, deleted and id-mismatch pods are gone, the
	// unlabelled one exists): 6 lists + 4 GETs by name; the owners of stale
	// locks are read in full for their gates, at most 3 requests however
	// many there are.
	if n := count("locks", "-o", "json"); n < 10 || n > 13 {
		t.Errorf("locks: %d requests, want 10 to 13", n)
	}
	// No lock: nothing is read but the Leases.
	if n := count("locks", "-n", "bad-input-none"); n != 1 {
		t.Errorf("locks of an empty namespace: %d requests, want 1", n)
	}
	if n := count("explain", "terraformcluster/stale-gone", "-o", "json"); n > 10 {
		t.Errorf("explain: %d requests, want at most 10", n)
	}
}
