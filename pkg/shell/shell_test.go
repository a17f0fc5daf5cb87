package shell

import (
	"slices"
	"testing"
)

func TestQuoteParsesBack(t *testing.T) {
	for _, argv := range []Command{
		{"kubectl", "captf", "unlock", "terraformcluster/demo", "-n", "infra", "--confirm"},
		{"--id", "$(touch${IFS}pwned)"},
		{"it's", `a"b`, "back\\slash", "", " ", "~root", "*", "a=b", "#x", "if", "{a,b}", "ünï"},
	} {
		line := argv.String()
		if line == "" {
			t.Fatalf("%q: not rendered", argv)
		}
		got, err := Parse(line)
		if err != nil || !slices.Equal(got, argv) {
			t.Errorf("%q rendered as %s parses back as %q (%v)", argv, line, got, err)
		}
	}
}

func TestUnsafeArgumentsAreNotRendered(t *testing.T) {
	for _, arg := range []string{"\x1b]0;x\x07", "a\nb", "bidi\u202e", "c1\u009b", "bad\xff", "nul\x00"} {
		if s := (Command{"kubectl", arg}).String(); s != "" {
			t.Errorf("%q rendered as %q", arg, s)
		}
		if _, err := (Command{arg}).Words(); err == nil {
			t.Errorf("%q: no error", arg)
		}
	}
}

func TestParseRefusesExpansion(t *testing.T) {
	for _, line := range []string{"echo $(id)", "echo `id`", "echo $HOME", "a; b", "a | b", "a > f", "X=1 a", `echo "$x"`} {
		if c, err := Parse(line); err == nil {
			t.Errorf("%q parsed as %q", line, c)
		}
	}
}

func TestQuotesWithBothKinds(t *testing.T) {
	for _, arg := range []string{`it's "x"`, "a'$b", "a'`b", `a'\b`, `'`, `"`} {
		c := Command{arg}
		got, err := Parse(c.String())
		if err != nil || !slices.Equal(got, c) {
			t.Errorf("%q rendered as %s parses back as %q (%v)", arg, c.String(), got, err)
		}
	}
}
