package inspect

import (
	"strconv"
	"strings"
)

// maxQuoted is how many characters of a value a holder wrote (a lock ID,
// Who, a host) prose quotes: a reason, a step, what CAPTF does next. The
// value is whole in -o json and -o yaml, and once in the command that
// needs it; prose that repeats it stays bounded whatever the Lease holds
// (review26i P1).
const maxQuoted = 256

// Quoted is s as prose quotes a value a holder wrote: Go-quoted in ASCII,
// so that no text of the holder's can pass for the plugin's own words
// (review26i P2) and no look-alike letter for another (review-prose n3),
// cut to maxQuoted characters (an "…" after the closing quote marks the
// cut: inside, any "…" is the holder's, written \u2026), with each space
// of a run of two or more written \x20, so that a printer that wraps
// prose at spaces keeps them exact (review26i P3).
func Quoted(s string) string {
	kept := cut(s, maxQuoted)
	mark := ""
	if kept != s {
		kept, mark = strings.TrimSuffix(kept, "…"), "…"
	}
	q := strconv.QuoteToASCII(kept) + mark
	if !strings.Contains(q, "  ") {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == ' ' && ((i > 0 && q[i-1] == ' ') || (i+1 < len(q) && q[i+1] == ' ')) {
			b.WriteString(`\x20`)
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// Named is s as prose names a value a holder wrote: as it is where it is
// a plain name (what lock IDs and pod names are: letters, digits and
// ".-_:@/", maxQuoted bytes at most), else Quoted.
func Named(s string) string {
	if s == "" || len(s) > maxQuoted {
		return Quoted(s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_:@/", c) >= 0) {
			return Quoted(s)
		}
	}
	return s
}
