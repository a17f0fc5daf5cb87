// Command demo starts a throw-away CAPTF management cluster on 127.0.0.1,
// seeds one lock of each verdict, written as Terraform's kubernetes backend
// writes them, and runs `kubectl captf locks -A` against it. `demo down`
// stops it. It needs Go and the test-bed's etcd and kube-apiserver
// (make demo builds them), and no root, unshare or terraform: it runs on
// Linux and macOS alike.
//
//	go run ./hack/demo [up|down]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/shell"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

const dir = ".demo"

func main() {
	cmd := "up"
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	var err error
	switch cmd {
	case "up":
		err = up(context.Background())
	case "down":
		err = down()
	default:
		err = fmt.Errorf("usage: go run ./hack/demo [up|down]")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func up(ctx context.Context) error {
	// make demo builds it first (make build: versioned).
	bin := filepath.Join("bin", "kubectl-captf")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run make demo, which builds it", bin)
	}
	if err := down(); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	var p progress
	defer p.step("")
	// testbed.Start builds etcd and kube-apiserver on the first run (not
	// OpenTofu: hack/testbed/build.sh builds it only when asked).
	p.step("Starting a throw-away cluster (etcd and kube-apiserver on 127.0.0.1)")
	c, err := testbed.Start(ctx, testbed.Options{Dir: abs, Detach: true})
	if err != nil {
		return err
	}
	var pids []string
	for _, pid := range c.PIDs() {
		pids = append(pids, strconv.Itoa(pid))
	}
	if err := os.WriteFile(filepath.Join(abs, "pids"), []byte(strings.Join(pids, " ")+"\n"), 0o644); err != nil {
		return err
	}
	kubeconfig := filepath.Join(abs, "kubeconfig")
	if err := os.Rename(c.Kubeconfig, kubeconfig); err != nil {
		return err
	}
	c.Kubeconfig = kubeconfig
	p.step("Seeding one lock of each verdict")
	if err := seed(ctx, c); err != nil {
		return err
	}
	p.step("")
	fmt.Printf("\n$ kubectl captf locks -A\n")
	run := exec.Command(bin, "--kubeconfig", kubeconfig, "locks", "-A")
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	if err := run.Run(); err != nil {
		return err
	}
	binAbs, _ := filepath.Abs("bin")
	// The kubectl built beside kube-apiserver goes last on PATH: one on
	// PATH already stays the one that runs, and a machine without kubectl
	// gets the test-bed's, of the demo cluster's version.
	bins, err := testbed.Binaries(ctx)
	if err != nil {
		return err
	}
	fmt.Printf(`
The cluster keeps running. To explore it with kubectl (yours, or else the
test-bed's, last on PATH) and the plugin:

  export KUBECONFIG=%s PATH=%s:$PATH:%s
  kubectl captf locks -A -o wide
  kubectl captf locks -n demo -o yaml
  kubectl get leases,pods -A

Stop it with: make demo-stop
`, shell.Quote(kubeconfig), shell.Quote(binAbs), shell.Quote(testbed.PathDir(bins)))
	return nil
}

// progress says which step of `make demo` runs, and on stderr how long
// the one before took.
type progress struct {
	name string
	at   time.Time
}

func (p *progress) step(name string) {
	if p.name != "" {
		fmt.Fprintf(os.Stderr, "  (took %s)\n", time.Since(p.at).Round(100*time.Millisecond))
	}
	p.name, p.at = name, time.Now()
	if name != "" {
		fmt.Println(name + "...")
	}
}

// seed makes one lock of each verdict in namespace "demo", and one in
// "team-a". It writes each lock Lease as the kubernetes backend of
// Terraform and OpenTofu writes it (test/testbed's LockLease and
// LockInfo), with the labels CAPTF passes the backend, rather than running
// terraform: a runner pod's lock needs a runner pod's hostname in its Who,
// which only a UTS namespace (unshare, Linux and root) gives a real
// terraform, and the demo runs for any user, on Linux and macOS alike.
// The end-to-end tests take their locks with the real binaries.
func seed(ctx context.Context, c *testbed.Cluster) error {
	cs, err := c.Clients()
	if err != nil {
		return err
	}
	ref := func(k object.Kind, ns, name string) object.Ref { return object.Ref{Kind: k, Namespace: ns, Name: name} }
	stale := ref(object.TerraformCluster, "demo", "demo")
	live := ref(object.TerraformMachine, "demo", "web-1")
	foreign := ref(object.TerraformMachine, "team-a", "db")
	unknown := ref(object.TerraformMachinePool, "demo", "workers")
	free := ref(object.TerraformCluster, "team-a", "edge")
	for _, r := range []object.Ref{stale, live, foreign, unknown, free} {
		if err := cs.Object(ctx, r); err != nil {
			return err
		}
		// Cluster API labels every infrastructure object with its
		// Cluster's name, which CAPTF passes the backend for the Lease's
		// label: the demo's Clusters are named as their namespaces.
		if err := cs.PatchObject(ctx, r, map[string]any{"metadata": map[string]any{"labels": map[string]any{testbed.ClusterNameLabel: r.Namespace}}}); err != nil {
			return err
		}
	}
	now := time.Now()
	held := func(r object.Ref, who string, age time.Duration) error {
		id, err := lockID()
		if err != nil {
			return err
		}
		info := testbed.LockInfo(id, who, now.Add(-age))
		_, err = cs.LockLease(ctx, r.Namespace, r.Suffix(), backendLabels(r), &id, &info)
		return err
	}
	// Stale: an OOM-killed runner; its pod is gone.
	if err := held(stale, "root@captf-c-demo-apply-a1-d72d2a-x7k2p", 9*time.Second); err != nil {
		return err
	}
	// Live: a runner pod that is still running.
	livePod := "captf-m-web-1-refresh-a3-0a1b2c-q8w7e"
	if err := held(live, "root@"+livePod, 9*time.Second); err != nil {
		return err
	}
	if _, err := cs.RunnerPod(ctx, live, livePod, corev1.PodRunning); err != nil {
		return err
	}
	// Foreign: terraform run from this machine, as from a workstation.
	if err := held(foreign, workstation(), 8*time.Second); err != nil {
		return err
	}
	// Unknown: a held Lease whose lock info is not JSON.
	id, junk := "5d2c1b0a-9f8e-7d6c-5b4a-3f2e1d0c9b8a", "{truncated"
	if _, err := cs.LockLease(ctx, unknown.Namespace, unknown.Suffix(), backendLabels(unknown), &id, &junk); err != nil {
		return err
	}
	// Unlocked: as `terraform init` leaves it, locked once and released.
	_, err = cs.LockLease(ctx, free.Namespace, free.Suffix(), backendLabels(free), nil, nil)
	return err
}

// backendLabels are the labels CAPTF passes the backend for r, which the
// backend puts on the lock Lease beside its own: the owner's kind and
// name, its Cluster API Cluster (named as its namespace here), that CAPTF
// manages it, and that clusterctl move moves it.
func backendLabels(r object.Ref) map[string]string {
	l := testbed.OwnerLabels(r)
	l[testbed.ClusterNameLabel] = r.Namespace
	l["clusterctl.cluster.x-k8s.io/move"] = ""
	return l
}

// lockID is a lock ID as Terraform makes one: 16 random bytes as
// 8-4-4-4-12 lowercase hex, without a UUID's version bits.
func lockID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// workstation is the Who of a terraform run on this machine: the user's
// name and the hostname, as Terraform writes them.
func workstation() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// down stops a demo cluster started earlier, if any, and removes its files.
func down() error {
	data, err := os.ReadFile(filepath.Join(dir, "pids"))
	if os.IsNotExist(err) {
		return os.RemoveAll(dir)
	}
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.SIGTERM) == nil {
			for i := 0; i < 50 && p.Signal(syscall.Signal(0)) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
			_ = p.Kill()
		}
	}
	fmt.Println("Stopped the demo cluster.")
	return os.RemoveAll(dir)
}
