package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// The lock info terraform v1.11.4 printed after "does not match existing
// lock" on the test-bed, for a small info: Printed counts it byte for byte.
func TestPrintedCountsTheRuntimesLockInfo(t *testing.T) {
	created := time.Date(2026, 9, 26, 15, 53, 38, 315668626, time.UTC)
	l := LockInfo{ID: "9f1c0c5e", Operation: "OperationTypeApply", Info: "x", Who: "root@pod", Version: "1.11.4", Created: created, Path: "p"}
	printed := "Lock Info:\n" +
		"  ID:        9f1c0c5e\n" +
		"  Path:      p\n" +
		"  Operation: OperationTypeApply\n" +
		"  Who:       root@pod\n" +
		"  Version:   1.11.4\n" +
		"  Created:   2026-09-26 15:53:38.315668626 +0000 UTC\n" +
		"  Info:      x\n"
	if got := l.Printed(); got != len(printed) {
		t.Errorf("Printed %d, want %d", got, len(printed))
	}
}

// Review26g F5: the runner searches the last 64 KiB of the step's
// stderr; a lock info or an ID long enough to hide the answer from it is
// said, and a short one is not.
func TestMismatchHidden(t *testing.T) {
	for _, c := range []struct {
		name    string
		id      string
		printed int
		hidden  bool
	}{
		{"short", "9f1c0c5e", 300, false},
		{"60 KiB of lock info", "9f1c0c5e", 60 << 10, false},
		{"70,000 bytes of Info", "9f1c0c5e", 70000, true},
		{"a 70,000-byte ID, which OpenTofu's line drops", strings.Repeat("9", 70000), 300, true},
	} {
		l := Lease{Info: &Info{ID: c.id}, ID: "other", Printed: c.printed}
		if got := MismatchHidden(l); got != c.hidden {
			t.Errorf("%s: hidden %v, want %v", c.name, got, c.hidden)
		}
		text := MismatchText(l)
		if strings.Contains(text, "counts that as success") == c.hidden || strings.Contains(text, "last 64 KiB") != c.hidden {
			t.Errorf("%s: %q", c.name, text)
		}
	}
}

// Review26g F5, review26h m3: an ID that begins with "-" fails
// force-unlock's flag parsing, and the error may quote it (the flag's
// name, or a bad value for -force); where the ID holds an answer the
// runner accepts, the text says the runner may take the failed step for
// a success, and otherwise that it does not accept it.
func TestFlagIDQuotingAnAcceptedAnswer(t *testing.T) {
	for _, c := range []struct {
		id  string
		may bool
	}{
		{"-x-9f1c0c5e", false},
		{"-x does not match existing lock", true},
		{"-state is already unlocked", true},
		{"-force=does not match existing lock", true},
	} {
		text := FlagID(c.id)
		if got := strings.Contains(text, "the runner takes the failed step for a success"); got != c.may {
			t.Errorf("FlagID(%q): may accept %v, want %v: %s", c.id, got, c.may, text)
		}
		if strings.Contains(text, "does not accept") == c.may {
			t.Errorf("FlagID(%q): %s", c.id, text)
		}
	}
}

// Review26h m2, review26i F1: OpenTofu prefixes every line it prints
// and shows each other control character as a three-byte picture, so a
// lock info of a few thousand short lines, or of 22,000 control bytes,
// hides the answer too.
func TestMismatchHiddenCountsWhatOpenTofuAdds(t *testing.T) {
	for _, c := range []struct {
		name   string
		info   string
		hidden bool
	}{
		{"4,000 newlines", strings.Repeat("\n", 4000), true},
		{"100 newlines", strings.Repeat("\n", 100), false},
		{"22 lines of 1,000 control bytes", strings.Repeat(strings.Repeat("\x01", 1000)+"\n", 22), true},
		{"10,000 control bytes", strings.Repeat("\x01", 10000), false},
	} {
		info := LockInfo{ID: "9f1c0c5e", Info: c.info}
		l := Lease{Info: &Info{ID: info.ID}, ID: "other", Printed: info.Printed(), TofuPrinted: info.TofuPrinted()}
		if got := MismatchHidden(l); got != c.hidden {
			t.Errorf("%s: hidden %v (terraform %d bytes, OpenTofu %d), want %v", c.name, got, l.Printed, l.TofuPrinted, c.hidden)
		}
	}
}

// Review26g F6: a state CAPTF could not read, corrupt or encrypted, is
// read first by the restore's init too; other reasons and other Jobs are
// not this case.
func TestUnreadableState(t *testing.T) {
	for _, c := range []struct {
		status, reason string
		next           jobgate.Op
		want           string
	}{
		{"False", "StateCorrupt", jobgate.OpRestore, "StateReadable False/StateCorrupt"},
		{"False", "StateEncrypted", jobgate.OpRestore, "StateReadable False/StateEncrypted"},
		{"False", "StateCorrupt", jobgate.OpDestroy, ""},
		{"False", "StateInconsistent", jobgate.OpRestore, ""},
		{"True", "StateRead", jobgate.OpRestore, ""},
	} {
		rt := Runtime{StateStatus: c.status, StateReason: c.reason}
		if got := rt.UnreadableState(c.next); got != c.want {
			t.Errorf("%s/%s, next %q: %q, want %q", c.status, c.reason, c.next, got, c.want)
		}
	}
	cond := "StateReadable False/StateCorrupt"
	if text := UnreadableStateText(cond, Runtime{}); !strings.Contains(text, "its force-unlock step never runs") || strings.Contains(text, RestoreRetry) {
		t.Errorf("before the restore failed: %q", text)
	}
	if text := UnreadableStateText(cond, Runtime{RestoreFailed: true}); !strings.Contains(text, RestoreRetry) {
		t.Errorf("after: %q", text)
	}
	// Review26h m1: what only CAPTF's reader refuses is no such case.
	for _, c := range []struct {
		message string
		limit   bool
	}{
		{"state: unsupported state file version: 3", true},
		{"state: unsupported state file version: 1", true},
		{"state: unsupported state file version: 5", false},
		{"state: unsupported state file version: 12", false},
		{"state: corrupt: 40 state Secrets, more than 32", true},
		{"state: corrupt: decompressed state exceeds 67108864 bytes", true},
		{"state: corrupt: gunzip: gzip: invalid checksum", true},
		{"state: corrupt: gunzip: gzip: invalid header", false},
		{"state: corrupt: gunzip: unexpected EOF", true},
		{"state: corrupt: JSON: json: cannot unmarshal number into Go struct field stateFile.encryption_version of type string", true},
		{"state: corrupt: JSON: unexpected end of JSON input", false},
	} {
		rt := Runtime{StateStatus: "False", StateReason: "StateCorrupt", StateMessage: c.message}
		if got := rt.UnreadableState(jobgate.OpRestore) == ""; got != c.limit {
			t.Errorf("%q: a limit only CAPTF's reader has: %v, want %v", c.message, got, c.limit)
		}
		if got := rt.StateLimitText(jobgate.OpRestore) != ""; got != c.limit {
			t.Errorf("%q: StateLimitText %v", c.message, got)
		}
	}
}

// Review26g F11: ApplyJobSucceeded's message names the Job whose image
// failed; an apply's or plan's does not stop a destroy or a restore,
// which run the image CAPTF pinned first, and says what is left open;
// a destroy's stops the next destroy.
func TestAnApplysImageDoesNotBlockTheDestroy(t *testing.T) {
	for _, c := range []struct{ message, op string }{
		{"Job captf-c-web-apply-a2-abcdef: the runner image could not be pulled", "apply"},
		{"Job captf-c-web-plan-a1-abcdef failed", "plan"},
		{"Job captf-c-web-destroy-a1-abcdef.", "destroy"},
		{"the runner image could not be pulled", ""},
		{"Job not-a-runner-job failed", ""},
	} {
		if got := jobOpOf(c.message); got != c.op {
			t.Errorf("jobOpOf(%q) = %q, want %q", c.message, got, c.op)
		}
	}
	apply := Runtime{NoSteps: "False/ImagePullFailed", NoStepsOp: "apply"}
	for _, next := range []jobgate.Op{jobgate.OpDestroy, jobgate.OpRestore} {
		if b := apply.Blocked(next); b != "" {
			t.Errorf("an apply's image blocks the %s: %q", next, b)
		}
		if p := apply.PinnedText(next); !strings.Contains(p, "the "+string(next)+" Job runs the image CAPTF pinned for the object first") {
			t.Errorf("%s: %q", next, p)
		}
	}
	for _, next := range []jobgate.Op{jobgate.OpRefresh, ""} {
		if apply.Blocked(next) == "" || apply.PinnedText(next) != "" {
			t.Errorf("an apply's image does not block the next Job %q of a live object", next)
		}
	}
	destroy := Runtime{NoSteps: "False/ImagePullFailed", NoStepsOp: "destroy"}
	if destroy.Blocked(jobgate.OpDestroy) == "" || destroy.PinnedText(jobgate.OpDestroy) != "" {
		t.Error("a destroy's image does not block the next destroy")
	}
	if destroy.Blocked(jobgate.OpRestore) != "" || !strings.Contains(destroy.PinnedText(jobgate.OpRestore), "the restore Job tries spec.source.image too") {
		t.Error("a destroy's image blocks the restore, which tries spec.source.image too (review26h n1)")
	}
	unknown := Runtime{NoSteps: "False/ImageInvalid"}
	if unknown.Blocked(jobgate.OpDestroy) == "" {
		t.Error("a condition naming no Job does not block")
	}
}
