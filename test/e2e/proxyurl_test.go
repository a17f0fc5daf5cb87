package e2e

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// connectProxy is an HTTP proxy on 127.0.0.1 that tunnels CONNECT to
// 127.0.0.1 only, counting the tunnels it opened.
func connectProxy(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var tunnels atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if r.Method != http.MethodConnect || err != nil || host != "127.0.0.1" {
			http.Error(w, "CONNECT to 127.0.0.1 only", http.StatusForbidden)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		w.WriteHeader(http.StatusOK)
		down, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer down.Close()
		tunnels.Add(1)
		go func() { _, _ = io.Copy(up, buf); up.(*net.TCPConn).CloseWrite() }()
		_, _ = io.Copy(down, up)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String(), &tunnels
}

// --proxy-url and --as-user-extra, which cli-runtime v0.37 added, apply
// to every context as to one, and a printed command carries them as the
// run had them; a proxy URL holding a password is a credential, left out.
func TestContextsCarryTheProxyAndUserExtras(t *testing.T) {
	ns := "contexts-proxy"
	staleLocks(t, ns, "proxied")
	kc := writeKubeconfig(t, adminContext("a", ns), adminContext("b", ns))
	proxy, tunnels := connectProxy(t)
	for _, path := range scanPaths {
		// A proxy that is down: every context fails on it.
		refusedBy(t, kc, path, "proxyconnect tcp: dial tcp 127.0.0.1:1: connect: connection refused", "--proxy-url", "http://127.0.0.1:1")
		// A proxy that works: every context is read through it.
		before := tunnels.Load()
		readsLock(t, kc, path, "proxied", "--proxy-url", proxy)
		if n := tunnels.Load() - before; n < int64(len(scanned(path))) {
			t.Errorf("%v: %d tunnels through the proxy, want one a context at least", path, n)
		}
		// --as-user-extra needs --as: client-go refuses it alone, in
		// every context, before any request.
		refusedBy(t, kc, path, "without impersonating a user", "--as-user-extra", "team=infra")
		readsLock(t, kc, path, "proxied", "--as", "alice", "--as-group", "system:masters", "--as-user-extra", "team=infra")
	}
	// A context whose cluster has a proxy-url of its own: --proxy-url
	// would replace it, so with several contexts it is refused, before
	// any request; read alone, it applies as with kubectl --context.
	bastion := withClusterProxy(t, kc, "b", proxy)
	for _, scan := range [][]string{{"--contexts", "a,b"}, {"--all-contexts"}} {
		args := append(append([]string{"locks"}, scan...), "--proxy-url", "http://127.0.0.1:1")
		res := captf(t, bastion, args...)
		if res.code != 1 || res.out != "" || strings.Count(res.err, "\n") != 1 ||
			!strings.HasPrefix(res.err, `error: --proxy-url cannot be used with these 2 contexts: context "b" reaches its cluster through a proxy-url of its own`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, res.code, res.out, res.err)
		}
	}
	readsLock(t, bastion, []string{"--contexts", "a,b"}, "proxied", "--proxy-url", proxy)
	refusedBy(t, bastion, []string{"--context", "b"}, "proxyconnect tcp: dial tcp 127.0.0.1:1", "--proxy-url", "http://127.0.0.1:1")

	// explain's commands carry both, as argv.
	x := explainJSONVia(t, kc, "terraformcluster/proxied", "--proxy-url", proxy, "--as", "alice", "--as-group", "system:masters", "--as-user-extra", "team=infra")
	printed := 0
	for _, a := range x.Advice {
		if len(a.Argv) == 0 {
			continue
		}
		printed++
		if !slices.Contains(a.Argv, proxy) || !strings.Contains(strings.Join(a.Argv, " "), "--as-user-extra team=infra --proxy-url "+proxy) {
			t.Errorf("%q does not carry --as-user-extra and --proxy-url", a.Argv)
		}
	}
	if printed == 0 {
		t.Errorf("explain printed no command: %+v", x.Advice)
	}
	// A proxy URL with a password: the run uses it, no command prints it.
	withPassword := strings.Replace(proxy, "http://", "http://ops:pw@", 1)
	x = explainJSONVia(t, kc, "terraformcluster/proxied", "--proxy-url", withPassword)
	last := x.Advice[len(x.Advice)-1]
	for _, a := range x.Advice {
		if strings.Contains(strings.Join(a.Argv, " "), "pw@") {
			t.Errorf("the proxy's password is printed: %q", a.Argv)
		}
	}
	if !strings.Contains(last.Comment, "leave out --proxy-url") {
		t.Errorf("no note that --proxy-url was left out: %+v", x.Advice)
	}
}

// A proxy URL client-go cannot use is named in its error without its
// password, from --proxy-url and from a kubeconfig, for one context or
// many, on stderr and in the JSON list's contextErrors (review28 n2).
func TestAProxyPasswordIsNeverPrinted(t *testing.T) {
	ns := "proxy-password"
	staleLocks(t, ns, "hidden")
	kc := writeKubeconfig(t, adminContext("a", ns), adminContext("b", ns))
	const bad = "http://ops:s3cret@%zz"
	for _, args := range [][]string{
		{"locks", "--proxy-url", bad},
		{"locks", "--contexts", "a,b", "--proxy-url", bad},
		{"locks", "--all-contexts", "-o", "json", "--proxy-url", bad},
		{"explain", "terraformcluster/hidden", "--proxy-url", bad},
	} {
		res := captf(t, kc, args...)
		if res.code == 0 || strings.Contains(res.out+res.err, "s3cret") || !strings.Contains(res.out+res.err, "http://ops:xxxxx@%zz") {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, res.code, res.out, res.err)
		}
	}
	inFile := withClusterProxy(t, kc, "b", bad)
	for _, args := range [][]string{{"locks", "--context", "b"}, {"locks", "--contexts", "a,b", "-o", "json"}} {
		res := captf(t, inFile, args...)
		if strings.Contains(res.out+res.err, "s3cret") || !strings.Contains(res.out+res.err, "ops:xxxxx@") {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, res.code, res.out, res.err)
		}
	}
}

// withClusterProxy is a copy of the kubeconfig kc whose cluster gives
// proxy as its own proxy-url.
func withClusterProxy(t *testing.T, kc, cluster, proxy string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[cluster].ProxyURL = proxy
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}
