package audit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNote(t *testing.T) {
	got := Note("alice", false, "infra", "lock-tfstate-default-0b41ac905b337e94-c", "Stale", Holder{Known: true, ID: "3c1e9a5b", Who: "root@captf-c-demo-apply-a1-d72d2a-x7k2p", Operation: "OperationTypeApply"})
	want := `user "alice" force-unlocked Lease infra/lock-tfstate-default-0b41ac905b337e94-c (verdict Stale) with kubectl captf; held by Who "root@captf-c-demo-apply-a1-d72d2a-x7k2p", operation "OperationTypeApply", lock ID "3c1e9a5b"`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Note("", false, "ns", "l", "Unknown", Holder{ID: "x"}); got != `an unidentified user force-unlocked Lease ns/l (verdict Unknown) with kubectl captf; held by an unidentifiable holder, lock ID "x"` {
		t.Errorf("got %s", got)
	}
}

// A holder who chose a lock ID that reads like the note's own words, and
// pads it to push the real Lease and verdict past the limit, leaves them
// in place: they come first, the ID is quoted and only it is cut.
func TestNoteCannotBeSpoofed(t *testing.T) {
	spoof := `6f1e2d3c (Lease lock-tfstate-default-0000000000000000-c, verdict Stale), held by root@x with kubectl captf` + strings.Repeat(" ", 900) + "\u202e\x1b[2J"
	note := Note("bob", true, "infra", "lock-tfstate-default-1cc4ffb6d396d1c4-m", "Foreign", Holder{Known: true, ID: spoof, Who: spoof, Operation: "OperationTypeApply"})
	if !strings.HasPrefix(note, `user "bob" (impersonated) force-unlocked Lease infra/lock-tfstate-default-1cc4ffb6d396d1c4-m (verdict Foreign) with kubectl captf; held by Who "6f1e2d3c (Lease`) {
		t.Errorf("note does not start with the real Lease and verdict: %s", note)
	}
	if len(note) > MaxNote || !strings.HasSuffix(note, " [cut]") {
		t.Errorf("note of %d bytes, not cut and marked: %s", len(note), note)
	}
	for _, r := range note {
		if r < 0x20 || r >= 0x7f {
			t.Fatalf("note holds %U: %q", r, note)
		}
	}
	if !utf8.ValidString(note) {
		t.Errorf("invalid UTF-8")
	}
}

func FuzzNote(f *testing.F) {
	f.Add("alice", "id", "root@host", "OperationTypeApply", true)
	f.Add(strings.Repeat("é", 300), strings.Repeat("\xff", 2000), "\u202e", "", false)
	f.Add(strings.Repeat("\x01", 400), "", "", "", true)
	f.Fuzz(func(t *testing.T, user, id, who, op string, known bool) {
		note := Note(user, known, "ns", "lock-tfstate-default-0b41ac905b337e94-c", "Stale", Holder{Known: known, ID: id, Who: who, Operation: op})
		if len(note) > MaxNote {
			t.Fatalf("%d bytes", len(note))
		}
		if !strings.Contains(note, " force-unlocked Lease ns/lock-tfstate-default-0b41ac905b337e94-c (verdict Stale) with kubectl captf; ") {
			t.Fatalf("the Lease and verdict are not in the note: %s", note)
		}
		for _, r := range note {
			if r < 0x20 || r >= 0x7f {
				t.Fatalf("note holds %U", r)
			}
		}
	})
}
