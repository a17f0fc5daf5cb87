package cluster

import (
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// lastingFor is how long an informer must keep failing, without syncing
// in between, before the watch acts on it. One refusal proves little: an
// API server answers 403 while its RBAC caches fill after a restart (and
// every informer reconnects then), 401 until an OIDC authenticator has its
// keys, and client-go's exec credential plugins refresh on a 401. The
// reflector retries with a backoff that reaches 30 s.
const lastingFor = 45 * time.Second

// A streak of lasting errors takes at least three, none more than
// streakGap after the one before (the reflector retries within about a
// minute at most): two refusals, or refusals minutes apart, are not one
// failure going on.
const (
	streakErrors = 3
	streakGap    = 90 * time.Second
)

// health follows the lasting failures of a watch's informers, reported by
// their error handlers (each on its informer's goroutine) and read by the
// goroutine that handles the queue.
type health struct {
	mu    sync.Mutex
	after time.Duration
	// failing: the first lasting error of each informer still failing,
	// and the resourceVersion it had synced to then.
	failing map[cache.SharedIndexInformer]failure
	// down: the informers judged down, with the resourceVersion then.
	down map[cache.SharedIndexInformer]string
}

type failure struct {
	since, last time.Time
	count       int
	rv          string
}

func newHealth(after time.Duration) *health {
	return &health{after: after, failing: map[cache.SharedIndexInformer]failure{}, down: map[cache.SharedIndexInformer]string{}}
}

// lasting is an error that retries may not mend: the resource is not
// served (any more), or the user may not list or watch it, or is not
// logged in.
func lasting(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}

// failed records an error of inf, and says whether inf is now judged down:
// its lasting errors have gone on for h.after, in one streak, and it has
// not synced since the first as far as its resourceVersion tells (a list
// or watch that succeeded and read something new moves it, and starts
// the count again; one that read nothing new does not: a quiet resource's
// resourceVersion stays, which is what the streak's rules are for).
func (h *health) failed(inf cache.SharedIndexInformer, err error) bool {
	if !lasting(err) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rv := inf.LastSyncResourceVersion()
	if d, ok := h.down[inf]; ok {
		if d == rv {
			return false // judged already
		}
		delete(h.down, inf) // it synced since, and fails again
	}
	now := time.Now()
	f, ok := h.failing[inf]
	if !ok || f.rv != rv || now.Sub(f.last) > streakGap {
		h.failing[inf] = failure{since: now, last: now, count: 1, rv: rv}
		return false
	}
	f.last, f.count = now, f.count+1
	h.failing[inf] = f
	if f.count < streakErrors || now.Sub(f.since) < h.after {
		return false
	}
	delete(h.failing, inf)
	h.down[inf] = rv
	return true
}

// up says whether none of infs is down: one judged down is up again once
// it has synced since (its resourceVersion moved).
func (h *health) up(infs []cache.SharedIndexInformer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := true
	for _, inf := range infs {
		rv, down := h.down[inf]
		if !down {
			continue
		}
		if inf.LastSyncResourceVersion() != rv {
			delete(h.down, inf)
			continue
		}
		ok = false
	}
	return ok
}
