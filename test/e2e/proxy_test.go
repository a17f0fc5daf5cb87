package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// proxy stands between the plugin and the real API server on 127.0.0.1,
// as admin, so that a test can act at an exact point of a command's run
// (delete a Lease before the plugin's first write, fail one read) without
// sleeps and without a test hook in the plugin.
type proxy struct {
	mu sync.Mutex
	// hook runs before each request is forwarded; when it returns true
	// the request is not forwarded (it wrote its own answer).
	hook func(w http.ResponseWriter, r *http.Request, seen int) bool
	seen map[string]int
}

// adminForward is a reverse proxy to the test-bed, as its admin.
func adminForward(t *testing.T) http.HandlerFunc {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", bed.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	return rp.ServeHTTP
}

// newProxy starts a proxy and returns a kubeconfig that talks through it,
// in namespace ns.
func newProxy(t *testing.T, ns string, hook func(w http.ResponseWriter, r *http.Request, seen int) bool) string {
	t.Helper()
	forward := adminForward(t)
	p := &proxy{hook: hook, seen: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		key := r.Method + " " + r.URL.Path
		p.seen[key]++
		n := p.seen[key]
		p.mu.Unlock()
		if p.hook != nil && p.hook(w, r, n) {
			return
		}
		forward(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: p\n  cluster:\n    server: " + srv.URL + "\nusers:\n- name: p\n  user: {}\ncontexts:\n- name: p\n  context:\n    cluster: p\n    user: p\n    namespace: " + ns + "\ncurrent-context: p\n"
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}
