package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Terraform runs the real terraform binary against the test-bed's
// kubernetes backend. Every run sets CHECKPOINT_DISABLE=1, so terraform
// makes no update-check look-ups: its only traffic is to the test server.
type Terraform struct {
	// Bin is the binary; "terraform" from PATH when empty.
	Bin        string
	Kubeconfig string
	// Dir is where working directories are made.
	Dir string
}

// Backend is one state: the backend's namespace and secret_suffix, and the
// labels CAPTF would pass.
type Backend struct {
	Namespace string
	Suffix    string
	Labels    map[string]string
	// Resources replaces the configuration's default resource (a
	// terraform_data whose provisioner sleeps var.sleep seconds).
	Resources string
}

// defaultResources hold the lock for var.sleep seconds on every apply.
const defaultResources = `resource "terraform_data" "hold" {
  triggers_replace = timestamp()
  provisioner "local-exec" {
    command = "sleep ${var.sleep}"
  }
}
`

// LargeStateResources make a state of about 3 MB, past one Secret's
// limit: Terraform splits it into -part-N Secrets, OpenTofu cannot save it.
const LargeStateResources = `resource "terraform_data" "big" {
  input = [for i in range(1000) : [for j in range(60) : uuid()]]
}
`

func (t Terraform) bin() (string, error) {
	b := t.Bin
	if b == "" {
		b = "terraform"
	}
	p, err := exec.LookPath(b)
	if err != nil {
		return "", fmt.Errorf("the end-to-end tests need %s (v1.11.4) on PATH: %w", b, err)
	}
	return p, nil
}

// env is the environment of every run: this process's, without the
// TF_* and KUBE_* variables CAPTF's runner drops (all but
// TF_IN_AUTOMATION, TF_INPUT and KUBE_NAMESPACE: internal/runner/prepare.go
// runnerOwned at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517), since a
// TF_WORKSPACE, TF_CLI_ARGS_init or KUBE_CONFIG_PATH in the test's shell
// would change what the runtime does; no CLI config, as CAPTF passes one
// only with a provider mirror.
func (t Terraform) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "KUBE_")) && name != "TF_IN_AUTOMATION" && name != "TF_INPUT" && name != "KUBE_NAMESPACE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=", "TF_INPUT=0")
}

// Init writes a configuration for the backend and runs `terraform init`
// in a new working directory, which it returns. The configuration's only
// resource is a terraform_data whose provisioner sleeps var.sleep seconds,
// so an apply holds the lock for that long and needs no provider download.
func (t Terraform) Init(ctx context.Context, b Backend) (string, error) {
	dir, err := t.Workdir(b)
	if err != nil {
		return "", err
	}
	if _, err := t.Run(ctx, dir, "init", "-input=false", "-no-color"); err != nil {
		return "", err
	}
	return dir, nil
}

// Workdir writes, in a new working directory which it returns, the
// configuration Init runs init in, without running anything: a runner
// replay runs init there itself, as CAPTF's runner does.
func (t Terraform) Workdir(b Backend) (string, error) {
	dir, err := os.MkdirTemp(t.Dir, "tf-")
	if err != nil {
		return "", err
	}
	resources := b.Resources
	if resources == "" {
		resources = defaultResources
	}
	var labels strings.Builder
	keys := make([]string, 0, len(b.Labels))
	for k := range b.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&labels, "      %q = %q\n", k, b.Labels[k])
	}
	conf := fmt.Sprintf(`terraform {
  backend "kubernetes" {
    secret_suffix = %q
    namespace     = %q
    config_path   = %q
    labels = {
%s    }
  }
}

variable "sleep" {
  type    = number
  default = 0
}

%s`, b.Suffix, b.Namespace, t.Kubeconfig, labels.String(), resources)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(conf), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// RunAs runs the binary in dir with hostname as its host name (a runner
// pod's, through unshare --uts, as in KilledLock), so that a lock it
// takes names root@<hostname> as a runner pod's does. It returns the
// combined output and the exit error.
func (t Terraform) RunAs(ctx context.Context, dir, hostname string, args ...string) (string, error) {
	cmd, err := t.as(ctx, dir, hostname, args)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// as is the command that runs terraform in dir with args, its hostname
// set in a UTS namespace of its own.
func (t Terraform) as(ctx context.Context, dir, hostname string, args []string) (*exec.Cmd, error) {
	bin, err := t.bin()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--uts", "sh", "-c", `echo "$0" > /proc/sys/kernel/hostname && exec "$@"`, hostname, bin}, args...)...)
	cmd.Dir, cmd.Env = dir, t.env()
	return cmd, nil
}

// Step runs one of CAPTF's runner steps as RunAs does, keeping its
// stdout and stderr apart: CAPTF's runner matches the answers it accepts
// in the step's stderr only (internal/runner/exec.go Exec, tailWriter).
func (t Terraform) Step(ctx context.Context, dir, hostname string, args ...string) (stdout, stderr string, err error) {
	cmd, err := t.as(ctx, dir, hostname, args)
	if err != nil {
		return "", "", err
	}
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// Run runs terraform in dir and returns its combined output.
func (t Terraform) Run(ctx context.Context, dir string, args ...string) (string, error) {
	bin, err := t.bin()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, t.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("terraform %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// KilledLock leaves a real stale lock: it runs `terraform apply` with the
// given hostname (a runner pod name, through `unshare --uts`, so Who is
// root@<hostname>; or, with an empty hostname, this machine's own, as from
// a workstation), waits until the Lease is held, and SIGKILLs terraform
// and its provisioner. It returns the lock ID.
func (t Terraform) KilledLock(ctx context.Context, kube kubernetes.Interface, dir string, b Backend, hostname string) (string, error) {
	bin, err := t.bin()
	if err != nil {
		return "", err
	}
	apply := []string{bin, "apply", "-auto-approve", "-input=false", "-no-color", "-var", "sleep=300"}
	var cmd *exec.Cmd
	if hostname == "" {
		cmd = exec.Command(apply[0], apply[1:]...)
	} else {
		// unshare without --fork execs in place: the shell, then terraform,
		// keep the PID, in a UTS namespace of their own.
		// Writing the UTS hostname through /proc needs no hostname binary.
		cmd = exec.Command("unshare", append([]string{"--uts", "sh", "-c", `echo "$0" > /proc/sys/kernel/hostname && exec "$@"`, hostname}, apply...)...)
	}
	var out syncBuffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, t.env(), &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }

	name := "lock-tfstate-default-" + b.Suffix
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-done:
			return "", fmt.Errorf("terraform apply ended before it held the lock: %v\n%s", err, out.String())
		default:
		}
		l, err := kube.CoordinationV1().Leases(b.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && l.Annotations["app.terraform.io/lock-info"] != "" &&
			strings.Contains(out.String(), "Provisioning with 'local-exec'") {
			kill()
			return *l.Spec.HolderIdentity, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			kill()
			return "", fmt.Errorf("terraform apply did not take the lock in time\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer that terraform's output goroutines and the
// polling loop may share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// LockAs initialises the object's state with the labels CAPTF passes and
// leaves a lock held by host, as KilledLock does. It returns the lock ID.
func (t Terraform) LockAs(ctx context.Context, kube kubernetes.Interface, r object.Ref, host string) (string, error) {
	b := Backend{Namespace: r.Namespace, Suffix: r.Suffix(), Labels: BackendLabels(r, ObjectCluster)}
	dir, err := t.Init(ctx, b)
	if err != nil {
		return "", err
	}
	return t.KilledLock(ctx, kube, dir, b, host)
}
