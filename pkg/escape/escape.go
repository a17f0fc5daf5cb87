// Package escape makes text read from the cluster safe to print. Whoever
// can write a Lease, a pod or an Event chooses that text, so every output
// path of the plugin passes it through Text (for a reader) or through
// JSON and YAML's own escapes (package encode), which Hidden decides.
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
// DEL in caret notation, every other Hidden character as a \u or \U
// escape, and bytes that are not UTF-8 as \x escapes.
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
		case Hidden(r):
			b.WriteString(Code(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Safe reports whether s prints as itself: valid UTF-8 with no Hidden
// character. Text returns such a string unchanged.
func Safe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		} else if c < utf8.RuneSelf {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Hidden(r) {
			return false
		}
		i += size - 1
	}
	return true
}

// Hidden reports whether r must never reach output as itself, because a
// terminal acts on it or a reader cannot see it for what it is: C0 and C1
// controls and DEL; the Unicode format characters (Cf: bidi controls,
// which reorder what the reader sees, zero-width characters, the soft
// hyphen, the byte order mark, tag characters) and every other default
// ignorable code point (variation selectors, the combining grapheme
// joiner, the Hangul fillers); line and paragraph separators (Zl, Zp);
// spaces other than U+0020 (Zs), which look like it; the braille blank;
// private-use and unassigned code points, which no font is bound to show;
// and the noncharacters (U+FFFE, U+FFFF, U+FDD0-U+FDEF and the last two of
// every plane). With any of them, two different lock IDs could look the
// same.
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case r < 0xa0:
		return false
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe, r == 0x2800:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) || !assigned(r)
}

// assigned is whether r has a general category: unassigned code points
// have none.
func assigned(r rune) bool {
	// unicode.C holds the unassigned code points (Cn) too (review-prose
	// m5: U+0378 passed as assigned).
	return !unicode.Is(unicode.Cn, r)
}

// Code is r as a \u escape (four hex digits), or \U (eight) beyond the
// Basic Multilingual Plane: the form Text shows a Hidden character in.
func Code(r rune) string {
	if r > 0xffff {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
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
