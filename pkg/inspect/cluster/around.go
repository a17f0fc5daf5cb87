package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// ReadExplained reads one lock live as ReadLock does, and what explain
// shows around it: the object (fetched, when the caller already read it,
// is used as it is), the Events about the object and its holder pod and
// Job, CAPTF's run lease and the names of the Secrets labelled with the
// lock's suffix (those the decision listed, where it listed the owner's
// state Secrets). named is the object the user named, nil for a Lease;
// then the lock's owner is the object. A Lease that does not exist gives
// a nil snapshot and what surrounds the named object; every other read
// that fails is a line in Around.Unreadable, never an error.
func (r *Reader) ReadExplained(ctx context.Context, namespace, lease string, named *object.Ref, fetched *unstructured.Unstructured) (*inspect.Snapshot, inspect.Around, error) {
	snap, err := r.ReadLock(ctx, namespace, lease)
	var none *inspect.NoLeaseError
	var res *inspect.Result
	switch {
	case errors.As(err, &none):
		snap = nil
	case err != nil:
		return nil, inspect.Around{}, err
	default:
		d, _ := inspect.DecideLock(snap, namespace, lease)
		res = &d
	}
	ref, suffix := named, ""
	if ref == nil && res != nil && res.Facts.Owner != nil {
		ref = &res.Facts.Owner.Ref
	}
	switch {
	case ref != nil:
		suffix = ref.Suffix()
	case res != nil:
		suffix = res.Facts.Lease.Suffix
	}
	if fetched == nil && res != nil {
		fetched = res.Object
	}
	var a inspect.Around
	// The four reads are independent: in parallel, each into its own
	// slot, so that Unreadable keeps one order.
	var objErr, evErr, leaseErr, secretsErr string
	var wg sync.WaitGroup
	if ref != nil {
		wg.Add(2)
		go func() { defer wg.Done(); a.Object, objErr = r.readObject(ctx, *ref, fetched) }()
		go func() {
			defer wg.Done()
			a.ObjectEvents, a.RunnerEvents, evErr = r.readEvents(ctx, *ref, runnerNames(res))
		}()
	}
	// The decision listed the owner's state Secrets already where it
	// needed them (readSecrets): their names are those, and a list it
	// could not make is not made again, but said once, with what the
	// verdict then follows.
	var listed *inspect.StateRead
	if snap != nil {
		if st, ok := snap.States[namespace+"/"+suffix]; ok {
			listed = &st
		}
	}
	switch {
	case suffix == "":
	case listed != nil && listed.Why == "":
		a.SecretNames = make([]string, 0, len(listed.Secrets))
		for _, s := range listed.Secrets {
			a.SecretNames = append(a.SecretNames, s.Name)
		}
	case listed != nil:
		secretsErr = "state Secrets: " + listed.Why + "; whether they exist and how they are labelled is not known, so the verdict follows the object's StateReadable condition alone"
	default:
		wg.Add(1)
		go func() { defer wg.Done(); a.SecretNames, secretsErr = r.readSecretNames(ctx, namespace, suffix) }()
	}
	if suffix != "" {
		wg.Add(1)
		go func() { defer wg.Done(); a.RunLease, leaseErr = r.readRunLease(ctx, namespace, suffix) }()
	}
	wg.Wait()
	for _, e := range []string{objErr, evErr, leaseErr, secretsErr} {
		if e != "" {
			a.Unreadable = append(a.Unreadable, e)
		}
	}
	return snap, a, nil
}

// readObject is the object, fetched when it was read already, else read
// in full; nil when it is gone.
func (r *Reader) readObject(ctx context.Context, ref object.Ref, fetched *unstructured.Unstructured) (*unstructured.Unstructured, string) {
	if fetched != nil {
		return fetched, ""
	}
	u, err := r.Dynamic.Resource(ref.Kind.GVR()).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, ""
	case err != nil:
		return nil, ref.String() + ": " + err.Error()
	}
	return u, ""
}

// readRunLease is CAPTF's run lease of suffix; nil when it does not exist.
func (r *Reader) readRunLease(ctx context.Context, namespace, suffix string) (*coordinationv1.Lease, string) {
	name := "captf-run-" + suffix
	l, err := r.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, ""
	case err != nil:
		return nil, "run lease " + name + ": " + err.Error()
	}
	return l, ""
}

// readSecretNames lists the names of the Secrets labelled with suffix,
// as metadata only: the plugin never reads state data.
func (r *Reader) readSecretNames(ctx context.Context, namespace, suffix string) ([]string, string) {
	l, err := r.Metadata.Resource(secretsGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: inspect.LabelSecretSuffix + "=" + suffix})
	if err != nil {
		return nil, "state Secrets: " + err.Error()
	}
	names := make([]string, 0, len(l.Items))
	for _, s := range l.Items {
		names = append(names, s.Name)
	}
	return names, ""
}

// about is what one request for Events selects: the object of a kind and
// name.
type about struct{ kind, name string }

// selector selects the Events about q, by the fields of prefix
// (regarding. for events.k8s.io/v1, involvedObject. for core/v1).
func (q about) selector(prefix string) string {
	return fields.AndSelectors(fields.OneTermEqualSelector(prefix+"kind", q.kind), fields.OneTermEqualSelector(prefix+"name", q.name)).String()
}

// readEvents reads the Events about the object and about its runner pod
// and Job (runner: the pod's name, then the Job's), each selected on the
// server by the kind and name it is about: one small request for each,
// at most three, however many Events the namespace holds. A request that
// events.k8s.io/v1 refuses is made to core/v1 instead. The namespace
// itself is not selected: a core Event in the default namespace may name
// no namespace for its object, and the list is of the object's
// namespace already.
func (r *Reader) readEvents(ctx context.Context, ref object.Ref, runner []string) (objectEvents, runnerEvents []inspect.Event, unreadable string) {
	queries := []about{{ref.Kind.Name, ref.Name}}
	if len(runner) > 0 {
		queries = append(queries, about{"Pod", runner[0]})
	}
	if len(runner) > 1 {
		queries = append(queries, about{"Job", runner[1]})
	}
	got := make([][]inspect.Event, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for n, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[n], errs[n] = r.eventsAbout(ctx, ref.Namespace, q)
		}()
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, nil, fmt.Sprintf("events: %v", err)
	}
	for _, evs := range got[1:] {
		runnerEvents = append(runnerEvents, evs...)
	}
	return got[0], runnerEvents, ""
}

// eventsAbout lists the Events about q in namespace: events.k8s.io/v1,
// or core/v1 where that cannot be listed; the error is events.k8s.io's
// when neither can.
func (r *Reader) eventsAbout(ctx context.Context, namespace string, q about) ([]inspect.Event, error) {
	sel := q.selector("regarding.")
	evs, err := r.Client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err == nil {
		out := make([]inspect.Event, 0, len(evs.Items))
		for _, ev := range evs.Items {
			s := v1alpha1.EventSummary{Reason: ev.Reason, Type: ev.Type, Note: ev.Note, Count: 1, ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance}
			s.Time = firstTime(ev.EventTime.Time, ev.DeprecatedLastTimestamp.Time, ev.CreationTimestamp.Time)
			if ev.Series != nil {
				s.Count, s.Time = ev.Series.Count, firstTime(ev.Series.LastObservedTime.Time, ev.EventTime.Time)
			}
			out = append(out, inspect.Event{Kind: ev.Regarding.Kind, Name: ev.Regarding.Name, Summary: s})
		}
		return out, nil
	}
	sel = q.selector("involvedObject.")
	core, cerr := r.Client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if cerr != nil {
		return nil, err
	}
	out := make([]inspect.Event, 0, len(core.Items))
	for _, ev := range core.Items {
		out = append(out, inspect.Event{Kind: ev.InvolvedObject.Kind, Name: ev.InvolvedObject.Name, Summary: coreSummary(ev)})
	}
	return out, nil
}

func coreSummary(ev corev1.Event) v1alpha1.EventSummary {
	s := v1alpha1.EventSummary{Reason: ev.Reason, Type: ev.Type, Note: ev.Message, Count: ev.Count, ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance}
	if s.ReportingController == "" {
		s.ReportingController, s.ReportingInstance = ev.Source.Component, ev.Source.Host
	}
	s.Time = firstTime(ev.LastTimestamp.Time, ev.EventTime.Time, ev.CreationTimestamp.Time)
	return s
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

// firstTime is the first non-zero time, or nil.
func firstTime(ts ...time.Time) *time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return &t
		}
	}
	return nil
}
