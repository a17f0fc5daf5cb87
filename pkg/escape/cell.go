package escape

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// Cut marks a cell that Cell shortened: the text before it is the start
// of the value, and -o json or -o yaml has the whole of it.
const Cut = "…"

// Space is how Cell shows a space that could pass for the gap between
// two columns: one of a run of two or more, or one that starts or ends
// the cell (a table's columns are three spaces apart).
const Space = `\x20`

// Cell is s as one cell of a table: escaped as Text escapes it, with each
// Space-worthy space shown as Space, and at most width columns wide (as
// twwidth counts them, after escaping). A longer s is cut, the cut marked
// with Cut, so that what a cell costs follows width and not the length of
// s: s is read once, up to the cut, and only what is shown is copied.
// Each character counts at least one column towards width, so that a run
// of zero-width characters is bounded too. A width below 1 means no
// bound.
func Cell(s string, width int) string {
	if width < 1 {
		width = math.MaxInt
	}
	if len(s) <= width && plainCell(s) {
		return s
	}
	var b strings.Builder
	used, kept := 0, 0 // columns counted; bytes of b within width-1 columns
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		switch {
		case piece == " " && spaceShows(s, i):
			piece = Space
		case !Safe(piece):
			piece = Text(piece)
		}
		used += max(1, twwidth.Width(piece))
		if used > width {
			return b.String()[:kept] + Cut
		}
		b.WriteString(piece)
		if used <= width-1 {
			kept = b.Len()
		}
		i += size
	}
	return b.String()
}

// spaceShows is whether the space at s[i] is shown as Space: it starts or
// ends s, or a space is beside it.
func spaceShows(s string, i int) bool {
	return i == 0 || i == len(s)-1 || s[i-1] == ' ' || s[i+1] == ' '
}

// plainCell is whether s is printable ASCII with no space that shows: a
// cell of it is s itself, one column a byte.
func plainCell(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || (c == ' ' && spaceShows(s, i)) {
			return false
		}
	}
	return true
}
