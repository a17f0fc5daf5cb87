// Package escape makes text read from the cluster safe to print. Whoever
// can write a Lease, a pod or an Event chooses that text, so every output
// path of the plugin passes it through Text.
package escape

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"
)

// Text makes s safe for a terminal and for one line of a table or a
// sentence. cli-runtime's EscapeTerminal shows ESC as ^[ and CR as \r but
// lets the other control characters through (BEL, backspace, C1's CSI), so
// those are shown too: newline and tab as \n and \t, other C0 controls and
// DEL in caret notation, C1 controls and bidi controls (which reorder what
// the reader sees) as \u escapes, and bytes that are not UTF-8 as \x escapes.
func Text(s string) string {
	if Safe(s) {
		return s
	}
	var b strings.Builder
	for _, r := range printers.EscapeTerminal(valid(s)) {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte('^')
			b.WriteByte(byte(r) ^ 0x40)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Safe reports whether s prints as itself: valid UTF-8 with no control
// character and no bidi control. Text returns such a string unchanged.
func Safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			return false
		}
	}
	return true
}

func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}

// valid replaces each byte that is not UTF-8 with a visible \x escape, so
// that a terminal never receives a stray byte of a multi-byte sequence.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
