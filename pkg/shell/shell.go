// Package shell quotes the commands the plugin prints for a person to
// paste, for the shells people paste into: an interactive bash or zsh,
// with history expansion on. Text a lock holder wrote (a lock ID, a name)
// must never become shell syntax there: pasted, the command runs with
// exactly the argv it was built from.
//
// History expansion (!, and ^ at the start of a line) happens before the
// line is parsed, inside double quotes too; single quotes are the one
// quoting both shells leave alone. So every argument that is not made of
// plain characters is single-quoted, an embedded ' is written '\'' and
// double quotes are never used.
package shell

import (
	"fmt"
	"strings"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// Quote returns arg as one word for an interactive bash or zsh: as it is
// when every character is plain, else in single quotes. It does not check
// that arg can be shown; Words does.
func Quote(arg string) string {
	if plain(arg) {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

// plain is true for a non-empty word of letters, digits and the
// punctuation no shell treats specially anywhere in a word. '=' and '~'
// are plain only after the first character (zsh expands a leading '=' to
// a command's path, both shells a leading '~' to a home directory), and
// '~' after a ':' or '=' is a home directory to bash in an assignment-like
// word, so it is never plain.
func plain(arg string) bool {
	if arg == "" {
		return false
	}
	for i, c := range arg {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-_./,:@%+", c):
		case c == '=' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Words returns each argument quoted by Quote. It fails when an argument
// cannot be shown safely: a control character, a format character (a bidi
// control, a zero-width space), a line separator or a byte that is not
// UTF-8 has no quoting a terminal shows as it is, so such a command is
// never printed to be pasted.
func Words(argv []string) ([]string, error) {
	out := make([]string, len(argv))
	for i, arg := range argv {
		if !escape.Safe(arg) {
			return nil, fmt.Errorf("argument %s holds characters that cannot be pasted safely", escape.Text(fmt.Sprintf("%q", arg)))
		}
		out[i] = Quote(arg)
	}
	return out, nil
}

// Line is the command on one line, each argument quoted by Quote, or an
// error when Words fails.
func Line(argv []string) (string, error) {
	w, err := Words(argv)
	if err != nil {
		return "", err
	}
	return strings.Join(w, " "), nil
}
