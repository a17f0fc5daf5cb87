// Package encode writes the plugin's output objects as JSON and YAML that
// a terminal shows as they are and that parse back to exactly the strings
// read from the cluster. Whoever writes a Lease or an Event chooses those
// strings: a C1 control, a bidi override or a zero-width space must reach
// a script intact and a reader visibly, so each Hidden character
// (package escape) is written as the format's own escape, never raw.
package encode

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/captf-io/kubectl-captf/pkg/escape"
)

// JSON rewrites JSON text so that no Hidden character is left raw: each
// becomes a \u escape (a surrogate pair beyond the Basic Multilingual
// Plane). encoding/json already escapes the C0 controls; outside strings
// valid JSON holds no character that is not ASCII, so only string content
// changes, and it decodes to the same string.
func JSON(b []byte) []byte {
	i := indexHidden(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i >= 0 {
		out = append(out, b[:i]...)
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x10000 {
			hi, lo := surrogates(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		b = b[i+size:]
		i = indexHidden(b)
	}
	return append(out, b...)
}

// indexHidden is the index of the first Hidden character of b that is not
// a C0 control (JSON and YAML encoders escape those), or -1.
func indexHidden(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError && escape.Hidden(r) {
			return i
		}
		i += size
	}
	return -1
}

// surrogates splits a rune beyond U+FFFF into UTF-16's surrogate pair.
func surrogates(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// hasHidden reports whether s holds a Hidden character (C0 controls
// included).
func hasHidden(s string) bool {
	return bytes.IndexFunc([]byte(s), escape.Hidden) >= 0
}
