// Package e2e runs kubectl captf against a real kube-apiserver and etcd on
// 127.0.0.1, with locks taken by the real terraform binary.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/test/testbed"
)

var (
	bed     *testbed.Cluster
	admin   *testbed.Clients
	tf      testbed.Terraform
	tofu    testbed.Terraform
	binDir  string
	plugin  string
	workDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if workDir, err = os.MkdirTemp("", "captf-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	binDir = filepath.Join(workDir, "bin")
	plugin = filepath.Join(binDir, "kubectl-captf")
	build := exec.Command("go", "build", "-o", plugin, "github.com/captf-io/kubectl-captf/cmd/kubectl-captf")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the plugin:", err)
		return 1
	}
	start := time.Now()
	bed, err = testbed.Start(ctx, testbed.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test-bed:", err)
		return 1
	}
	defer bed.Stop()
	fmt.Fprintf(os.Stderr, "test-bed ready at %s in %s\n", bed.Server, time.Since(start).Round(time.Millisecond))
	if admin, err = bed.Clients(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tf = testbed.Terraform{Kubeconfig: bed.Kubeconfig, Dir: workDir}
	bins, err := testbed.Binaries(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tofu = testbed.Terraform{Bin: filepath.Join(bins, "tofu"), Kubeconfig: bed.Kubeconfig, Dir: workDir}
	return m.Run()
}

// result is one run of the plugin binary.
type result struct {
	out, err string
	code     int
}

// captf runs the built plugin with a kubeconfig.
func captf(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out: out.String(), err: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running the plugin: %v", err)
	}
	return r
}

// kubeconfigIn is the admin's kubeconfig with a given context namespace.
func kubeconfigIn(t *testing.T, ns string) string {
	t.Helper()
	k, err := bed.KubeconfigFor(testbed.AdminUser, ns)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// machineHostname is this machine's hostname: the host of a workstation lock.
func machineHostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// metadataClient is an admin metadata client, for driving the packages directly.
func metadataClient(t *testing.T) metadata.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// flat folds wrapped human output back into one line: runs of white space
// become one space and shell continuations disappear, so a test checks
// what a reader reads, wherever the 100-column wrap fell.
func flat(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, " \\\n", " ")), " ")
}

// interrupt sends Ctrl-C to a running plugin and returns its exit code; the
// 20 s bound is for liveness, not a speed measurement.
func interrupt(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running 20 s after Ctrl-C")
	}
	return -1
}
