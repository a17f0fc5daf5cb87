package cmd

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Watch event types, as kubectl's --output-watch-events prints them.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

// runWatch prints the locks, then each lock whose verdict, holder or
// reason changes, until Ctrl-C, like kubectl get -w: the table's rows
// under the first table's columns, one object per change in the other
// formats, and with --output-watch-events each change as a
// metav1.WatchEvent through the same printer. --sort-by orders the first
// list only; changes follow as they arrive. With --verdict, a lock whose
// verdict leaves the filter is a DELETED event (see watchView), and one
// that enters it is ADDED; with --capi-cluster, the same for a lock whose
// object leaves or joins the Cluster.
func (o *LocksOptions) runWatch(ctx context.Context) error {
	view := newWatchView(o.filter)
	initial := func(rep *inspect.Report) error {
		warn(o.ErrOut, "", rep.Warnings)
		rep = rep.OfCluster(o.CAPICluster)
		list := v1alpha1.NewLockList()
		for _, r := range rep.Results {
			list.Items = append(list.Items, r.Lock())
		}
		list.Items = view.initial(list.Items)
		if err := o.sorter.sort(list.Items); err != nil {
			return err
		}
		if o.print.isHuman() {
			return o.printer.PrintObj(list, o.Out)
		}
		for n := range list.Items {
			if err := o.printer.PrintObj(o.event(eventAdded, &list.Items[n]), o.Out); err != nil {
				return err
			}
		}
		return nil
	}
	changed := func(c inspect.Change) error {
		event, l, ok := view.change(c.Result.Lock(), c.Deleted, c.Result.InCluster(o.CAPICluster))
		if !ok {
			return nil
		}
		return o.printer.PrintObj(o.event(event, &l), o.Out)
	}
	return o.clients.reader.Watch(ctx, o.scope(o.namespace), initial, changed)
}

// event is what a watch prints of a change: the lock, or with
// --output-watch-events, kubectl's WatchEvent around it. The table prints
// the type under EVENT only with --output-watch-events.
func (o *LocksOptions) event(event string, l *v1alpha1.Lock) runtime.Object {
	if !o.WatchEvents && !o.print.isHuman() {
		return l
	}
	return &metav1.WatchEvent{Type: event, Object: runtime.RawExtension{Object: l}}
}
