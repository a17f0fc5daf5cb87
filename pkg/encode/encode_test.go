package encode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// hostile are strings a lock holder may write.
var hostile = []string{
	"root@captf-c-demo-apply-a1-d72d2a-x7k2p", "", "plain", "true", "1", "1.5", "null", "~", "- a", "a: b", "#x", "'q'", `"dq"`,
	"c1\u009b2J", "nonchar\uffff", "nel\u0085x", "rlo\u202eexe", "zw\u200bx", "shy\u00ad", "bom\ufeff", "ls\u2028ps\u2029",
	"tag\U000e0041", "del\x7f", "esc\x1b[31m", "bel\x07", "nul\x00", "tab\tx", "multi\nline\n", "trailing \n", " lead",
	"emoji😀", "中文", "\u0085", "a\u202e\u009b\uffff\u0085\u200b\n",
}

type sample struct {
	Name   string            `json:"name" yaml:"name"`
	Labels map[string]string `json:"labels" yaml:"labels"`
	List   []string          `json:"list" yaml:"list"`
	N      int               `json:"n" yaml:"n"`
	F      float64           `json:"f" yaml:"f"`
	B      bool              `json:"b" yaml:"b"`
	P      *string           `json:"p" yaml:"p"`
}

func samples() []sample {
	var out []sample
	for _, s := range hostile {
		out = append(out, sample{Name: s, Labels: map[string]string{"k": s, s: "v"}, List: []string{s, s}, N: 3, F: 0.5, B: true})
	}
	return out
}

// assertClean fails on any Hidden character (C0 controls other than
// newline included) left raw in output.
func assertClean(t *testing.T, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("output is not UTF-8: %q", out)
	}
	for _, r := range string(out) {
		if r != '\n' && escape.Hidden(r) {
			t.Fatalf("%U left raw in:\n%s", r, out)
		}
	}
}

func TestJSONKeepsEveryStringAndHidesNothing(t *testing.T) {
	for _, s := range samples() {
		b, err := json.MarshalIndent(s, "", "    ")
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(b)
		assertClean(t, out)
		var back sample
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if back.Name != s.Name || back.Labels["k"] != s.Name || back.List[1] != s.Name || back.Labels[s.Name] != "v" {
			t.Errorf("%q came back as %q", s.Name, back.Name)
		}
	}
}

func TestYAMLKeepsEveryStringAndHidesNothing(t *testing.T) {
	for _, s := range samples() {
		out, err := YAML(s)
		if err != nil {
			t.Fatalf("%q: %v", s.Name, err)
		}
		assertClean(t, out)
		// Both YAML parsers Go programs use read it back.
		var v3 sample
		if err := yaml.Unmarshal(out, &v3); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		var sigs sample
		if err := sigsyaml.Unmarshal(out, &sigs); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		for _, back := range []sample{v3, sigs} {
			if back.Name != s.Name || back.Labels["k"] != s.Name || back.List[1] != s.Name || back.Labels[s.Name] != "v" || back.N != 3 || back.F != 0.5 || !back.B || back.P != nil {
				t.Errorf("%q came back as %+v from:\n%s", s.Name, back, out)
			}
		}
	}
}

// The layout is kubectl's: sorted keys, sequences at their key's
// indentation, quotes only where a plain scalar would read as another type.
func TestYAMLLayout(t *testing.T) {
	out, err := YAML(map[string]any{"kind": "Lock", "items": []any{map[string]any{"b": "1", "a": "2026-09-26T15:53:38Z"}}, "n": 2, "empty": map[string]any{}, "none": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `empty: {}
items:
- a: "2026-09-26T15:53:38Z"
  b: "1"
kind: Lock
"n": 2
none: []
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	ky, err := sigsyaml.Marshal(map[string]any{"kind": "Lock", "items": []any{map[string]any{"b": "1", "a": "2026-09-26T15:53:38Z"}}, "n": 2, "empty": map[string]any{}, "none": []any{}})
	if err != nil || !bytes.Equal(ky, out) {
		t.Errorf("got\n%s", out)
		t.Errorf("kubectl's YAML differs:\n%s", ky)
	}
}

// A holder's newline is never written raw: every string holding one is
// a double-quoted scalar, with \n, not a literal or folded block, and it
// parses back the same.
func TestYAMLQuotesNewlines(t *testing.T) {
	for _, s := range []string{"multi\nline\n", "trailing \n", "\n", "a\n\nb", "x\n- fake: item"} {
		out, err := YAML(map[string]any{"who": s, "list": []string{s}, s: "key"})
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		var walk func(n *yaml.Node)
		seen := 0
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "\n") {
				seen++
				if n.Style != yaml.DoubleQuotedStyle {
					t.Errorf("%q written in style %v:\n%s", n.Value, n.Style, out)
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&doc)
		var back map[string]any
		if err := yaml.Unmarshal(out, &back); err != nil || seen != 3 || back["who"] != s || back["list"].([]any)[0] != s || back[s] != "key" {
			t.Errorf("%q: %d scalars, came back as %#v (%v) from:\n%s", s, seen, back, err, out)
		}
		if lines := strings.Count(string(out), "\n"); lines != 4 {
			t.Errorf("%q: %d lines, want 4:\n%s", s, lines, out)
		}
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\ufffd") // encoding/json does the same
		}
		v := sample{Name: s, Labels: map[string]string{s: s}, List: []string{s}}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		j := JSON(b)
		assertClean(t, j)
		var back sample
		if err := json.Unmarshal(j, &back); err != nil || back.Name != s || back.Labels[s] != s {
			t.Fatalf("JSON %s: %q, %v", j, back.Name, err)
		}
		y, err := YAML(v)
		if err != nil {
			t.Fatalf("YAML of %q: %v", s, err)
		}
		assertClean(t, y)
		back = sample{}
		if err := yaml.Unmarshal(y, &back); err != nil || back.Name != s || back.Labels[s] != s || back.List[0] != s {
			t.Fatalf("YAML %s: %q, %v", y, back.Name, err)
		}
	})
}
