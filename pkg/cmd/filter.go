package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
)

// verdicts are the five verdicts, in the order the help gives them.
var verdicts = []v1alpha1.Verdict{v1alpha1.Unlocked, v1alpha1.Live, v1alpha1.Stale, v1alpha1.Foreign, v1alpha1.Unknown}

func verdictNames() []string {
	names := make([]string, len(verdicts))
	for i, v := range verdicts {
		names[i] = string(v)
	}
	return names
}

// verdictFilter is `locks --verdict`: the verdicts kept. Empty keeps all.
type verdictFilter map[v1alpha1.Verdict]bool

// parseVerdicts reads --verdict's values, spelt as the verdicts are
// (Stale, not stale: the same words as the output).
func parseVerdicts(values []string) (verdictFilter, error) {
	if len(values) == 0 {
		return nil, nil
	}
	f := verdictFilter{}
	for _, v := range values {
		ok := false
		for _, known := range verdicts {
			if v == string(known) {
				f[known], ok = true, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("--verdict %q is not a verdict: give one or more of %s", v, strings.Join(verdictNames(), ", "))
		}
	}
	return f, nil
}

// keep says whether the filter lets the lock through.
func (f verdictFilter) keep(l *v1alpha1.Lock) bool { return len(f) == 0 || f[l.Verdict] }

// filter keeps the locks the filter lets through, in their order.
func (f verdictFilter) filter(locks []v1alpha1.Lock) []v1alpha1.Lock {
	if len(f) == 0 {
		return locks
	}
	out := make([]v1alpha1.Lock, 0, len(locks))
	for i := range locks {
		if f.keep(&locks[i]) {
			out = append(out, locks[i])
		}
	}
	return out
}

// ageFilter is `locks --older-than`: it keeps the held locks whose
// lock-info Created is before the cutoff. A held lock whose Created cannot
// be read (no or unparseable lock info) is kept, for its age is unknown
// and a check for old locks must not miss one it cannot date; so is one
// whose Created is further ahead of the run's clock than maxClockSkew,
// which no clock wrote honestly. An unlocked lock has no age and is
// dropped. The zero filter keeps every lock.
type ageFilter struct {
	set    bool
	cutoff time.Time
	// future is the latest Created read as a time: later is unknown.
	future time.Time
}

// maxClockSkew is how far ahead of this machine's clock a lock's Created
// may be and still be read as a time: the holder wrote it with its own
// clock (a runner pod's node, a workstation), which may run a little
// ahead. Beyond that, the time says nothing of the lock's age (a holder
// may write Created: 9999-01-01, on purpose or not), and a lock that
// --older-than dropped for it would be invisible to the cron check.
// Five minutes is Kerberos' default tolerance, a common bound for clocks
// that are meant to be synchronised.
const maxClockSkew = 5 * time.Minute

// newAgeFilter keeps the locks older than d at now; set is false when
// --older-than was not given.
func newAgeFilter(set bool, d time.Duration, now time.Time) (ageFilter, error) {
	if !set {
		return ageFilter{}, nil
	}
	if d < 0 {
		return ageFilter{}, fmt.Errorf("--older-than %s is negative: give a duration of 0 or more, such as 30m or 2h", d)
	}
	return ageFilter{set: true, cutoff: now.Add(-d), future: now.Add(maxClockSkew)}, nil
}

// keep says whether the filter lets the lock through.
func (f ageFilter) keep(l *v1alpha1.Lock) bool {
	switch {
	case !f.set:
		return true
	case l.Lock == nil: // unlocked: no age
		return false
	case l.Lock.Created == nil: // held, age unknown
		return true
	case l.Lock.Created.After(f.future): // held, dated where no clock is
		return true
	}
	return l.Lock.Created.Before(f.cutoff)
}

// filter keeps the locks the filter lets through, in their order.
func (f ageFilter) filter(locks []v1alpha1.Lock) []v1alpha1.Lock {
	if !f.set {
		return locks
	}
	out := make([]v1alpha1.Lock, 0, len(locks))
	for i := range locks {
		if f.keep(&locks[i]) {
			out = append(out, locks[i])
		}
	}
	return out
}

// watchView is what a watch has shown: each lock it printed last, by
// namespace/name. It turns the engine's changes into kubectl's events, as
// the API server does for a watch with a selector: a lock not shown before
// is ADDED; one shown before is MODIFIED; one deleted, or whose verdict
// leaves the --verdict filter, is DELETED, printed as last shown; a lock
// outside the filter that was never shown is not printed at all.
type watchView struct {
	filter verdictFilter
	shown  map[string]v1alpha1.Lock
}

func newWatchView(f verdictFilter) *watchView {
	return &watchView{filter: f, shown: map[string]v1alpha1.Lock{}}
}

func lockKey(l *v1alpha1.Lock) string { return l.Namespace + "/" + l.Name }

// initial filters the first list and remembers what it shows.
func (v *watchView) initial(locks []v1alpha1.Lock) []v1alpha1.Lock {
	locks = v.filter.filter(locks)
	for _, l := range locks {
		v.shown[lockKey(&l)] = l
	}
	return locks
}

// change returns the event to print for a changed (or deleted) lock, and
// the lock to print with it; ok is false when nothing is printed.
// inCluster is whether the deciding layer keeps it for --capi-cluster
// (inspect.Result.InCluster): outside, it is filtered out as a verdict
// outside --verdict is.
func (v *watchView) change(l v1alpha1.Lock, deleted, inCluster bool) (event string, out v1alpha1.Lock, ok bool) {
	k := lockKey(&l)
	prev, shown := v.shown[k]
	switch {
	case deleted && shown:
		delete(v.shown, k)
		return eventDeleted, l, true
	case deleted:
		return "", l, false
	case inCluster && v.filter.keep(&l) && shown:
		v.shown[k] = l
		return eventModified, l, true
	case inCluster && v.filter.keep(&l):
		v.shown[k] = l
		return eventAdded, l, true
	case shown:
		delete(v.shown, k)
		return eventDeleted, prev, true
	}
	return "", l, false
}
