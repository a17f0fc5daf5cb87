package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/captf-io/kubectl-captf/pkg/explain"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/shell"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
)

// adviceWorld is one lock on fake clients: the object (listed, so it is
// the owner whatever its name), its Lease held by holderID with Who, and,
// when live, the holder pod running.
func adviceWorld(ns, name, holderID, who string, live bool) (*inspect.Inspector, object.Ref, string) {
	r := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: name}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: object.LockLeaseName("default", r.Suffix()), Namespace: ns}}
	b, _ := json.Marshal(map[string]any{"ID": holderID, "Operation": "OperationTypeApply", "Who": who, "Created": "2026-09-26T15:53:38Z"})
	lease.Annotations = map[string]string{inspect.AnnotationLock: string(b)}
	lease.Spec.HolderIdentity = &holderID
	objs := []runtime.Object{lease}
	if host := who[strings.LastIndexByte(who, '@')+1:]; live {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: host, Namespace: ns}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: object.Group + "/" + object.Version, Kind: r.Kind.Name}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	lists := map[schema.GroupVersionResource]string{{Version: "v1", Resource: "secrets"}: "SecretList"}
	for _, k := range object.Kinds {
		lists[k.GVR()] = k.Name + "List"
	}
	in := &inspect.Inspector{
		Client:   fake.NewClientset(objs...),
		Metadata: metadatafake.NewSimpleMetadataClient(scheme, meta),
		Dynamic:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists),
	}
	return in, r, lease.Name
}

// printedCommands are the commands of human output, continuation lines
// joined, each parsed back into its argv.
func printedCommands(t *testing.T, out string) []shell.Command {
	t.Helper()
	var cmds []shell.Command
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "kubectl ") {
			continue
		}
		for strings.HasSuffix(l, " \\") && i+1 < len(lines) {
			i++
			l += "\n" + lines[i]
		}
		c, err := shell.Parse(l)
		if err != nil {
			t.Fatalf("printed command %q does not parse: %v\n%s", l, err, out)
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// assertSafe fails on any byte a terminal would act on.
func assertSafe(t *testing.T, out string) {
	t.Helper()
	for _, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c {
			t.Fatalf("control character %U reaches the output:\n%q", r, out)
		}
	}
}

// FuzzAdvice feeds arbitrary holder identities, Who, object names and
// namespaces through every path that prints a command to paste: unlock's
// dry run and refusals (live, foreign, an --id that no longer matches) and
// explain's advice. Every printed command must parse back, with a POSIX
// shell's rules, into exactly the argv it was built from, and no control
// character may reach the output.
func FuzzAdvice(f *testing.F) {
	f.Add("default", "demo", "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", true)
	f.Add("team-a", "web", "$(touch${IFS}pwned)", "alice@laptop", false)
	f.Add("ns", "x\x1b]0;x\x07$(id)", "it's \"x\"\n", "a@b\u202e", false)
	f.Add("n s", "`id`", "", "@", true)
	f.Fuzz(func(t *testing.T, ns, name, holderID, who string, live bool) {
		if ns == "" || name == "" || !strings.Contains(who, "@") {
			return
		}
		in, r, lease := adviceWorld(ns, name, holderID, who, live)
		ctx := context.Background()
		arg := r.String()
		u := &unlock.Unlocker{Inspector: in, Client: in.Client, Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }}
		for _, g := range []unlock.Guard{{}, {Force: true}, {ID: "not-" + holderID, IDGiven: true}, {Force: true, ID: holderID, IDGiven: true}} {
			out, err := u.Unlock(ctx, ns, lease, unlock.Options{Guard: g, Arg: arg})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			printHuman(&b, out, time.Now())
			assertSafe(t, b.String())
			checkCommands(t, b.String(), out.Commands)
		}
		x, _, err := (&explain.Explainer{Inspector: in, Dynamic: in.Dynamic, Metadata: in.Metadata}).Explain(ctx, explain.Target{Namespace: ns, Lease: lease, Object: &r, Arg: arg})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		printExplanation(&b, x, time.Now())
		assertSafe(t, b.String())
		var want []shell.Command
		for _, a := range x.Advice {
			// Advice is pasted line by line (jq -r '.advice[]'): each item
			// is one line, a comment or a command that parses.
			if strings.ContainsAny(a, "\n\r") {
				t.Fatalf("advice item spans lines: %q", a)
			}
			if !strings.HasPrefix(a, "# ") {
				c, err := shell.Parse(a)
				if err != nil {
					t.Fatalf("advice %q does not parse: %v", a, err)
				}
				want = append(want, c)
			}
		}
		checkCommands(t, b.String(), want)
	})
}

// checkCommands requires the printed commands to be exactly the built
// ones that can be shown safely, in order, argument for argument.
func checkCommands(t *testing.T, out string, built []shell.Command) {
	t.Helper()
	var printable []shell.Command
	for _, c := range built {
		if _, err := c.Words(); err == nil {
			printable = append(printable, c)
		}
	}
	got := printedCommands(t, out)
	// Prose never offers a flag with a value to copy: that is the
	// commands' job.
	for _, l := range strings.Split(out, "\n") {
		if s := strings.TrimSpace(l); !strings.HasPrefix(s, "kubectl ") && !strings.HasPrefix(l, "      ") && strings.Contains(l, "--id ") && !strings.Contains(l, "--id with") {
			t.Fatalf("prose offers --id with a value outside a command: %q", l)
		}
	}
	if len(got) != len(printable) {
		t.Fatalf("%d commands printed, %d built:\n%s", len(got), len(printable), out)
	}
	for i := range got {
		if strings.Join(got[i], "\x00") != strings.Join(printable[i], "\x00") {
			t.Fatalf("printed %q, built %q", got[i], printable[i])
		}
	}
}
