package escape

import (
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"root@pod":              "root@pod",
		"a\x1b[31mred":          "a^[[31mred",
		"bell\x07":              "bell^G",
		"back\bspace\x7f":       "back^Hspace^?",
		"two\nlines\r\tx":       `two\nlines\r\tx`,
		"c1\u009b2J":            `c1\u009b2J`,
		"nel\u0085":             `nel\u0085`,
		"bidi\u202egnp.exe":     `bidi\u202egnp.exe`,
		"zero\u200bwidth":       `zero\u200bwidth`,
		"soft\u00adhyphen":      `soft\u00adhyphen`,
		"bom\ufeff":             `bom\ufeff`,
		"line\u2028para\u2029":  `line\u2028para\u2029`,
		"tag\U000e0041":         `tag\U000e0041`,
		"non\uffff\ufffe\ufdd0": `non\uffff\ufffe\ufdd0`,
		"plane\U0010ffff":       `plane\U0010ffff`,
		"cgj\u034f":             `cgj\u034f`,
		"filler\u3164\u115f":    `filler\u3164\u115f`,
		"vs\ufe0f":              `vs\ufe0f`,
		"braille\u2800":         `braille\u2800`,
		"nbsp\u00a0ideo\u3000":  `nbsp\u00a0ideo\u3000`,
		"pua\ue000":             `pua\ue000`,
		"unassigned\U000e0080":  `unassigned\U000e0080`,
		"unassigned\u0378":      `unassigned\u0378`,
		"accent é ü":            "accent é ü",
		"ünïcode@höst":          "ünïcode@höst",
		"emoji😀 and 中文":         "emoji😀 and 中文",
		"bad\xffutf8":           `bad\xffutf8`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if Safe(in) != (in == Text(in)) {
			t.Errorf("Safe(%q) = %v, but Text changes it to %q", in, Safe(in), Text(in))
		}
	}
}

// Every rune Text lets through is one Hidden refuses, and Text's output
// is always Safe.
func TestTextIsAlwaysSafe(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := "a" + string(r) + "b"
		if out := Text(s); !Safe(out) {
			t.Fatalf("Text(%q) = %q is not Safe", s, out)
		}
		if Safe(s) == Hidden(r) {
			t.Fatalf("%U: Safe %v, Hidden %v", r, Safe(s), Hidden(r))
		}
	}
}
