package advice

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// Every command carries the run's connection flags, right after the
// command's name, in kubectl's spelling; a credential never.
func TestCommandsCarryTheConnection(t *testing.T) {
	b := Builder{Conn: Conn{Kubeconfig: "/home/ops/.kube/prod config", Context: "prod", Server: "https://10.0.0.1:6443",
		Insecure: true, As: "alice", AsGroups: []string{"ops", "sre"}, Omitted: []string{"--token"}}}
	conn := []string{"--kubeconfig", "/home/ops/.kube/prod config", "--context", "prod", "--server", "https://10.0.0.1:6443",
		"--insecure-skip-tls-verify", "--as", "alice", "--as-group", "ops", "--as-group", "sre"}
	for _, c := range []struct {
		got, want []string
	}{
		{b.Unlock("terraformcluster/demo", "infra", Guard{Force: true, ID: "x", IDGiven: true}, true, true),
			append(append([]string{"kubectl", "captf"}, conn...), "unlock", "terraformcluster/demo", "-n", "infra", "--force", "--id", "x", "--reconcile", "--confirm")},
		{b.Unlock("lease/l", "infra", Guard{}, false, false), append(append([]string{"kubectl", "captf"}, conn...), "unlock", "lease/l", "-n", "infra")},
		{b.Explain("terraformmachine/web", "infra"), append(append([]string{"kubectl", "captf"}, conn...), "explain", "terraformmachine/web", "-n", "infra")},
		{b.Logs("infra", "p"), append(append([]string{"kubectl"}, conn...), "logs", "-n", "infra", "p")},
		{b.DescribePod("infra", "p"), append(append([]string{"kubectl"}, conn...), "describe", "pod", "-n", "infra", "p")},
		{b.Reconcile("terraformcluster/demo", "infra", time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))),
			append(append([]string{"kubectl"}, conn...), "annotate", "terraformcluster/demo", "-n", "infra", ReconcileAnnotation+"=2026-12-01T09:00:00Z", "--overwrite")},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("argv\n got %q\nwant %q", c.got, c.want)
		}
		if strings.Contains(strings.Join(c.got, " "), "token") {
			t.Errorf("a credential flag in %q", c.got)
		}
	}
	// The omitted credential is named once, after the commands.
	out := b.Finish([]v1alpha1.Advice{Run("", b.Explain("x/y", "n"))})
	if len(out) != 2 || out[1].Argv != nil || !strings.Contains(out[1].Comment, "--token") {
		t.Errorf("finish: %+v", out)
	}
	if out := b.Finish([]v1alpha1.Advice{Note("nothing to run")}); len(out) != 1 {
		t.Errorf("a note about credentials without any command: %+v", out)
	}
}

// Run quotes every word for an interactive bash or zsh, the lock ID after
// --id always; an argument that cannot be shown prints no command.
func TestRunQuotes(t *testing.T) {
	a := Run("when", []string{"kubectl", "captf", "unlock", "lease/l", "-n", "infra", "--id", "abc", "--confirm"})
	if a.Command != "kubectl captf unlock lease/l -n infra --id 'abc' --confirm" || a.Comment != "when" || a.Unprintable != "" {
		t.Errorf("%+v", a)
	}
	a = Run("", []string{"kubectl", "captf", "unlock", "lease/l", "-n", "it's !x", "--id", "a'b"})
	if a.Command != `kubectl captf unlock lease/l -n 'it'\''s !x' --id 'a'\''b'` {
		t.Errorf("%q", a.Command)
	}
	a = Run("", []string{"kubectl", "captf", "explain", "lease/l", "-n", "bad\x1b[2Jns"})
	if a.Command != "" || a.Unprintable == "" {
		t.Errorf("an unprintable argument printed: %+v", a)
	}
}

// clusterctl describe cluster carries the kubeconfig and its context in
// clusterctl's spelling; with a flag clusterctl has no equivalent of, no
// command is built, and the flags are named.
func TestDescribeCluster(t *testing.T) {
	b := Builder{Conn: Conn{Kubeconfig: "/home/ops/.kube/config", Context: "mgmt"}}
	argv, cannot := b.DescribeCluster("prod", "team-a")
	want := "clusterctl describe cluster prod -n team-a --show-conditions all --kubeconfig /home/ops/.kube/config --kubeconfig-context mgmt"
	if strings.Join(argv, " ") != want || cannot != nil {
		t.Errorf("got %q, %q; want %s", argv, cannot, want)
	}
	for _, c := range []struct {
		conn Conn
		want string
	}{
		{Conn{Context: "mgmt", As: "alice"}, "--as"},
		{Conn{Server: "https://127.0.0.1:6443"}, "--server"},
		{Conn{Server: "https://127.0.0.1:6443", ServerDerived: true}, "the API server's URL (this run's configuration came from a $KUBECONFIG list or from inside a pod, which no one --kubeconfig file holds)"},
		{Conn{Context: "mgmt", Omitted: []string{"--token"}}, "--token"},
		{Conn{Context: "mgmt", Cluster: "c", AsGroups: []string{"g"}, Insecure: true}, "--cluster,--insecure-skip-tls-verify,--as-group"},
	} {
		argv, cannot := Builder{Conn: c.conn}.DescribeCluster("prod", "team-a")
		if argv != nil || strings.Join(cannot, ",") != c.want {
			t.Errorf("%+v: got %q, cannot %q; want no command, cannot %s", c.conn, argv, cannot, c.want)
		}
	}
}

// Every connection flag of a run that clusterctl cannot take stops its
// command: a field of Conn added later and not handled fails here.
func TestDescribeClusterNamesEveryFlagItCannotCarry(t *testing.T) {
	typ := reflect.TypeOf(Conn{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Name == "Kubeconfig" || f.Name == "Context" {
			continue
		}
		var c Conn
		v := reflect.ValueOf(&c).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"x"}))
		default:
			t.Fatalf("Conn.%s is a %s", f.Name, v.Kind())
		}
		if argv, cannot := (Builder{Conn: c}).DescribeCluster("c", "ns"); argv != nil || len(cannot) == 0 {
			t.Errorf("Conn.%s set: clusterctl command %q, flags named %q", f.Name, argv, cannot)
		}
	}
}
