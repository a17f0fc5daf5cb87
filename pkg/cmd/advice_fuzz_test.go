package cmd

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/advice"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/escape"
	"github.com/captf-io/kubectl-captf/pkg/explain"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/unlock"
)

// adviceWorld is one lock on a fake API server, read through the
// production clients (newClients): the object (so it is the owner
// whatever its name), its Lease held by holderID with Who, and, when
// live, the holder pod running.
func adviceWorld(t testing.TB, ns, name, holderID, who string, live bool) (*clients, object.Ref, string) {
	t.Helper()
	r := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: name}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: object.LockLeaseName("default", r.Suffix()), Namespace: ns}}
	b, _ := json.Marshal(map[string]any{"ID": holderID, "Operation": "OperationTypeApply", "Who": who, "Created": "2026-09-26T15:53:38Z"})
	lease.Annotations = map[string]string{inspect.AnnotationLock: string(b)}
	lease.Spec.HolderIdentity = &holderID
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": object.Group + "/" + object.Version, "kind": r.Kind.Name,
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-1"},
	}}
	objs := []runtime.Object{lease, obj}
	if host := who[strings.LastIndexByte(who, '@')+1:]; live {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: host, Namespace: ns}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	c, err := newClients(fakeapi.New(t, objs...).Config())
	if err != nil {
		t.Fatal(err)
	}
	return c, r, lease.Name
}

// printedCommands are the commands of human output, continuation lines
// joined, each read back into its argv as an interactive bash reads it.
func printedCommands(t *testing.T, out string) [][]string {
	t.Helper()
	var cmds [][]string
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
		cmds = append(cmds, pasted(t, l))
	}
	return cmds
}

// pasted reads a printed command line back into its argv. It allows only
// what package shell writes: bare words of plain characters, single-quoted
// text and \' or \\ between quotes, so that nothing in it expands, and no
// !, ^ or " outside single quotes, which an interactive shell's history
// expansion would act on before parsing the line.
func pasted(t *testing.T, line string) []string {
	t.Helper()
	quoted := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quoted:
			quoted = c != '\''
		case c == '\'':
			quoted = true
		case c == '\\' && i+1 < len(line) && (line[i+1] == '\'' || line[i+1] == '\\'):
			i++ // \' or \\: the character, escaped
		case strings.IndexByte("!^\"$`", c) >= 0:
			t.Fatalf("printed command %q has %q outside single quotes", line, c)
		}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		t.Fatalf("printed command %q does not parse as one command: %v", line, err)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		t.Fatalf("printed command %q is not a simple command", line)
	}
	var argv []string
	for _, w := range call.Args {
		var b strings.Builder
		for _, part := range w.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				if strings.ContainsRune(p.Value, '\\') && escapes.Replace(p.Value) != "" {
					t.Fatalf("printed command %q: backslash in %q", line, p.Value)
				}
				b.WriteString(unescape.Replace(p.Value))
			case *syntax.SglQuoted:
				if p.Dollar {
					t.Fatalf("printed command %q: $'...'", line)
				}
				b.WriteString(p.Value)
			default:
				t.Fatalf("printed command %q: %T expands", line, part)
			}
		}
		argv = append(argv, b.String())
	}
	return argv
}

// escapes are the escapes package shell writes between quotes; unescape
// reads them as a shell does.
var (
	escapes  = strings.NewReplacer(`\'`, "", `\\`, "")
	unescape = strings.NewReplacer(`\'`, `'`, `\\`, `\`)
)

// assertSafe fails on any character a terminal would act on or not show.
func assertSafe(t *testing.T, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && escape.Hidden(r) {
			t.Fatalf("%U reaches the output:\n%q", r, out)
		}
	}
}

// FuzzAdvice feeds arbitrary holder identities, Who, object names,
// namespaces and connection flags through every path that prints a
// command to paste: unlock's dry run and refusals (live, foreign, an --id
// that no longer matches) and explain's advice. Every printed command must
// read back, as an interactive bash or zsh with history expansion reads
// it, into exactly the argv it was built from, that argv must carry the
// connection flags right after the program, and no control or invisible
// character may reach the output.
func FuzzAdvice(f *testing.F) {
	f.Add("default", "demo", "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a", "root@captf-c-demo-apply-a1-d72d2a-x7k2p", true, "prod", "/tmp/prod.kubeconfig", "", "")
	f.Add("team-a", "web", "$(touch${IFS}pwned)", "alice@laptop", false, "", "", "system:admin", "ops")
	f.Add("ns", "x\x1b]0;x\x07$(id)", "it's \"x\"\n", "a@b\u202e", false, "ctx!!", "~/k", "", "")
	f.Add("n s", "`id`", "", "@", true, "", "", "", "")
	f.Add("rt", "db", "'!#';touch /tmp/x;#'", "root@vm", false, "c", "", "", "")
	f.Add("rt", "db", "abc!!def", "root@vm", false, "^a^b", "!#", "!!", "'")
	f.Add("rt", "db", "a\nb", "root@vm\u200b", false, "=ls", "a\nb", "\u2028", "^")
	// Backslashes, which package shell writes as \\ between quotes.
	f.Add("0", "0", "0", "@", true, "", `\`, "", "")
	f.Add("rt", `db\`, `a\'b\\`, `root@vm`, false, `c\!`, `C:\Users\me's\kube`, `\'`, `'\`)
	f.Fuzz(func(t *testing.T, ns, name, holderID, who string, live bool, context, kubeconfig, as, group string) {
		// A namespace or name the client refuses to put in a path ("/",
		// "%", "." or "..") is never one of an object a lock can have.
		if ns == "" || name == "" || !strings.Contains(who, "@") ||
			len(content.IsPathSegmentName(ns)) > 0 || len(content.IsPathSegmentName(name)) > 0 {
			return
		}
		conn := advice.Conn{Context: context, Kubeconfig: kubeconfig, As: as}
		if group != "" {
			conn.AsGroups = []string{group, group}
			conn.AsUserExtra = []string{"k=" + group}
			conn.ProxyURL = "http://" + group
		}
		b := advice.Builder{Conn: conn}
		c, r, lease := adviceWorld(t, ns, name, holderID, who, live)
		ctx := t.Context()
		arg := r.String()
		u := &unlock.Unlocker{Reader: c.reader, Client: c.kube, Dynamic: c.dynamic, Advice: b, Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }}
		for _, g := range []unlock.Guard{{}, {Force: true}, {ID: "not-" + holderID, IDGiven: true}, {Force: true, ID: holderID, IDGiven: true}} {
			out, err := u.Unlock(ctx, ns, lease, unlock.Options{Guard: g, Arg: arg})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			printHuman(&buf, out, time.Now())
			assertSafe(t, buf.String())
			checkCommands(t, buf.String(), out.Commands, conn)
		}
		snap, around, err := c.reader.ReadExplained(ctx, ns, lease, &r, nil)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := (&explain.Explainer{Advice: b}).Explain(explain.Target{Namespace: ns, Lease: lease, Object: &r, Arg: arg}, snap, around)
		var buf bytes.Buffer
		printExplanation(&buf, x, time.Now())
		assertSafe(t, buf.String())
		for _, a := range x.Advice {
			// Advice is pasted line by line (jq -r '.advice[].command'):
			// each command is one line that reads back as its argv.
			if a.Command != "" && !slices.Equal(pasted(t, a.Command), a.Argv) {
				t.Fatalf("advice %q does not read back as %q", a.Command, a.Argv)
			}
		}
		checkCommands(t, buf.String(), x.Advice, conn)
	})
}

// checkCommands requires the printed commands to be exactly the built
// ones that can be shown safely, in order, argument for argument, each
// with the connection flags after its program.
func checkCommands(t *testing.T, out string, built []v1alpha1.Advice, conn advice.Conn) {
	t.Helper()
	var printable [][]string
	for _, a := range built {
		if len(a.Argv) == 0 {
			continue
		}
		if (a.Command == "") != (a.Unprintable != "") {
			t.Fatalf("advice %+v: a command or the reason there is none", a)
		}
		prog := 1
		if a.Argv[1] == "captf" {
			prog = 2
		}
		if flags := conn.Flags(); !slices.Equal(a.Argv[prog:prog+len(flags)], flags) {
			t.Fatalf("%q does not carry the connection flags %q", a.Argv, flags)
		}
		if a.Command != "" {
			printable = append(printable, a.Argv)
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
		if !slices.Equal(got[i], printable[i]) {
			t.Fatalf("printed %q, built %q", got[i], printable[i])
		}
	}
}
