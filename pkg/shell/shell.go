// Package shell quotes the commands the plugin prints for a person to
// paste, for the shells people paste into: an interactive bash or zsh,
// with history expansion on (and fish). Text a lock holder wrote (a lock
// ID, a name) must never become shell syntax there: pasted, the command
// runs with exactly the argv it was built from.
//
// History expansion (!, and ^ at the start of a line) happens before the
// line is parsed, inside double quotes too; single quotes are the one
// quoting these shells leave alone, but fish reads \' and \\ inside them
// as escapes. So every argument that is not made of plain characters is
// single-quoted, with each ' and each \ written outside the quotes as \'
// and \\, and double quotes are never used.
package shell

import (
	"fmt"
	"strings"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// Quote returns arg as one word for an interactive bash, zsh or fish: as
// it is when every character is plain, else in single quotes. It does not
// check that arg can be shown; Words does.
func Quote(arg string) string {
	if plain(arg) {
		return arg
	}
	return Quoted(arg)
}

// Quoted returns arg in single quotes whatever it holds: for a word that
// must not be read as anything but text even when it is plain (a zsh
// global alias of that name would replace a bare word).
func Quoted(arg string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range arg {
		switch r {
		case '\'':
			b.WriteString(`'\''`)
		case '\\':
			b.WriteString(`'\\'`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// plain is true for a non-empty word of letters, digits and the
// punctuation no shell treats specially anywhere in a word: not '=' (zsh
// expands a leading one to a command's path, and with MAGIC_EQUAL_SUBST
// the text after any), not '~' (a home directory), not '%' (fish expands
// %self), not ','. docs/output.md lists the same set (a test compares).
func plain(arg string) bool {
	if arg == "" {
		return false
	}
	for _, c := range arg {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-_./:@+", c):
		default:
			return false
		}
	}
	return true
}

// Words returns each argument quoted by Quote, or by Quoted where always
// is true for its index. It fails when an argument cannot be shown
// safely: a control character, a format character (a bidi control, a
// zero-width space), a line separator or a byte that is not UTF-8 has no
// quoting a terminal shows as it is, so such a command is never printed
// to be pasted.
func Words(argv []string, always func(i int) bool) ([]string, error) {
	out := make([]string, len(argv))
	for i, arg := range argv {
		if len(arg)+1 > MaxArg {
			// No shell can pass it (review26i P4): a command that cannot
			// run is not printed.
			return nil, fmt.Errorf("argument %d is %d bytes long, and no process takes an argument of %d bytes or more with its terminating NUL (Linux's MAX_ARG_STRLEN)", i+1, len(arg), MaxArg)
		}
		if !escape.Safe(arg) {
			return nil, fmt.Errorf("argument %s holds characters that cannot be pasted safely", escape.Text(fmt.Sprintf("%.256q", arg)))
		}
		if always != nil && always(i) {
			out[i] = Quoted(arg)
		} else {
			out[i] = Quote(arg)
		}
	}
	return out, nil
}

// MaxArg is the most bytes one argument of a Linux process may take, its
// terminating NUL included (MAX_ARG_STRLEN, 32 pages of 4 KiB).
const MaxArg = 32 * 4096

// Line is the command on one line, quoted as Words quotes it, or an error
// when Words fails.
func Line(argv []string, always func(i int) bool) (string, error) {
	w, err := Words(argv, always)
	if err != nil {
		return "", err
	}
	return strings.Join(w, " "), nil
}
