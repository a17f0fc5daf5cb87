package inspect

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Review26i P1-P3: a value a holder wrote is named as it is when it is a
// plain name, and otherwise quoted, cut and with its runs of spaces kept.
func TestNamedAndQuoted(t *testing.T) {
	for _, c := range []struct{ in, named string }{
		{"9f1c0c5e-0000-4000-8000-00000000beef", "9f1c0c5e-0000-4000-8000-00000000beef"},
		{"captf-c-demo-apply-a1-d72d2a-x7k2p", "captf-c-demo-apply-a1-d72d2a-x7k2p"},
		{"root@laptop", "root@laptop"},
		{"9f1c0c5e, the backend finds it and the lock is cleared", `"9f1c0c5e, the backend finds it and the lock is cleared"`},
		{"ab   cd  ", `"ab\x20\x20\x20cd\x20\x20"`},
		{"", `""`},
		{"a\nb", `"a\nb"`},
	} {
		if got := Named(c.in); got != c.named {
			t.Errorf("Named(%q) = %s, want %s", c.in, got, c.named)
		}
	}
	long := strings.Repeat("9", 1<<20)
	if got := Named(long); len(got) != maxQuoted+len(`""`)+len("…") || !strings.HasSuffix(got, `"…`) {
		t.Errorf("Named of 1 MiB is %d bytes: %.40s…", len(got), got)
	}
	if got := Quoted(strings.Repeat("é", 1000)); strings.Count(got, `\u00e9`) != maxQuoted {
		t.Errorf("Quoted cuts at %d characters: %.60s", strings.Count(got, `\u00e9`), got)
	}
	// A holder's own "…" is no cut, and a Cyrillic е is no Latin e.
	if got := Quoted("abc…"); got != `"abc\u2026"` {
		t.Errorf("Quoted(abc…) = %s", got)
	}
	if got := Named("9f1c0c5е"); got != `"9f1c0c5\u0435"` {
		t.Errorf("Named of a look-alike = %s", got)
	}
}

// Review-prose m3: the API takes any pod phase; the plugin's sentences
// say the five it knows as words and quote any other.
func TestPodStateQuotesAPhaseItDoesNotKnow(t *testing.T) {
	for phase, want := range map[string]string{
		"Running": "Running",
		"":        "in no phase yet",
		"gone (its node was deleted 3h ago), so the lock is stale": `in phase "gone (its node was deleted 3h ago), so the lock is stale"`,
	} {
		p := Pod{Phase: corev1.PodPhase(phase)}
		if got := p.State(); got != want {
			t.Errorf("phase %q: %s, want %s", phase, got, want)
		}
	}
}
