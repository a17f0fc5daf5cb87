package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// hiddenWho is a Who with one character of each kind a terminal acts on
// or does not show, which the JSON and YAML outputs must carry escaped
// and parse back intact.
const hiddenWho = "root@\u009b\uffff\u0085\u202e\u200b"

// hiddenWorld has one Foreign lock held with hiddenWho, and one Stale
// lock whose lock info Version carries the same characters.
func hiddenWorld() *world {
	w := newWorld("infra")
	created := clock.Add(-time.Hour)
	w.lock(w.object(object.TerraformMachine, "db"), "11111111-2222-3333-4444-555555555555", hiddenWho, "", created)
	info := `{"ID":"33333333-4444-5555-6666-777777777777","Operation":"OperationTypeApply","Who":"root@captf-m-web-1-apply-a1-0a1b2c-q8w7e","Version":"1.11.4\u009b","Created":"` + created.Format(time.RFC3339) + `"}`
	w.lock(w.object(object.TerraformMachine, "web-1"), "33333333-4444-5555-6666-777777777777", "", info, created)
	return w
}

// rawHidden fails when a character of hiddenWho reaches the output raw.
func rawHidden(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range "\u009b\uffff\u0085\u202e\u200b" {
		if strings.ContainsRune(out, r) {
			t.Errorf("%s: %U raw in the output:\n%s", what, r, out)
		}
	}
}

func TestMachineFormatsCarryHiddenCharactersEscaped(t *testing.T) {
	f, _ := hiddenWorld().factory(t)
	for _, format := range []string{"json", "yaml"} {
		unmarshal := json.Unmarshal
		if format == "yaml" {
			unmarshal = func(b []byte, v any) error { return yaml.Unmarshal(b, v) }
		}
		res := captf(t, f, "locks", "-o", format)
		var list v1alpha1.LockList
		if err := unmarshal([]byte(res.out), &list); err != nil || res.code != 0 {
			t.Fatalf("locks -o %s: %v %+v", format, err, res)
		}
		rawHidden(t, "locks -o "+format, res.out)
		found := false
		for _, l := range list.Items {
			found = found || (l.Lock != nil && l.Lock.Who == hiddenWho)
		}
		if !found {
			t.Errorf("locks -o %s: Who %q does not come back:\n%s", format, hiddenWho, res.out)
		}
		res = captf(t, f, "explain", "terraformmachine/db", "-o", format)
		var x v1alpha1.Explanation
		if err := unmarshal([]byte(res.out), &x); err != nil || res.code != 0 || x.Lock == nil || x.Lock.Who != hiddenWho {
			t.Fatalf("explain -o %s: %v %+v", format, err, res)
		}
		rawHidden(t, "explain -o "+format, res.out)
		res = captf(t, f, "unlock", "terraformmachine/db", "-o", format)
		var u v1alpha1.UnlockResult
		if err := unmarshal([]byte(res.out), &u); err != nil || res.code != ExitRefused || u.Lock == nil || u.Lock.Who != hiddenWho {
			t.Fatalf("unlock -o %s: %v %+v", format, err, res)
		}
		rawHidden(t, "unlock -o "+format, res.out+res.err)
	}
}

// Every command printed for a person carries the connection flags given,
// and the context the run resolved when none was.
func TestAdviceCarriesTheConnectionFlags(t *testing.T) {
	f, _ := verdictsWorld().factory(t)
	res := captf(t, f, "--kubeconfig", "/tmp/prod.kubeconfig", "--context", "other", "--as", "bob", "--as-group", "ops", "--as-group", "dev",
		"--as-user-extra", "team=infra", "--as-user-extra", "team=sre", "--proxy-url", "http://127.0.0.1:3128", "--token", "s3cret", "unlock", "terraformmachine/db", "-o", "json")
	var u v1alpha1.UnlockResult
	want := "kubectl captf --kubeconfig /tmp/prod.kubeconfig --context other --as bob --as-group ops --as-group dev --as-user-extra 'team=infra' --as-user-extra 'team=sre' --proxy-url http://127.0.0.1:3128 unlock terraformmachine/db -n infra --id '11111111-2222-3333-4444-555555555555' --confirm"
	if err := json.Unmarshal([]byte(res.out), &u); err != nil || res.code != ExitRefused || len(u.Commands) == 0 || u.Commands[0].Command != want {
		t.Errorf("want %q in:\n%s", want, res.out)
	}
	if strings.Contains(res.out+res.err, "s3cret") {
		t.Errorf("the token is printed:\n%s", res.out)
	}
	if n := len(u.Commands); n < 2 || u.Commands[n-1].Comment != "the commands above leave out --token: a credential is never printed, so give it yourself" {
		t.Errorf("no note that the token was left out: %+v", u.Commands)
	}
	// A proxy's URL that holds a password is a credential: left out, and
	// named with the token.
	for _, proxy := range []string{"http://ops:pw@127.0.0.1:3128", "http:ops:pw@127.0.0.1:3128", "socks5://ops:pw@127.0.0.1:1080"} {
		res = captf(t, f, "--proxy-url", proxy, "--token", "s3cret", "unlock", "terraformmachine/db", "-o", "json")
		u = v1alpha1.UnlockResult{}
		if err := json.Unmarshal([]byte(res.out), &u); err != nil || len(u.Commands) < 2 || strings.Contains(res.out+res.err, "pw@") ||
			u.Commands[len(u.Commands)-1].Comment != "the commands above leave out --proxy-url, --token: a credential is never printed, so give it yourself" {
			t.Errorf("--proxy-url %s: printed, or not named as left out:\n%s", proxy, res.out)
		}
	}
	res = captf(t, f, "explain", "terraformcluster/demo", "-o", "json")
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(res.out), &x); err != nil || len(x.Advice) == 0 {
		t.Fatalf("%v %+v", err, res)
	}
	for _, a := range x.Advice {
		context := " --context test "
		if len(a.Argv) > 0 && a.Argv[0] == "clusterctl" {
			// clusterctl's flag for it (advice.DescribeCluster).
			context = " --kubeconfig-context test"
		}
		if len(a.Argv) > 0 && !strings.Contains(strings.Join(a.Argv, " ")+" ", context) {
			t.Errorf("%q does not name the context the run resolved", a.Argv)
		}
	}
}

// A write is reported on stderr as it happens when stdout gets one
// document at the end, and when that document cannot be written every
// outcome is on stderr and the exit code says so.
func TestUnlockReportsEveryWrite(t *testing.T) {
	f, _ := verdictsWorld().factory(t)
	s, _, out, errOut := genericiooptions.NewTestIOStreams()
	s.Out = &failingWriter{n: 10}
	code := execute(context.Background(), s, []string{"unlock", "--all-stale", "--confirm", "-o", "yaml"}, f)
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	_ = out
	e := errOut.String()
	for _, w := range []string{
		"Unlocked lease/lock-tfstate-default-2f32fa8c86da1c86-m in namespace infra at resourceVersion 42 (verdict Stale",
		"Unlocked: update Lease infra/lock-tfstate-default-2f32fa8c86da1c86-m",
		"Recorded Event ",
		"error: printing the outcome as yaml: broken pipe (the outcome of every lock is above, on stderr)",
	} {
		if !strings.Contains(e, w) {
			t.Errorf("stderr lacks %q:\n%s", w, e)
		}
	}
}

// The human output reports the Lease write before the Event is written.
func TestUnlockPrintsTheWriteBeforeTheEvent(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	// The server checks the output as the Event reaches it.
	var printedBeforeEvent atomic.Bool
	var b syncBuffer
	srv.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if req := fakeapi.RequestInfo(r); req.Verb == "create" && req.Resource == "events" {
			printedBeforeEvent.Store(strings.Contains(b.String(), "Unlocked: update Lease"))
		}
		return false
	})
	s, _, _, _ := genericiooptions.NewTestIOStreams()
	s.Out = &b
	if code := execute(context.Background(), s, []string{"unlock", "terraformmachine/web-1", "--confirm"}, f); code != 0 {
		t.Fatalf("exit %d:\n%s", code, b.String())
	}
	if !printedBeforeEvent.Load() || !strings.Contains(b.String(), "Recorded Event ") {
		t.Errorf("the write was not printed before the Event was written:\n%s", b.String())
	}
	if w := writes(srv); len(w) != 2 || !strings.HasPrefix(w[0], "update leases ") || !strings.HasPrefix(w[1], "create events ") {
		t.Errorf("writes %q, want the Lease's update, then its Event", w)
	}
}

// A namespace with control characters, from -n or from the kubeconfig,
// never reaches stderr raw.
func TestNamespaceIsEscapedOnStderr(t *testing.T) {
	w := newWorld("a\x1b]0;x\x07")
	w.pod("p", corev1.PodRunning)
	f, _ := w.factory(t)
	for _, args := range [][]string{{"locks"}, {"unlock", "--all-stale"}, {"locks", "-n", "b\x1b[2J"}, {"unlock", "--all-stale", "-n", "b\x1b[2J"}} {
		res := captf(t, f, args...)
		if strings.ContainsAny(res.out+res.err, "\x1b\x07") || !strings.Contains(res.err, "^[") {
			t.Errorf("%q: %+v", args, res)
		}
	}
}

// A stdout that fails (a full disk, a reader gone) after a write leaves
// the write on stderr, the Event recorded and the exit code 1; so does
// Ctrl-C right after the write, which does not stop the Event.
func TestUnlockWriteIsRecordedWhateverFailsAfter(t *testing.T) {
	f, srv := verdictsWorld().factory(t)
	s, _, _, errOut := genericiooptions.NewTestIOStreams()
	s.Out = &failingWriter{n: 10}
	if code := execute(context.Background(), s, []string{"unlock", "terraformmachine/web-1", "--confirm"}, f); code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	if e := errOut.String(); !strings.Contains(e, "Unlocked lease/lock-tfstate-default-2f32fa8c86da1c86-m in namespace infra") || !strings.Contains(e, "error: writing the output: broken pipe") {
		t.Errorf("stderr:\n%s", e)
	}
	if n := len(events(t, srv, "infra")); n != 1 {
		t.Errorf("%d Events, want 1", n)
	}

	f, srv = verdictsWorld().factory(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C as the write's answer arrives: the clients' transport takes
	// the whole answer, then cancels.
	cfg := srv.Config()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil || r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/leases/") {
				return resp, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			cancel()
			return resp, err
		})
	})
	c, err := newClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.clients = c
	s, _, out, _ := genericiooptions.NewTestIOStreams()
	if code := execute(ctx, s, []string{"unlock", "terraformmachine/web-1", "--confirm"}, f); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if evs := events(t, srv, "infra"); len(evs) != 1 || !strings.Contains(out.String(), "Recorded Event ") {
		t.Errorf("%d Events after Ctrl-C, want 1; output:\n%s", len(evs), out.String())
	}
}

// The kubeconfig a printed command names is the file the run loaded, as
// an absolute path; with no one file (a $KUBECONFIG list), the API
// server's URL binds it instead.
func TestAdviceNamesTheLoadedKubeconfig(t *testing.T) {
	for _, c := range []struct {
		name, env string
		args      []string
		want      []string
	}{
		{"relative --kubeconfig", "", []string{"--kubeconfig", "kc"}, []string{"--kubeconfig", absolute("kc"), "--context", "test"}},
		{"one file in $KUBECONFIG", "rel/kc", nil, []string{"--kubeconfig", absolute("rel/kc"), "--context", "test"}},
		{"a $KUBECONFIG list", "a:b", nil, []string{"--context", "test", "--server", "https://127.0.0.1:1"}},
	} {
		f, _ := verdictsWorld().factory(t)
		f.getenv = func(k string) string {
			if k == "KUBECONFIG" {
				return c.env
			}
			return ""
		}
		res := captf(t, f, append(c.args, "unlock", "terraformcluster/demo", "-o", "json")...)
		var u v1alpha1.UnlockResult
		if err := json.Unmarshal([]byte(res.out), &u); err != nil || len(u.Commands) == 0 {
			t.Fatalf("%s: %v %+v", c.name, err, res)
		}
		if got := u.Commands[len(u.Commands)-1].Argv[2 : 2+len(c.want)]; strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: connection flags %q, want %q", c.name, got, c.want)
		}
	}
}
