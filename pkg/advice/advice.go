// Package advice builds every command the plugin prints for a person to
// run: unlock's refusals and dry runs, explain's advice, the look after a
// conflict, the reconcile trigger. Each is built here, and only here, as
// an argv that carries the connection flags the plugin itself was run
// with, so that pasted it reaches the cluster it was computed for; package
// shell quotes it for an interactive bash or zsh.
package advice

import (
	"slices"
	"strings"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/shell"
)

// Conn are the flags that bind a command to a cluster and a user: those
// the plugin was given, and the kubeconfig context it resolved. A token,
// user name or password is a credential and never part of a command
// printed for a person, so it has no field here.
type Conn struct {
	Kubeconfig string
	Context    string
	Cluster    string
	User       string
	Server     string
	// ServerDerived is true when Server is not --server but the URL of
	// the configuration the run merged, where no one kubeconfig file
	// holds it (a $KUBECONFIG list, the in-cluster configuration).
	ServerDerived bool
	// TLSServerName, CertificateAuthority, ClientCertificate, ClientKey
	// and Insecure are the TLS flags.
	TLSServerName        string
	CertificateAuthority string
	ClientCertificate    string
	ClientKey            string
	Insecure             bool
	// ProxyURL is --proxy-url: the way to the API server, which a printed
	// command needs as the run did.
	ProxyURL string
	// As, AsGroups, AsUID and AsUserExtra (key=value each) impersonate.
	As          string
	AsGroups    []string
	AsUID       string
	AsUserExtra []string
	// Omitted names the credential flags the run was given and that no
	// printed command carries (--token, --username, --password).
	Omitted []string
}

// Flags are the connection flags as arguments, in kubectl's spelling and
// a fixed order.
func (c Conn) Flags() []string {
	var out []string
	add := func(flag, value string) {
		if value != "" {
			out = append(out, flag, value)
		}
	}
	add("--kubeconfig", c.Kubeconfig)
	add("--context", c.Context)
	add("--cluster", c.Cluster)
	add("--user", c.User)
	add("--server", c.Server)
	add("--tls-server-name", c.TLSServerName)
	add("--certificate-authority", c.CertificateAuthority)
	add("--client-certificate", c.ClientCertificate)
	add("--client-key", c.ClientKey)
	if c.Insecure {
		out = append(out, "--insecure-skip-tls-verify")
	}
	add("--as", c.As)
	for _, g := range c.AsGroups {
		add("--as-group", g)
	}
	add("--as-uid", c.AsUID)
	for _, e := range c.AsUserExtra {
		add("--as-user-extra", e)
	}
	add("--proxy-url", c.ProxyURL)
	return out
}

// Builder builds the commands of one run of the plugin.
type Builder struct {
	Conn Conn
}

// Kubectl is `kubectl <connection flags> <args>`.
func (b Builder) Kubectl(args ...string) []string {
	return append(append([]string{"kubectl"}, b.Conn.Flags()...), args...)
}

// Captf is `kubectl captf <connection flags> <args>`: the plugin takes the
// flags after its name.
func (b Builder) Captf(args ...string) []string {
	return append(append([]string{"kubectl", "captf"}, b.Conn.Flags()...), args...)
}

// Guard is what an unlock command offers to get past unlock's guards.
type Guard struct {
	// Force clears a live own-pod holder's lock.
	Force bool
	// ID, when IDGiven, is the lock ID the command names with --id.
	ID      string
	IDGiven bool
}

// Unlock is `kubectl captf unlock <arg> -n <namespace>` with the guard's
// flags, --reconcile when reconcile is set and --confirm when confirm is.
func (b Builder) Unlock(arg, namespace string, g Guard, confirm, reconcile bool) []string {
	c := b.Captf("unlock", arg, "-n", namespace)
	if g.Force {
		c = append(c, "--force")
	}
	if g.IDGiven {
		c = append(c, "--id", g.ID)
	}
	if reconcile {
		c = append(c, "--reconcile")
	}
	if confirm {
		c = append(c, "--confirm")
	}
	return c
}

// Explain is `kubectl captf explain <arg> -n <namespace>`.
func (b Builder) Explain(arg, namespace string) []string {
	return b.Captf("explain", arg, "-n", namespace)
}

// ReconcileAnnotation is the annotation that `unlock --reconcile` and the
// printed reconcile command set on the object: any update of it makes
// CAPTF's controller reconcile, and the controller does not watch Leases.
const ReconcileAnnotation = "captf.io/unlocked-at"

// Reconcile annotates the object so that its controller reconciles now.
func (b Builder) Reconcile(arg, namespace string, now time.Time) []string {
	return b.Kubectl("annotate", arg, "-n", namespace, ReconcileAnnotation+"="+now.UTC().Format(time.RFC3339), "--overwrite")
}

// Logs is `kubectl logs -n <namespace> <pod>`.
func (b Builder) Logs(namespace, pod string) []string {
	return b.Kubectl("logs", "-n", namespace, pod)
}

// DescribePod is `kubectl describe pod -n <namespace> <pod>`.
func (b Builder) DescribePod(namespace, pod string) []string {
	return b.Kubectl("describe", "pod", "-n", namespace, pod)
}

// Run is a command to run, with the comment that says when ("" for none):
// quoted for an interactive shell, or, when an argument cannot be shown,
// with no command and the reason why. The lock ID after --id, which a
// lock holder chose, is always single-quoted: bare, a zsh global alias of
// that name would replace it.
func Run(comment string, argv []string) v1alpha1.Advice {
	a := v1alpha1.Advice{Comment: comment, Argv: argv}
	words, err := Words(argv)
	if err != nil {
		a.Unprintable = err.Error()
		return a
	}
	a.Command = strings.Join(words, " ")
	return a
}

// Words are argv's arguments quoted as Run quotes them, for a printer that
// lays a long command out over several lines.
func Words(argv []string) ([]string, error) {
	return shell.Words(argv, func(i int) bool { return i > 0 && argv[i-1] == "--id" })
}

// Note is a comment with no command.
func Note(comment string) v1alpha1.Advice {
	return v1alpha1.Advice{Comment: comment}
}

// Finish ends a list of advice: when it holds a command and the run was
// given credential flags, which no printed command carries, a note says
// to add them.
func (b Builder) Finish(advice []v1alpha1.Advice) []v1alpha1.Advice {
	if len(b.Conn.Omitted) == 0 || !slices.ContainsFunc(advice, func(a v1alpha1.Advice) bool { return len(a.Argv) > 0 }) {
		return advice
	}
	return append(advice, Note("the commands above leave out "+strings.Join(b.Conn.Omitted, ", ")+": a credential is never printed, so give it yourself"))
}

// DescribeCluster is `clusterctl describe cluster <name> -n <namespace>
// --show-conditions all`, the look at a Cluster API Cluster an operator
// takes next, bound to this run's cluster: clusterctl takes the
// kubeconfig and its context as --kubeconfig and --kubeconfig-context,
// and no other connection flag (sigs.k8s.io/cluster-api
// cmd/clusterctl/cmd/describe_cluster.go at
// 0ca8d561e973418b5f228de1448be378c8d98954). cannot names the flags of
// this run it cannot carry; the command is nil then, for pasted without
// them it would read another cluster, or as another user.
func (b Builder) DescribeCluster(name, namespace string) (argv, cannot []string) {
	c := b.Conn
	for _, f := range []struct {
		flag string
		set  bool
	}{
		{"--cluster", c.Cluster != ""}, {"--user", c.User != ""}, {"--server", c.Server != "" && !c.ServerDerived},
		{"the API server's URL (this run's configuration came from a $KUBECONFIG list or from inside a pod, which no one --kubeconfig file holds)", c.ServerDerived},
		{"--tls-server-name", c.TLSServerName != ""}, {"--certificate-authority", c.CertificateAuthority != ""},
		{"--client-certificate", c.ClientCertificate != ""}, {"--client-key", c.ClientKey != ""},
		{"--insecure-skip-tls-verify", c.Insecure}, {"--as", c.As != ""}, {"--as-group", len(c.AsGroups) > 0}, {"--as-uid", c.AsUID != ""},
		{"--as-user-extra", len(c.AsUserExtra) > 0}, {"--proxy-url", c.ProxyURL != ""},
	} {
		if f.set {
			cannot = append(cannot, f.flag)
		}
	}
	if cannot = append(cannot, c.Omitted...); len(cannot) > 0 {
		return nil, cannot
	}
	argv = []string{"clusterctl", "describe", "cluster", name, "-n", namespace, "--show-conditions", "all"}
	if c.Kubeconfig != "" {
		argv = append(argv, "--kubeconfig", c.Kubeconfig)
	}
	if c.Context != "" {
		argv = append(argv, "--kubeconfig-context", c.Context)
	}
	return argv, nil
}
