package explain

import (
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Context reasons: the controller's two lock events, and the plugin's own.
var contextReasons = []string{"ForceUnlocked", "StateLocked", audit.Reason}

// surroundings fills what surrounds the lock from what the reading layer read
// (inspect.Around): the object's StateReadable condition and active Job,
// the latest lock events about it and ending events about its runner,
// CAPTF's run lease and the state Secrets' names. A read that failed is
// one line in Unreadable, never a guess.
func surroundings(x *v1alpha1.Explanation, ref *object.Ref, r *inspect.Result, a inspect.Around) {
	c := &x.Context
	c.Events, c.StateSecrets = []v1alpha1.EventSummary{}, []string{}
	suffix := ""
	switch {
	case ref != nil:
		suffix = ref.Suffix()
	case r != nil:
		suffix = r.Facts.Lease.Suffix
	}
	if ref != nil {
		// status.activeJob stands in for the Jobs when they could not be
		// read, or when the object's uid is not known: then which of the
		// Jobs labelled with its name CAPTF counts cannot be told.
		uidUnknown := r != nil && r.Facts.Owner != nil && r.Facts.Owner.UID == "" && (r.Facts.Owner.Exists == nil || *r.Facts.Owner.Exists)
		if uidUnknown && !slices.Contains(r.Unreadable, "jobs") {
			c.Unreadable = append(c.Unreadable, "active Job: the object's uid is not known, so which of the Jobs labelled with its name CAPTF counts as its own (their controller is the object) cannot be told; status.activeJob is shown instead")
		}
		if a.Object != nil {
			objectStatus(c, a.Object, r == nil || slices.Contains(r.Unreadable, "jobs") || uidUnknown)
		}
		events(c, *ref, a)
	}
	c.Unreadable = append(c.Unreadable, a.Unreadable...)
	if suffix == "" {
		return
	}
	if l := a.RunLease; l != nil {
		c.RunLease = &v1alpha1.RunLease{Name: l.Name, Op: l.Annotations["captf.io/lease-op"], AcquiredAt: l.Annotations["captf.io/lease-acquired-at"]}
		if l.Spec.HolderIdentity != nil {
			c.RunLease.Holder = *l.Spec.HolderIdentity
		}
	}
	prefix := object.StateSecretName(object.DefaultWorkspace, suffix)
	for _, s := range a.SecretNames {
		if s == prefix || strings.HasPrefix(s, prefix+"-part-") {
			c.StateSecrets = append(c.StateSecrets, s)
		}
	}
	sort.Strings(c.StateSecrets)
}

// objectStatus reads the object's StateReadable condition and, when the
// Jobs could not be read, its status.activeJob.
func objectStatus(c *v1alpha1.Context, u *unstructured.Unstructured, statusJob bool) {
	if a, ok, _ := unstructured.NestedMap(u.Object, "status", "activeJob"); ok && statusJob && c.ActiveJob == nil {
		str := func(k string) string { s, _ := a[k].(string); return s }
		j := &v1alpha1.ActiveJob{Name: str("name"), Operation: str("operation"), From: "status.activeJob"}
		if n, ok := a["attempt"].(int64); ok {
			j.Attempt = int32(n)
		}
		if ts, err := time.Parse(time.RFC3339, str("startTime")); err == nil {
			j.StartTime = &ts
		}
		if j.Name != "" {
			c.ActiveJob = j
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		m, _ := raw.(map[string]any)
		if m["type"] != "StateReadable" {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		cond := &v1alpha1.Condition{Status: str("status"), Reason: str("reason"), Message: str("message")}
		if ts, err := time.Parse(time.RFC3339, str("lastTransitionTime")); err == nil {
			cond.LastTransitionTime = &ts
		}
		c.StateReadable = cond
	}
}

// runnerReasons are the events that say how a runner pod or Job ended.
var runnerReasons = []string{"Killing", "Evicted", "Preempting", "NodeNotReady", "OOMKilling", "DeadlineExceeded", "BackoffLimitExceeded", "Failed"}

// events keeps the latest of each lock reason about the object and of
// each ending reason about the runner pod or Job.
func events(c *v1alpha1.Context, ref object.Ref, a inspect.Around) {
	objectEvents, runnerEvents := latestEvents{}, latestEvents{}
	for _, ev := range a.ObjectEvents {
		if ev.Kind == ref.Kind.Name && ev.Name == ref.Name && slices.Contains(contextReasons, ev.Summary.Reason) {
			objectEvents.keep(ev.Summary)
		}
	}
	for _, ev := range a.RunnerEvents {
		if (ev.Kind == "Pod" || ev.Kind == "Job") && slices.Contains(runnerReasons, ev.Summary.Reason) {
			runnerEvents.keep(ev.Summary)
		}
	}
	c.Events = objectEvents.in(contextReasons)
	c.RunnerEvents = runnerEvents.in(runnerReasons)
}

// latestEvents keeps the latest event of each reason.
type latestEvents map[string]v1alpha1.EventSummary

func (l latestEvents) keep(s v1alpha1.EventSummary) {
	if old, ok := l[s.Reason]; !ok || (s.Time != nil && (old.Time == nil || s.Time.After(*old.Time))) {
		l[s.Reason] = s
	}
}

// in returns the kept events in the order of reasons.
func (l latestEvents) in(reasons []string) []v1alpha1.EventSummary {
	out := []v1alpha1.EventSummary{}
	for _, r := range reasons {
		if s, ok := l[r]; ok {
			out = append(out, s)
		}
	}
	return out
}
