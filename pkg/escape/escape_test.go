package escape

import "testing"

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"root@pod":          "root@pod",
		"a\x1b[31mred":      "a^[[31mred",
		"bell\x07":          "bell^G",
		"back\bspace\x7f":   "back^Hspace^?",
		"two\nlines\r\tx":   `two\nlines\r\tx`,
		"c1\u009b2J":        `c1\u009b2J`,
		"bidi\u202egnp.exe": `bidi\u202egnp.exe`,
		"ünïcode@höst":      "ünïcode@höst",
		"bad\xffutf8":       `bad\xffutf8`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
