// Package shell renders the commands the plugin prints for a person to
// paste. Each is built as an argv and quoted here, and only here, so that
// text a lock holder wrote (a lock ID, a name) can never become shell
// syntax: pasted, the command runs with exactly the argv it was built from.
package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// Command is an argv for a person to run.
type Command []string

// Words returns each argument quoted for a POSIX shell. It fails when an
// argument cannot be shown safely: a control character, a bidi control or
// a byte that is not UTF-8 has no POSIX quoting a terminal shows as it is,
// so such a command is never printed to be pasted.
func (c Command) Words() ([]string, error) {
	out := make([]string, len(c))
	for i, arg := range c {
		q, err := syntax.Quote(arg, syntax.LangPOSIX)
		if err != nil || !escape.Safe(arg) {
			return nil, fmt.Errorf("argument %s holds characters that cannot be pasted safely", escape.Text(fmt.Sprintf("%q", arg)))
		}
		out[i] = q
	}
	return out, nil
}

// String is the command on one line, quoted, or "" when Words fails.
func (c Command) String() string {
	w, err := c.Words()
	if err != nil {
		return ""
	}
	return strings.Join(w, " ")
}

// Parse splits a command line that String rendered back into its argv, as
// a POSIX shell would: no expansion is allowed, so text that would run or
// expand anything fails to parse.
func Parse(line string) (Command, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) != 1 {
		return nil, fmt.Errorf("%d commands, not one", len(f.Stmts))
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, fmt.Errorf("not a simple command")
	}
	var out Command
	for _, w := range call.Args {
		var b strings.Builder
		for _, part := range w.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				if strings.ContainsRune(p.Value, '\\') {
					return nil, fmt.Errorf("argument %d has a backslash outside quotes", len(out))
				}
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				if p.Dollar {
					return nil, fmt.Errorf("$'...' quoting is not POSIX")
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, in := range p.Parts {
					lit, ok := in.(*syntax.Lit)
					if !ok || p.Dollar {
						return nil, fmt.Errorf("argument %d expands (%T)", len(out), in)
					}
					b.WriteString(dquoteEscapes.Replace(lit.Value))
				}
			default:
				return nil, fmt.Errorf("argument %d expands (%T)", len(out), part)
			}
		}
		out = append(out, b.String())
	}
	return out, nil
}

// dquoteEscapes are the backslash escapes POSIX keeps inside double quotes.
var dquoteEscapes = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\$`, `$`, "\\`", "`")
