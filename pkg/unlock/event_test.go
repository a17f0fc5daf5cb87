package unlock

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// objectNames are valid object names of every length up to the longest,
// with "-" and "." at and around every place a name is cut.
func objectNames() []string {
	var out []string
	for n := 1; n <= validation.DNS1123SubdomainMaxLength; n++ {
		out = append(out, strings.Repeat("a", n))
		for _, sep := range []string{"-", ".", "--", "-0-", "0.0"} {
			for at := 1; at+len(sep) < n; at += max(1, n/20) {
				out = append(out, strings.Repeat("b", at)+sep+strings.Repeat("c", n-at-len(sep)))
			}
		}
	}
	// Cut places: the longest name whole, then dots and dashes at every
	// place near the cut.
	for at := 200; at < validation.DNS1123SubdomainMaxLength-1; at++ {
		for _, sep := range []string{"-", "."} {
			out = append(out, strings.Repeat("x", at)+sep+strings.Repeat("y", validation.DNS1123SubdomainMaxLength-at-1))
			out = append(out, strings.Repeat("x", at)+sep+"z")
		}
	}
	out = append(out, strings.Repeat("a.", 126)+"a", strings.Repeat("a-", 126)+"a", strings.Repeat("0.-", 84)+"0")
	return out
}

// Every valid object name, at any time, gives a valid Event name, which
// names the object as client-go's recorders do where it fits, and is
// its own: two objects unlocked at the same moment never share one.
func TestEventNameIsAlwaysValid(t *testing.T) {
	times := []time.Time{time.Unix(0, 1), time.Date(2026, 12, 2, 1, 2, 3, 456789, time.UTC), time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC), time.Unix(0, -1)}
	tested := 0
	for _, at := range times {
		seen := map[string]string{}
		for _, o := range objectNames() {
			if errs := validation.IsDNS1123Subdomain(o); len(errs) > 0 {
				continue // not a name the API server accepts for an object
			}
			tested++
			name := eventName(o, at)
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Fatalf("object %q (%d characters) at %s: Event name %q is invalid: %v", o, len(o), at, name, errs)
			}
			if want := fmt.Sprintf("%s.%x", o, at.UnixNano()); len(want) <= validation.DNS1123SubdomainMaxLength && at.UnixNano() > 0 && name != want {
				t.Errorf("object %q: Event %q, want client-go's %q", o, name, want)
			}
			if other, ok := seen[name]; ok {
				t.Fatalf("objects %q and %q get the same Event name %q", other, o, name)
			}
			seen[name] = o
			if name != eventName(o, at) {
				t.Fatalf("object %q: two names at one time", o)
			}
		}
	}
	if tested < 10000 {
		t.Errorf("only %d valid names tested", tested)
	}
}

// The unlock of an object whose name has the most characters a name may
// have is recorded, in an Event whose name the API server accepts.
func TestLongNamedObjectIsRecorded(t *testing.T) {
	long := object.Ref{Kind: object.TerraformCluster, Namespace: "default", Name: strings.Repeat("n", 120) + "." + strings.Repeat("a-b", 44)}
	if len(long.Name) != validation.DNS1123SubdomainMaxLength {
		t.Fatalf("%d characters", len(long.Name))
	}
	// CAPTF names the runner of a long-named object with a hash.
	pod := "root@" + runner.JobName(long.Kind, long.Name, "apply", 1, "d72d2a") + "-x7k2p"
	srv := serve(t, captfObject(long), leaseOf(long, &lockID, pod))
	u := unlocker(t, srv)
	o := Options{Confirm: true}
	out, err := u.Unlock(context.Background(), "default", object.LockLeaseName("default", long.Suffix()), o)
	if err != nil || out.Action != v1alpha1.ActionUnlocked || out.Result.Decision.Verdict != v1alpha1.Stale {
		t.Fatalf("%s %s: %s %v", out.Action, out.Result.Decision.Verdict, out.Message, err)
	}
	u.Record(context.Background(), out, o)
	evs := events(t, srv)
	if out.Unrecorded || len(evs) != 1 || evs[0].Name != out.Event || evs[0].Regarding.Name != long.Name {
		t.Fatalf("Event %q, %d Events, warnings %q", out.Event, len(evs), out.Warnings)
	}
	if errs := validation.IsDNS1123Subdomain(out.Event); len(errs) > 0 {
		t.Errorf("Event name %q: %v", out.Event, errs)
	}
}
