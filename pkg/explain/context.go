package explain

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/audit"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// Context reasons: the controller's two lock events, and the plugin's own.
var contextReasons = []string{"ForceUnlocked", "StateLocked", audit.Reason}

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// readContext reads what surrounds the lock: the object's StateReadable
// condition and active Job, the latest lock events about it, CAPTF's run
// lease and the state Secrets' names. All of it is read only; a read that
// fails is one line in Unreadable, never a guess.
// It returns the object, nil when it could not be read.
func (e *Explainer) readContext(ctx context.Context, x *v1alpha1.Explanation, t Target, ref *object.Ref, r *inspect.Result) *unstructured.Unstructured {
	var obj *unstructured.Unstructured
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
		if r != nil && r.Object != nil && t.Fetched == nil {
			t.Fetched = r.Object
		}
		obj = e.readObject(ctx, c, t, ref, r == nil || slices.Contains(r.Unreadable, "jobs") || uidUnknown)
		e.readEvents(ctx, c, ref, runnerNames(r))
	}
	if suffix == "" {
		return obj
	}
	runLease := "captf-run-" + suffix
	l, err := e.Reader.Client.CoordinationV1().Leases(t.Namespace).Get(ctx, runLease, metav1.GetOptions{})
	switch {
	case err == nil:
		c.RunLease = &v1alpha1.RunLease{Name: runLease, Op: l.Annotations["captf.io/lease-op"], AcquiredAt: l.Annotations["captf.io/lease-acquired-at"]}
		if l.Spec.HolderIdentity != nil {
			c.RunLease.Holder = *l.Spec.HolderIdentity
		}
	case !apierrors.IsNotFound(err):
		c.Unreadable = append(c.Unreadable, "run lease "+runLease+": "+err.Error())
	}
	// Metadata only: the plugin never reads state data.
	prefix := object.StateSecretName(object.DefaultWorkspace, suffix)
	secrets, err := e.Reader.Metadata.Resource(secretsGVR).Namespace(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: inspect.LabelSecretSuffix + "=" + suffix})
	if err != nil {
		c.Unreadable = append(c.Unreadable, "state Secrets: "+err.Error())
		return obj
	}
	for _, s := range secrets.Items {
		if s.Name == prefix || strings.HasPrefix(s.Name, prefix+"-part-") {
			c.StateSecrets = append(c.StateSecrets, s.Name)
		}
	}
	sort.Strings(c.StateSecrets)
	return obj
}

// readObject reads the object's StateReadable condition and, when the
// Jobs could not be read, its status.activeJob. It returns the object, nil
// when it is gone or could not be read.
func (e *Explainer) readObject(ctx context.Context, c *v1alpha1.Context, t Target, ref *object.Ref, statusJob bool) *unstructured.Unstructured {
	u := t.Fetched
	if u == nil {
		var err error
		u, err = e.Reader.Dynamic.Resource(ref.Kind.GVR()).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			c.Unreadable = append(c.Unreadable, ref.String()+": "+err.Error())
			return nil
		}
	}
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
	return u
}

// runnerReasons are the events that say how a runner pod or Job ended.
var runnerReasons = []string{"Killing", "Evicted", "Preempting", "NodeNotReady", "OOMKilling", "DeadlineExceeded", "BackoffLimitExceeded", "Failed"}

// readEvents reads the namespace's events once (events.k8s.io/v1, or
// core/v1 where that cannot be read) and keeps the latest of each lock
// reason about the object and of each ending reason about the runner pod
// or Job: one request, whatever it keeps.
func (e *Explainer) readEvents(ctx context.Context, c *v1alpha1.Context, ref *object.Ref, runner []string) {
	type about struct{ kind, name string }
	type seen struct {
		about about
		s     v1alpha1.EventSummary
	}
	var all []seen
	evs, err := e.Reader.Client.EventsV1().Events(ref.Namespace).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, ev := range evs.Items {
			s := v1alpha1.EventSummary{Reason: ev.Reason, Type: ev.Type, Note: ev.Note, Count: 1, ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance}
			s.Time = firstTime(ev.EventTime.Time, ev.DeprecatedLastTimestamp.Time, ev.CreationTimestamp.Time)
			if ev.Series != nil {
				s.Count, s.Time = ev.Series.Count, firstTime(ev.Series.LastObservedTime.Time, ev.EventTime.Time)
			}
			all = append(all, seen{about{ev.Regarding.Kind, ev.Regarding.Name}, s})
		}
	} else {
		core, cerr := e.Reader.Client.CoreV1().Events(ref.Namespace).List(ctx, metav1.ListOptions{})
		if cerr != nil {
			c.Unreadable = append(c.Unreadable, fmt.Sprintf("events: %v", err))
			return
		}
		for _, ev := range core.Items {
			all = append(all, seen{about{ev.InvolvedObject.Kind, ev.InvolvedObject.Name}, coreSummary(ev)})
		}
	}
	objectEvents, runnerEvents := latestEvents{}, latestEvents{}
	for _, ev := range all {
		switch {
		case ev.about == about{ref.Kind.Name, ref.Name} && slices.Contains(contextReasons, ev.s.Reason):
			objectEvents.keep(ev.s)
		case (ev.about.kind == "Pod" || ev.about.kind == "Job") && slices.Contains(runner, ev.about.name) && slices.Contains(runnerReasons, ev.s.Reason):
			runnerEvents.keep(ev.s)
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

func coreSummary(ev corev1.Event) v1alpha1.EventSummary {
	s := v1alpha1.EventSummary{Reason: ev.Reason, Type: ev.Type, Note: ev.Message, Count: ev.Count, ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance}
	if s.ReportingController == "" {
		s.ReportingController, s.ReportingInstance = ev.Source.Component, ev.Source.Host
	}
	s.Time = firstTime(ev.LastTimestamp.Time, ev.EventTime.Time, ev.CreationTimestamp.Time)
	return s
}

// firstTime is the first non-zero time, or nil.
func firstTime(ts ...time.Time) *time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return &t
		}
	}
	return nil
}

// runnerNames are the holder pod and its Job, for an own-pod holder.
func runnerNames(r *inspect.Result) []string {
	if r == nil {
		return nil
	}
	host, own := inspect.OwnPodHost(r.Facts.Lease, r.Facts.Owner)
	if !own {
		return nil
	}
	p, err := runner.ParsePodName(host)
	if err != nil {
		return []string{host}
	}
	return []string{host, p.Job}
}
