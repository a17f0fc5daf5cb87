package escape

import (
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

func TestCell(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"root@pod", 10, "root@pod"},
		{"exactly-10", 10, "exactly-10"},
		{"eleven-char", 10, "eleven-ch…"},
		{"a\x1b[31m", 10, "a^[[31m"},
		{"a\x1b[31mred", 5, "a^[[…"},
		{"\u202eabc", 9, `\u202eabc`},
		{"\u202eabc", 8, `\u202ea…`},
		{"\u202eabc", 6, `…`}, // an escape is cut whole, never half shown
		{"ops@laptop   apply   2m", 0, `ops@laptop\x20\x20\x20apply\x20\x20\x202m`},
		{"one space", 0, "one space"},
		{" lead", 0, `\x20lead`},
		{"trail ", 0, `trail\x20`},
		{" ", 0, `\x20`},
		{"中文字", 5, "中文…"},
		{"中文", 4, "中文"},
		{"", 3, ""},
		{"bad\xffbyte", 0, `bad\xffbyte`},
	} {
		if got := Cell(c.in, c.width); got != c.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// Whatever the holder wrote, a cell holds at most width columns, no raw
// Hidden character and no two spaces in a row, and its bytes follow
// width: combining marks, which take no column, count as one.
func TestCellIsBounded(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("x", 250000),
		strings.Repeat("\u0301", 250000),
		strings.Repeat("\x1b", 250000),
		strings.Repeat("\U000e0041", 250000),
		strings.Repeat(" ", 250000),
		strings.Repeat("中", 250000),
		strings.Repeat("\xff", 250000),
	} {
		got := Cell(in, 100)
		if w := twwidth.Width(got); w > 100 || len(got) > 100*len(`\U000e0041`) || !strings.HasSuffix(got, Cut) {
			t.Errorf("%q…: %d columns, %d bytes: %q", in[:4], w, len(got), got)
		}
		if strings.Contains(got, "  ") || !Safe(got) {
			t.Errorf("%q…: %q", in[:4], got)
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	for _, p := range []string{"a\x1b", "]0;x\x07\tb\n", "\xe2\x80", "\xae end\r\n", "no end\u009b"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "a^[]0;x^G\tb\n" + `\u202e end\r` + "\n" + `no end\u009b`
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func BenchmarkCell(b *testing.B) {
	for _, s := range []string{"root@captf-c-demo-apply-a1-d72d2a-x7k2p", "évil\x1b]0;x\x07 user@laptop", strings.Repeat("x", 250000)} {
		b.Run(s[:4], func(b *testing.B) {
			for b.Loop() {
				Cell(s, 100)
			}
		})
	}
}
