package cmd

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/inspect/cluster"
)

// factory gives the commands what they need of the cluster: the kubeconfig
// flags as a RESTClientGetter, and one clients value built from them, once.
// Tests build it from fakes.
type factory struct {
	getter genericclioptions.RESTClientGetter
	// clients, once built.
	clients *clients
	// builder is cli-runtime's resource builder over the getter.
	builder func() *resource.Builder
	// now is the clock of every command; time.Now when nil.
	now func() time.Time
	// forContext builds the clients of one context of --contexts;
	// newClients when nil.
	forContext func(*rest.Config) (*clients, error)
	// flags are the connection flags as given on the command line, which
	// every printed command carries (advice), and with which every context
	// of --contexts is read (contextFlags), its WrapConfigFn (the request
	// counter) included.
	flags *genericclioptions.ConfigFlags
	// getenv reads the environment (KUBECONFIG); os.Getenv when nil.
	getenv func(string) string
	// homeKubeconfig is the kubeconfig loaded when neither --kubeconfig
	// nor $KUBECONFIG is set; clientcmd.RecommendedHomeFile when "".
	homeKubeconfig string
}

// advice builds the commands printed for a person, bound to the cluster
// this run reads, so that pasted later or in another terminal they reach
// it or fail: the connection flags given, file paths made absolute; the
// kubeconfig file the run loaded (--kubeconfig, a $KUBECONFIG of one file
// or ~/.kube/config), or, when no one file holds its configuration (a
// $KUBECONFIG list, the in-cluster configuration), the API server's URL;
// and the context it resolved when --context was not given. A bearer
// token, user name or password is never printed; Conn.Omitted names them.
func (f *factory) advice() advice.Builder {
	var c advice.Conn
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if fl := f.flags; fl != nil {
		c = advice.Conn{
			Kubeconfig: absolute(str(fl.KubeConfig)), Context: str(fl.Context), Cluster: str(fl.ClusterName),
			User: str(fl.AuthInfoName), Server: str(fl.APIServer), TLSServerName: str(fl.TLSServerName),
			CertificateAuthority: absolute(str(fl.CAFile)), ClientCertificate: absolute(str(fl.CertFile)), ClientKey: absolute(str(fl.KeyFile)),
			As: str(fl.Impersonate), AsUID: str(fl.ImpersonateUID),
		}
		c.Insecure = fl.Insecure != nil && *fl.Insecure
		if fl.ImpersonateGroup != nil {
			c.AsGroups = *fl.ImpersonateGroup
		}
		if fl.ImpersonateUserExtra != nil {
			c.AsUserExtra = *fl.ImpersonateUserExtra
		}
		// A proxy's URL may hold its user's password: then it is a
		// credential, left out as --token is. Only a URL with a host and
		// no user is printed: "http:ops:pw@host" parses with the password
		// in its opaque part, and client-go takes it.
		if p := str(fl.ProxyURL); p != "" {
			if u, err := url.Parse(p); err == nil && u.User == nil && u.Opaque == "" && u.Host != "" {
				c.ProxyURL = p
			} else {
				c.Omitted = append(c.Omitted, "--proxy-url")
			}
		}
		for flag, v := range map[string]*string{"--token": fl.BearerToken, "--username": fl.Username, "--password": fl.Password} {
			if str(v) != "" {
				c.Omitted = append(c.Omitted, flag)
			}
		}
		slices.Sort(c.Omitted)
	}
	if c.Context == "" {
		if raw, err := f.getter.ToRawKubeConfigLoader().RawConfig(); err == nil {
			c.Context = raw.CurrentContext
		}
	}
	if c.Kubeconfig == "" {
		c.Kubeconfig = f.loadedKubeconfig()
	}
	if c.Kubeconfig == "" && c.Server == "" {
		if cfg, err := f.getter.ToRESTConfig(); err == nil {
			c.Server, c.ServerDerived = cfg.Host, true
		}
	}
	return advice.Builder{Conn: c}
}

// loadedKubeconfig is the one kubeconfig file a run without --kubeconfig
// loads, as an absolute path: $KUBECONFIG when it names one file, else
// ~/.kube/config when it exists; "" when a $KUBECONFIG list is merged or
// no file is (in a pod).
func (f *factory) loadedKubeconfig() string {
	getenv := f.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if env := getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		var files []string
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				files = append(files, p)
			}
		}
		if len(files) == 1 {
			return absolute(files[0])
		}
		return ""
	}
	home := f.homeKubeconfig
	if home == "" {
		home = clientcmd.RecommendedHomeFile
	}
	if _, err := os.Stat(home); err != nil {
		return ""
	}
	return absolute(home)
}

// absolute is p as an absolute path ("" stays ""): a relative path in a
// printed command would name another file pasted in another directory.
func absolute(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (f *factory) clock() time.Time {
	if f.now != nil {
		return f.now()
	}
	return time.Now()
}

func newFactory(getter genericclioptions.RESTClientGetter) *factory {
	return &factory{getter: getter, builder: func() *resource.Builder { return resource.NewBuilder(getter) }}
}

// namespace is the namespace of -n or the kubeconfig context.
func (f *factory) namespace() (string, error) {
	ns, _, err := f.getter.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// complete is what every command's Complete reads first: the namespace
// ("" with -A) and the printer of its -o.
func (f *factory) complete(print *printFlags, allNamespaces bool) (string, printers.ResourcePrinter, error) {
	ns, err := f.namespace()
	if err != nil {
		return "", nil, err
	}
	if allNamespaces {
		ns = ""
	}
	p, err := print.ToPrinter()
	return ns, p, err
}

// Clients builds the clients on first use. It reads the kubeconfig but
// talks to no server.
func (f *factory) Clients() (*clients, error) {
	if f.clients != nil {
		return f.clients, nil
	}
	cfg, err := f.getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	if err := f.noKubeconfig(cfg); err != nil {
		return nil, err
	}
	f.clients, err = newClients(cfg)
	return f.clients, err
}

// clients are what the commands talk to the cluster with.
type clients struct {
	reader   *cluster.Reader
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	// impersonated: the resolved configuration impersonates (--as and
	// --as-group, or as: and as-groups: on the kubeconfig's user).
	impersonated bool
}

// newClients builds every client from one rest.Config, with the engine's
// one policy (cluster.ForConfig).
func newClients(cfg *rest.Config) (*clients, error) {
	in, err := cluster.ForConfig(cfg)
	if err != nil {
		return nil, err
	}
	imp := cfg.Impersonate
	impersonated := imp.UserName != "" || imp.UID != "" || len(imp.Groups) > 0 || len(imp.Extra) > 0
	return &clients{reader: in, kube: in.Client, dynamic: in.Dynamic, metadata: in.Metadata, impersonated: impersonated}, nil
}
