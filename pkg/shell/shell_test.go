package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// parse reads one word back as bash would, with no expansion allowed: a
// literal or single-quoted parts and backslash-escaped quotes.
func parse(t *testing.T, word string) string {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader("x "+word), "")
	if err != nil {
		t.Fatalf("%s does not parse: %v", word, err)
	}
	call := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if len(f.Stmts) != 1 || len(call.Args) != 2 {
		t.Fatalf("%s is not one word", word)
	}
	var b strings.Builder
	for _, part := range call.Args[1].Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				t.Fatalf("%s: $'...'", word)
			}
			b.WriteString(p.Value)
		default:
			t.Fatalf("%s: %T is not a literal", word, part)
		}
	}
	return b.String()
}

// historySafe is true when every character of word that bash or zsh
// would act on before parsing (history expansion: ! and ^; double quotes,
// which do not stop it) is inside single quotes.
func historySafe(word string) bool {
	quoted := false
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted && c == '\\':
			return false // fish reads it as an escape
		case quoted:
		case c == '\'':
			quoted = true
		case c == '\\' && i+1 < len(word) && (word[i+1] == '\'' || word[i+1] == '\\'):
			i++
		case strings.IndexByte("!^\"$`\\=~", c) >= 0:
			return false
		}
	}
	return !quoted
}

var hostile = []string{
	`\';touch pwned;#`, `a\b`, `\\`, `x==ls`, "NUL",
	"kubectl", "terraformcluster/demo", "-n", "--confirm", "a=b", "captf.io/unlocked-at=2026-12-01T00:00:00Z",
	"'!#';touch /tmp/x;#'", "abc!!def", "!!", "!#", "!$", "!-1", "^a^b", "a^b", "it's", `a"b`, `back\slash`,
	"", " ", "~root", "=ls", "*", "?", "[a]", "{a,b}", "#x", "x#", "$(touch${IFS}pwned)", "`id`", "$HOME",
	"a;b", "a|b", "a&b", "a>b", "<a", "(a)", "ünïcode", "'", "''", `'\''`, "%1", "a b\tc",
}

func TestQuoteParsesBackAndIsHistorySafe(t *testing.T) {
	for _, arg := range hostile {
		q := Quote(arg)
		if strings.Contains(q, `"`) && !strings.HasPrefix(q, "'") {
			t.Errorf("%q quoted as %s: double quotes", arg, q)
		}
		if !historySafe(q) {
			t.Errorf("%q quoted as %s: expands in an interactive shell", arg, q)
		}
		if got := parse(t, q); got != arg {
			t.Errorf("%q quoted as %s parses back as %q", arg, q, got)
		}
	}
}

func TestPlainWordsStayBare(t *testing.T) {
	for _, arg := range []string{"kubectl", "captf", "terraformcluster/demo", "-n", "--id", "3c1e9a5b-7d2f-0e4a-8b6c-1f2e3d4c5b6a", "root@host"} {
		if q := Quote(arg); q != arg {
			t.Errorf("%q quoted as %s", arg, q)
		}
	}
	for _, arg := range []string{"=ls", "a=b", "x==ls", "~", "a~b", "a!b", "a^b", "a\\b", "%1", "a,b", ""} {
		if q := Quote(arg); q == arg {
			t.Errorf("%q left bare", arg)
		}
	}
}

func TestUnsafeArgumentsAreRefused(t *testing.T) {
	for _, arg := range []string{"\x1b]0;x\x07", "a\nb", "a\rb", "bidi\u202e", "c1\u009b", "zw\u200b", "ls\u2028", "bom\ufeff", "bad\xff", "nul\x00", "tag\U000e0041"} {
		if _, err := Words([]string{"kubectl", arg}, nil); err == nil {
			t.Errorf("%q: no error", arg)
		}
		if _, err := Line([]string{arg}, nil); err == nil {
			t.Errorf("%q: Line renders it", arg)
		}
	}
}

// FuzzQuote: any argument that can be shown is quoted into one word that
// parses back to itself, with nothing an interactive shell expands left
// outside single quotes; any other is refused.
func FuzzQuote(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add("a\nb")
	f.Add("\u202e")
	f.Fuzz(func(t *testing.T, arg string) {
		words, err := Words([]string{arg}, nil)
		if err != nil {
			if escape.Safe(arg) {
				t.Fatalf("%q refused: %v", arg, err)
			}
			return // a character that cannot be shown: refused, as it must be
		}
		if !escape.Safe(arg) {
			t.Fatalf("%q holds a character that cannot be shown, quoted as %s", arg, words[0])
		}
		if !historySafe(words[0]) {
			t.Fatalf("%q quoted as %s expands", arg, words[0])
		}
		if got := parse(t, words[0]); got != arg {
			t.Fatalf("%q quoted as %s parses back as %q", arg, words[0], got)
		}
	})
}
