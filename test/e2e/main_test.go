// Package e2e runs kubectl captf against a real kube-apiserver and etcd on
// 127.0.0.1, with locks taken by the real terraform binary.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	args := []string{"build", "-o", plugin}
	if raceEnabled {
		args = append(args, "-race")
		// Every plugin process, however a test starts it (directly,
		// through kubectl or a k9s plugin's command), writes its race
		// reports to raceDir/report.<pid>: a race is caught even when the
		// plugin exits with its own non-zero code, which hides the race
		// detector's exit code 66. atexit_sleep_ms=0: the detector's
		// default second of sleep at every exit (for races of goroutines
		// still running then) would make the suite four times as slow, for
		// hundreds of short runs.
		raceDir = filepath.Join(workDir, "race")
		if err := os.Mkdir(raceDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0 log_path="+filepath.Join(raceDir, "report")))
	}
	build := exec.Command("go", append(args, "github.com/captf-io/kubectl-captf/cmd/kubectl-captf")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the plugin:", err)
		return 1
	}
	// The kubectl built with the test-bed's kube-apiserver, whatever
	// kubectl PATH had: every test that runs kubectl, directly or through
	// PATH, runs it.
	bins, err := testbed.Binaries(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("PATH", testbed.PathDir(bins)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var kubectlVersion string
	kubectlBin, kubectlVersion, kubectlErr = findKubectl()
	start := time.Now()
	bed, err = testbed.Start(ctx, testbed.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test-bed:", err)
		return 1
	}
	defer bed.Stop()
	ready := time.Since(start).Round(time.Millisecond)
	if admin, err = bed.Clients(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Which Kubernetes this run proves the plugin on, in its log.
	server, err := admin.Kube.Discovery().ServerVersion()
	if err != nil {
		fmt.Fprintln(os.Stderr, "the test-bed's version:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "test-bed ready at %s in %s: kube-apiserver %s, kubectl %s %s\n", bed.Server, ready, server.GitVersion, kubectlBin, kubectlVersion)
	// A run proves the plugin on one Kubernetes: kubectl too is of the
	// test-bed's version, whatever build.sh copied or PATH had.
	if kubectlErr == nil && kubectlVersion != server.GitVersion {
		fmt.Fprintf(os.Stderr, "kubectl %s is %s, not the test-bed's %s: remove %s and run hack/testbed/build.sh\n", kubectlBin, kubectlVersion, server.GitVersion, filepath.Join(testbed.PathDir(bins), "kubectl"))
		return 1
	}
	tf = testbed.Terraform{Kubeconfig: bed.Kubeconfig, Dir: workDir}
	tofu = testbed.Terraform{Bin: filepath.Join(bins, "tofu"), Kubeconfig: bed.Kubeconfig, Dir: workDir}
	code := m.Run()
	// Races of plugin processes no test checked by pid (a watch it
	// killed, a plugin kubectl ran) fail the run here.
	if raceDir != "" {
		leftover, _ := filepath.Glob(filepath.Join(raceDir, "report.*"))
		for _, f := range leftover {
			b, _ := os.ReadFile(f)
			fmt.Fprintf(os.Stderr, "FAIL: data race in a plugin process (%s):\n%s\n", filepath.Base(f), b)
			code = 1
		}
	}
	return code
}

// raceDir holds the race reports of the plugin processes when the tests
// run with -race; empty otherwise.
var raceDir string

// checkRace fails the test if the plugin process pid reported a data race,
// in the file the race detector wrote or on the stderr the test read.
func checkRace(t *testing.T, pid int, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("the plugin (pid %d) reported a data race:\n%s", pid, stderr)
	}
	if raceDir == "" {
		return
	}
	f := filepath.Join(raceDir, fmt.Sprintf("report.%d", pid))
	if b, err := os.ReadFile(f); err == nil {
		t.Errorf("the plugin (pid %d) reported a data race:\n%s", pid, b)
		os.Remove(f)
	}
}

// kubectlBin is the real kubectl, found on PATH before any test changes
// PATH; kubectlErr says why there is none fit for the tests.
var (
	kubectlBin string
	kubectlErr error
)

// findKubectl looks for kubectl 1.26 or later on PATH: the first to
// complete a plugin's arguments through its kubectl_complete-<plugin> shim.
// It returns its version too, which TestMain requires to be the test-bed's.
func findKubectl() (string, string, error) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		return "", "", fmt.Errorf("kubectl is not on PATH (hack/testbed/build.sh builds it): %w", err)
	}
	out, err := exec.Command(bin, "version", "--client", "-o", "json").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s version --client: %w", bin, err)
	}
	var v struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return "", "", fmt.Errorf("%s version --client -o json: %w", bin, err)
	}
	var minor int
	if _, err := fmt.Sscanf(v.ClientVersion.GitVersion, "v1.%d", &minor); err != nil || minor < 26 {
		return "", "", fmt.Errorf("%s is kubectl %s: the tests need 1.26 or later, which completes plugins (hack/testbed/build.sh builds it)", bin, v.ClientVersion.GitVersion)
	}
	return bin, v.ClientVersion.GitVersion, nil
}

// needKubectl is the real kubectl; the test fails without it.
func needKubectl(t *testing.T) string {
	t.Helper()
	if kubectlErr != nil {
		t.Fatal(kubectlErr)
	}
	return kubectlBin
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
	checkRace(t, cmd.Process.Pid, r.err)
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
		var stderr string
		if b, ok := cmd.Stderr.(*bytes.Buffer); ok {
			stderr = b.String()
		}
		checkRace(t, cmd.Process.Pid, stderr)
		return cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running 20 s after Ctrl-C")
	}
	return -1
}
