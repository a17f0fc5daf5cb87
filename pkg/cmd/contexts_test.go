package cmd

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// contextReads records the rest.Config every context of a scan is read
// with, and serves each from the fake API server with clients built as in
// production (newClients), through that config's transport wrappers.
type contextReads struct {
	mu   sync.Mutex
	cfgs map[string]*rest.Config // by host
}

func readContexts(f *factory, srv *fakeapi.Server) *contextReads {
	r := &contextReads{cfgs: map[string]*rest.Config{}}
	f.forContext = func(cfg *rest.Config) (*clients, error) {
		r.mu.Lock()
		r.cfgs[cfg.Host] = rest.CopyConfig(cfg)
		r.mu.Unlock()
		served := srv.Config()
		served.Wrap(cfg.WrapTransport)
		return newClients(served)
	}
	return r
}

// hosts are the world kubeconfig's servers, by context.
var hosts = map[string]string{"test": "https://127.0.0.1:1", "other": "https://127.0.0.2:1"}

// Every connection flag that means the same in every cluster applies to
// every context of --contexts and --all-contexts, as to --context: the
// config each context is read with is the one kubectl --context NAME would
// build with those flags.
func TestContextsApplyTheConnectionFlags(t *testing.T) {
	for _, c := range []struct {
		flags []string
		// check is what the flag sets in a config, "" (or "0s") unset.
		check func(*rest.Config) string
		want  string
	}{
		{[]string{"--as", "nobody"}, func(c *rest.Config) string { return c.Impersonate.UserName }, "nobody"},
		{[]string{"--as", "nobody", "--as-group", "g1", "--as-group", "g2"}, func(c *rest.Config) string { return strings.Join(c.Impersonate.Groups, ",") }, "g1,g2"},
		{[]string{"--as", "nobody", "--as-uid", "u-1"}, func(c *rest.Config) string { return c.Impersonate.UID }, "u-1"},
		{[]string{"--request-timeout", "7s"}, func(c *rest.Config) string { return c.Timeout.String() }, "7s"},
		{[]string{"--insecure-skip-tls-verify"}, func(c *rest.Config) string { return map[bool]string{true: "insecure"}[c.Insecure] }, "insecure"},
		{[]string{"--disable-compression"}, func(c *rest.Config) string { return map[bool]string{true: "uncompressed"}[c.DisableCompression] }, "uncompressed"},
	} {
		want := c.want
		for _, scan := range [][]string{{"--contexts", "test,other"}, {"--all-contexts"}} {
			name := strings.Join(append(slices.Clone(scan), c.flags...), " ")
			t.Run(name, func(t *testing.T) {
				f, srv := verdictsWorld().factory(t)
				reads := readContexts(f, srv)
				res := captf(t, f, append(append([]string{"locks"}, scan...), c.flags...)...)
				if res.code != 0 || strings.Count(res.out, "terraformmachine/web-1") != 2 {
					t.Fatalf("exit %d\n%s%s", res.code, res.out, res.err)
				}
				for ctx, host := range hosts {
					cfg := reads.cfgs[host]
					if cfg == nil {
						t.Fatalf("context %s was not read", ctx)
					}
					if got := c.check(cfg); got != want {
						t.Errorf("context %s was read with %q, want %q", ctx, got, want)
					}
				}
			})
		}
		// Without the flag, neither context gets it.
		f, srv := verdictsWorld().factory(t)
		reads := readContexts(f, srv)
		if res := captf(t, f, "locks", "--all-contexts"); res.code != 0 {
			t.Fatalf("exit %d %s", res.code, res.err)
		}
		for _, cfg := range reads.cfgs {
			if got := c.check(cfg); got != "" && got != "0s" {
				t.Errorf("%v without the flag: %q", c.flags, got)
			}
		}
	}
}

// -n and --kubeconfig apply to every context; without -n each context
// reads its own namespace.
func TestContextsNamespaceAndKubeconfig(t *testing.T) {
	w := verdictsWorld()
	f, srv := w.factory(t)
	readContexts(f, srv)
	if res := captf(t, f, "locks", "--all-contexts", "-n", "elsewhere", "-o", "json"); res.code != 0 || strings.Contains(res.out, "web-1") {
		t.Errorf("-n elsewhere: exit %d\n%s%s", res.code, res.out, res.err)
	}
	namespaces := map[string]int{}
	for _, r := range srv.Requests() {
		if r.Resource == "leases" {
			namespaces[r.Namespace]++
		}
	}
	if len(namespaces) != 1 || namespaces["elsewhere"] != 2 {
		t.Errorf("the Leases were listed in %v, want elsewhere, once a context", namespaces)
	}
	// Another kubeconfig, with one context of another server.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kc, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.3:1\"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: third\n  context: {cluster: c, user: u, namespace: "+w.ns+"}\ncurrent-context: third\n")
	reads := readContexts(f, srv)
	res := captf(t, f, "--kubeconfig", kc, "locks", "--all-contexts")
	if res.code != 0 || !strings.HasPrefix(res.out, "CONTEXT   OBJECT") || !strings.Contains(res.out, "third     terraformmachine/web-1") {
		t.Errorf("--kubeconfig: exit %d\n%s%s", res.code, res.out, res.err)
	}
	if len(reads.cfgs) != 1 || reads.cfgs["https://127.0.0.3:1"] == nil || reads.cfgs["https://127.0.0.3:1"].BearerToken != "t" {
		t.Errorf("--kubeconfig: read %v", reads.cfgs)
	}
}

// The flags that name one cluster or one credential are refused when
// several contexts are read, before any request; with --contexts of one
// name they apply, as with --context.
func TestContextsRefuseOneClusterFlags(t *testing.T) {
	values := map[string]string{
		"server": "https://127.0.0.9:6443", "cluster": "other", "user": "test", "token": "secret",
		"client-certificate": "/tmp/c.crt", "client-key": "/tmp/c.key", "certificate-authority": "/tmp/ca.crt", "tls-server-name": "api.example",
	}
	for _, fl := range oneClusterFlags {
		for _, scan := range [][]string{{"--all-contexts"}, {"--contexts", "test,other"}} {
			args := append(append([]string{"locks"}, scan...), "--"+fl.flag, values[fl.flag])
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				f, srv := verdictsWorld().factory(t)
				reads := readContexts(f, srv)
				res := captf(t, f, args...)
				want := "error: --" + fl.flag + " cannot be used with " + scan[0]
				if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, want) || !strings.Contains(res.err, "it names one cluster") {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line %q…", res.code, res.out, res.err, want)
				}
				if len(reads.cfgs) != 0 || len(srv.Requests()) != 0 {
					t.Errorf("a refused run read %d contexts, %d requests", len(reads.cfgs), len(srv.Requests()))
				}
			})
		}
	}
	// One context: they apply.
	f, srv := verdictsWorld().factory(t)
	reads := readContexts(f, srv)
	res := captf(t, f, "locks", "--contexts", "test", "--server", "https://127.0.0.9:6443", "--token", "secret")
	if res.code != 0 || reads.cfgs["https://127.0.0.9:6443"] == nil || reads.cfgs["https://127.0.0.9:6443"].BearerToken != "secret" {
		t.Errorf("--contexts test --server --token: exit %d, read %v\n%s", res.code, reads.cfgs, res.err)
	}
	reads = readContexts(f, srv)
	if res := captf(t, f, "locks", "--contexts", "test", "--cluster", "other"); res.code != 0 || len(reads.cfgs) != 1 || reads.cfgs[hosts["other"]] == nil {
		t.Errorf("--contexts test --cluster other: exit %d, read %v\n%s", res.code, reads.cfgs, res.err)
	}
}

// contextFlags carries every connection flag of cli-runtime's ConfigFlags
// but --context, the context scanned: a flag cli-runtime adds fails here
// until it is carried.
func TestContextFlagsCarriesEveryFlag(t *testing.T) {
	fl := genericclioptions.NewConfigFlags(true)
	v := reflect.ValueOf(fl).Elem()
	for i := 0; i < v.NumField(); i++ {
		field := v.Field(i)
		if !field.CanSet() {
			continue
		}
		name := v.Type().Field(i).Name
		switch p := field.Addr().Interface().(type) {
		case **string:
			s := "value of " + name
			*p = &s
		case **bool:
			b := true
			*p = &b
		case **[]string:
			*p = &[]string{"value of " + name}
		case *func(*rest.Config) *rest.Config:
			*p = func(c *rest.Config) *rest.Config { c.UserAgent = "wrapped"; return c }
		default:
			t.Fatalf("ConfigFlags.%s is a %s, which contextFlags does not know", name, field.Type())
		}
	}
	c := reflect.ValueOf(contextFlags(fl, "ctx")).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if !v.Field(i).CanSet() {
			continue
		}
		got, want := c.Field(i).Interface(), v.Field(i).Interface()
		switch name {
		case "Context":
			if *c.Field(i).Interface().(*string) != "ctx" {
				t.Errorf("Context is %q", *c.Field(i).Interface().(*string))
			}
		case "WrapConfigFn":
			if cfg := c.Field(i).Interface().(func(*rest.Config) *rest.Config)(&rest.Config{}); cfg.UserAgent != "wrapped" {
				t.Error("WrapConfigFn is not carried")
			}
		default:
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
		}
	}
}

// The request counter (KUBECTL_CAPTF_COUNT_REQUESTS) counts every
// context's requests.
func TestContextsCountRequests(t *testing.T) {
	t.Setenv(RequestCountEnv, "1")
	f, srv := verdictsWorld().factory(t)
	readContexts(f, srv)
	res := captf(t, f, "locks", "--all-contexts")
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.err)
	}
	want := "captf-requests: " + strconv.Itoa(len(srv.Requests())) + "\n"
	if !strings.HasSuffix(res.err, want) || len(srv.Requests()) == 0 {
		t.Errorf("stderr %q, want it to end in %q", res.err, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// -o name is refused with --contexts and --all-contexts, of any number of
// contexts: a Lease name does not say its cluster. The jsonpath the error
// suggests prints each lock's context, namespace and name.
func TestContextsRefuseNames(t *testing.T) {
	for _, scan := range [][]string{{"--contexts", "test"}, {"--contexts", "test,other"}, {"--all-contexts"}} {
		f, srv := verdictsWorld().factory(t)
		reads := readContexts(f, srv)
		res := captf(t, f, append(append([]string{"locks"}, scan...), "-o", "name")...)
		if res.code != ExitError || res.out != "" || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "error: -o name cannot be used with "+scan[0]+":") || !strings.Contains(res.err, "-o jsonpath=") {
			t.Errorf("%v -o name: exit %d, stdout %q, stderr %q", scan, res.code, res.out, res.err)
		}
		if len(reads.cfgs) != 0 || len(srv.Requests()) != 0 {
			t.Errorf("%v -o name read %d contexts, %d requests", scan, len(reads.cfgs), len(srv.Requests()))
		}
	}
	f, srv := verdictsWorld().factory(t)
	readContexts(f, srv)
	res := captf(t, f, "locks", "--contexts", "test,other", "--verdict", "Stale", "-o", "jsonpath="+contextNamesJSONPath)
	web := object.LockLeaseName("default", object.StateSuffix("infra", object.TerraformMachine, "web-1"))
	if want := "test\tinfra\t" + web + "\nother\tinfra\t" + web + "\n"; res.code != 0 || res.out != want {
		t.Errorf("the suggested jsonpath: exit %d %q, want %q\n%s", res.code, res.out, want, res.err)
	}
	// One cluster: the names, as kubectl prints them.
	if res := captf(t, f, "locks", "--verdict", "Stale", "-o", "name"); res.code != 0 || res.out != "lease.coordination.k8s.io/"+web+"\n" {
		t.Errorf("-o name in one context: exit %d %q", res.code, res.out)
	}
}

// A scan of several contexts does not read the current context first: a
// flag no context can take (--as-uid without --as) fails each context,
// with a warning each, as it fails --context.
func TestContextsCheckEachContext(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	reads := readContexts(f, srv)
	res := captf(t, f, "locks", "--all-contexts", "--as-uid", "u-1")
	lines := strings.Split(strings.TrimSpace(res.err), "\n")
	if res.code != ExitError || res.out != "" || len(lines) != 3 || lines[2] != "error: none of the 2 contexts could be read" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
	}
	for i, ctx := range []string{"other", "test"} {
		if !strings.HasPrefix(lines[i], "Warning: context "+ctx+": ") || !strings.Contains(lines[i], "without impersonating a user") {
			t.Errorf("context %s: %q", ctx, lines[i])
		}
	}
	if len(reads.cfgs) != 0 || len(srv.Requests()) != 0 {
		t.Errorf("%d contexts read, %d requests", len(reads.cfgs), len(srv.Requests()))
	}
}

// --all-contexts with a kubeconfig that has no context (a missing
// $KUBECONFIG, an empty file) is an error, before any request: a cron
// check that reads nothing must not report all clear (review27 M1).
func TestAllContextsOfNoContextIsAnError(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	readContexts(f, srv)
	kc := filepath.Join(t.TempDir(), "empty")
	writeFile(t, kc, "apiVersion: v1\nkind: Config\n")
	res := captf(t, f, "--kubeconfig", kc, "locks", "--all-contexts", "--exit-code")
	if res.code != ExitError || res.out != "" || res.err != "error: --all-contexts found no context in the kubeconfig: nothing to read\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d requests", len(srv.Requests()))
	}
}

// An exec credential plugin gets no terminal input when several contexts
// are read at once, and keeps it with one (review27 m4).
func TestContextsExecPluginsGetNoStdinWhenSeveral(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kc, `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false, interactiveMode: IfAvailable}
contexts:
- name: a
  context: {cluster: c, user: u, namespace: infra}
- name: b
  context: {cluster: c, user: u, namespace: infra}
current-context: a
`)
	for _, c := range []struct {
		scan []string
		want bool
	}{{[]string{"--contexts", "a,b"}, true}, {[]string{"--all-contexts"}, true}, {[]string{"--contexts", "a"}, false}} {
		f, srv := verdictsWorld().factory(t)
		var mu sync.Mutex
		var seen []bool
		f.forContext = func(cfg *rest.Config) (*clients, error) {
			mu.Lock()
			seen = append(seen, cfg.ExecProvider != nil && cfg.ExecProvider.StdinUnavailable)
			if cfg.ExecProvider != nil && cfg.ExecProvider.StdinUnavailable {
				// The login it offers is a command built as every printed
				// one is: quoted, with the run's kubeconfig.
				if want := "(kubectl --kubeconfig " + kc + " --context "; !strings.Contains(cfg.ExecProvider.StdinUnavailableMessage, want) ||
					!strings.HasSuffix(cfg.ExecProvider.StdinUnavailableMessage, " version)") {
					t.Errorf("message %q", cfg.ExecProvider.StdinUnavailableMessage)
				}
			}
			mu.Unlock()
			return newClients(srv.Config())
		}
		captf(t, f, append([]string{"--kubeconfig", kc, "locks"}, c.scan...)...)
		if len(seen) == 0 {
			t.Fatalf("%v: no context read", c.scan)
		}
		for _, got := range seen {
			if got != c.want {
				t.Errorf("%v: StdinUnavailable %v, want %v", c.scan, got, c.want)
			}
		}
	}
}
