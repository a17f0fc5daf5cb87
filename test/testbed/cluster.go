// Package testbed runs a throw-away Kubernetes control plane (etcd and
// kube-apiserver, built from the Go module proxy by hack/testbed/build.sh)
// on 127.0.0.1, for the end-to-end tests and `make demo`. There is no
// kubelet, scheduler or controller-manager: pods stay where tests put them.
package testbed

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Users in the token file. Admin is in system:masters; the others have
// no rights until a test binds some.
const (
	AdminUser = "admin"
	Viewer    = "viewer"
	Nobody    = "nobody"
)

// Cluster is a running test-bed.
type Cluster struct {
	Dir    string
	Server string
	CAFile string
	// Kubeconfig is the admin's kubeconfig.
	Kubeconfig string
	pids       []int
	// apiserver is how kube-apiserver was started, for RestartAPIServer.
	apiserver []string
	opts      Options
}

// Options for Start.
type Options struct {
	// Dir holds data, certificates, logs and kubeconfigs; a new temporary
	// directory when empty.
	Dir string
	// Detach starts the servers in their own session, so they outlive the
	// process that started them (make demo).
	Detach bool
	// NoCRDs leaves CAPTF's CRDs out, as on a cluster without CAPTF.
	NoCRDs bool
	// APIServerFlags are more kube-apiserver flags, after the test-bed's
	// own: the benchmark turns on a watch cache that kube-apiserver keeps
	// off by default, to measure what it changes.
	APIServerFlags []string
}

// Start builds (or takes from the cache) the binaries and starts etcd and
// kube-apiserver on free ports of 127.0.0.1. It returns when the API
// server is ready and namespace "default" exists.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	bin, err := Binaries(ctx)
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "captf-testbed-"); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Dir: dir, opts: o}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := c.run(o, filepath.Join(bin, "etcd"), "etcd.log",
		"--name", "testbed", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "testbed="+peerURL, "--unsafe-no-fsync", "--log-level", "warn",
	); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, &http.Client{}, etcdURL+"/health", "", 30*time.Second); err != nil {
		return nil, fmt.Errorf("etcd did not become healthy (see %s): %w", filepath.Join(dir, "etcd.log"), err)
	}
	if err := c.writeSecrets(); err != nil {
		return nil, err
	}
	certs := filepath.Join(dir, "certs")
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	c.CAFile = filepath.Join(certs, "apiserver.crt")
	c.apiserver = []string{filepath.Join(bin, "kube-apiserver"),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]), "--cert-dir=" + certs,
		"--etcd-servers=" + etcdURL,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
	}
	c.apiserver = append(c.apiserver, o.APIServerFlags...)
	if err := c.run(o, c.apiserver[0], "kube-apiserver.log", c.apiserver[1:]...); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, fmt.Errorf("kube-apiserver did not become ready (see %s): %w", filepath.Join(dir, "kube-apiserver.log"), err)
	}
	if c.Kubeconfig, err = c.KubeconfigFor(AdminUser, "default"); err != nil {
		return nil, err
	}
	if !o.NoCRDs {
		if err := c.installCRDs(ctx); err != nil {
			return nil, err
		}
	}
	ok = true
	return c, nil
}

// Binaries returns the directory holding etcd, kube-apiserver (and OpenTofu
// when built) and, in PathDir, kubectl, building them on first use. The
// Kubernetes version is the default one of hack/testbed, or the older one
// CAPTF_KUBE names (for example 1.34), which build.sh reads from the
// environment this process passes on.
func Binaries(ctx context.Context) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "testbed", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building the test-bed binaries: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// PathDir is the directory of bins (from Binaries) that goes first on PATH
// for the tests that run kubectl: it holds only the kubectl of the
// test-bed's Kubernetes version, built beside kube-apiserver, so that
// whatever kubectl PATH has, they run this one.
func PathDir(bins string) string { return filepath.Join(bins, "bin") }

// Stop ends exactly the processes Start began, and removes the directory.
func (c *Cluster) Stop() {
	for i := len(c.pids) - 1; i >= 0; i-- {
		stopPID(c.pids[i])
	}
	os.RemoveAll(c.Dir)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same
// port, as an upgrade or a crash does: every open watch ends, and the new
// server's watch cache starts afresh, so a client resuming from an older
// resourceVersion is told 410 Gone and must relist.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	last := len(c.pids) - 1
	stopPID(c.pids[last])
	c.pids = c.pids[:last]
	if err := c.run(c.opts, c.apiserver[0], "kube-apiserver-restarted.log", c.apiserver[1:]...); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// PIDs are the server processes, apiserver last.
func (c *Cluster) PIDs() []int { return c.pids }

func stopPID(pid int) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	_ = p.Signal(syscall.SIGTERM)
	for i := 0; i < 50; i++ {
		if p.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = p.Kill()
}

func (c *Cluster) run(o Options, bin, log string, args ...string) error {
	f, err := os.Create(filepath.Join(c.Dir, log))
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a test's Ctrl-C is not the servers', and the
	// demo's servers outlive make. Otherwise the servers die with the
	// process that started them, even when a panicking test skips Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !o.Detach, Setsid: o.Detach}
	if !o.Detach {
		dieWithParent(cmd.SysProcAttr)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", filepath.Base(bin), err)
	}
	c.pids = append(c.pids, cmd.Process.Pid)
	go cmd.Wait() //nolint:errcheck // reaps the child; its log file says why it ended
	return nil
}

// Token is the bearer token of a user in the token file.
func Token(user string) string { return user + "-token" }

func (c *Cluster) writeSecrets() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"tokens.csv": []byte(fmt.Sprintf("%s,%s,1,\"system:masters\"\n%s,%s,2\n%s,%s,3\n",
			Token(AdminUser), AdminUser, Token(Viewer), Viewer, Token(Nobody), Nobody)),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.Dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// KubeconfigFor writes a kubeconfig for a user of the token file, with the
// given namespace as its context's namespace, and returns its path.
func (c *Cluster) KubeconfigFor(user, namespace string) (string, error) {
	path := filepath.Join(c.Dir, "kubeconfig-"+user+"-"+namespace)
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: testbed
  context:
    cluster: testbed
    user: %s
    namespace: %s
current-context: testbed
`, c.Server, c.CAFile, user, Token(user), user, namespace)
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// readyWithin is how long a started kube-apiserver may take to serve. It
// is ready in about 3 s on a quiet machine; `make test` starts the e2e
// and bench test-beds at once, beside the race-built tests compiling,
// and one bench start missed a 60 s deadline that way on 2 cores
// (2026-12-07). Only a failure waits this long.
const readyWithin = 3 * time.Minute

func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyWithin)
	for {
		if _, err := os.Stat(c.CAFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no serving certificate in %s", c.CAFile)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if err := waitHTTP(ctx, client, c.Server+"/readyz", Token(AdminUser), time.Until(deadline)); err != nil {
		return err
	}
	return waitHTTP(ctx, client, c.Server+"/api/v1/namespaces/default", Token(AdminUser), time.Until(deadline))
}

func waitHTTP(ctx context.Context, client *http.Client, url, token string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return last
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "testbed", "build.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("hack/testbed/build.sh not found above the working directory")
		}
		dir = parent
	}
}
