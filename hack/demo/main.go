// Command demo starts a throw-away CAPTF management cluster on 127.0.0.1,
// seeds one lock of each verdict (real terraform locks among them) and
// runs `kubectl captf locks -A` against it. `demo down` stops it.
//
//	go run ./hack/demo [up|down]
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
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
	p.step("Seeding one lock of each verdict (real terraform locks among them)")
	if err := seed(ctx, c, abs); err != nil {
		return err
	}
	p.step("Building the plugin")
	bin := filepath.Join("bin", "kubectl-captf")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-captf").CombinedOutput(); err != nil {
		return fmt.Errorf("building the plugin: %v\n%s", err, out)
	}
	p.step("")
	fmt.Printf("\n$ kubectl captf locks -A\n")
	run := exec.Command(bin, "--kubeconfig", kubeconfig, "locks", "-A")
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	if err := run.Run(); err != nil {
		return err
	}
	binAbs, _ := filepath.Abs("bin")
	fmt.Printf(`
The cluster keeps running. To explore it with kubectl and the plugin:

  export KUBECONFIG=%s PATH=%s:$PATH
  kubectl captf locks -A -o wide
  kubectl captf locks -n demo -o yaml
  kubectl get leases,pods -A

Stop it with: make demo-stop
`, kubeconfig, binAbs)
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

// seed makes one lock of each verdict in namespace "demo", and one in "team-a".
func seed(ctx context.Context, c *testbed.Cluster, work string) error {
	cs, err := c.Clients()
	if err != nil {
		return err
	}
	tf := testbed.Terraform{Kubeconfig: c.Kubeconfig, Dir: work}
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
	}
	// Stale: an OOM-killed runner; its pod is gone.
	if _, err := tf.LockAs(ctx, cs.Kube, stale, "captf-c-demo-apply-a1-d72d2a-x7k2p"); err != nil {
		return err
	}
	// Live: a runner pod that is still running.
	livePod := "captf-m-web-1-refresh-a3-0a1b2c-q8w7e"
	if _, err := tf.LockAs(ctx, cs.Kube, live, livePod); err != nil {
		return err
	}
	if _, err := cs.RunnerPod(ctx, live, livePod, corev1.PodRunning); err != nil {
		return err
	}
	// Foreign: terraform run from this machine, as from a workstation.
	if _, err := tf.LockAs(ctx, cs.Kube, foreign, ""); err != nil {
		return err
	}
	// Unknown: a held Lease whose lock info is not JSON.
	id, junk := "5d2c1b0a-9f8e-7d6c-5b4a-3f2e1d0c9b8a", "{truncated"
	if _, err := cs.LockLease(ctx, unknown.Namespace, unknown.Suffix(), testbed.OwnerLabels(unknown), &id, &junk); err != nil {
		return err
	}
	// Unlocked: terraform init alone.
	_, err = tf.Init(ctx, testbed.Backend{Namespace: free.Namespace, Suffix: free.Suffix(), Labels: testbed.OwnerLabels(free)})
	return err
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
