package cmd

import (
	"context"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
)

// Watch event types, as kubectl's --output-watch-events prints them.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

// watchEvent is one event of -o json|yaml --output-watch-events, shaped
// like kubectl's.
type watchEvent struct {
	Type   string        `json:"type"`
	Object v1alpha1.Lock `json:"object"`
}

// runWatch prints the locks, then each lock whose verdict, holder or
// reason changes, until Ctrl-C: the table's rows without a header again,
// one object per event in json and yaml, like kubectl get -w. --sort-by
// orders the first list only; changes follow as they arrive. With
// --verdict, a lock whose verdict leaves the filter is a DELETED event
// (see watchView), and one that enters it is ADDED.
func (o *LocksOptions) runWatch(ctx context.Context) error {
	table := o.output.human()
	view := newWatchView(o.filter)
	initial := func(rep *inspect.Report) error {
		warn(o.ErrOut, rep.Warnings)
		locks := make([]v1alpha1.Lock, 0, len(rep.Results))
		for _, r := range rep.Results {
			locks = append(locks, r.Lock())
		}
		locks = view.initial(locks)
		if err := o.sorter.sort(locks); err != nil {
			return err
		}
		if table {
			return o.printRows(locks, eventAdded, o.output.noHeaders)
		}
		for _, l := range locks {
			if err := o.printEvent(eventAdded, l); err != nil {
				return err
			}
		}
		return nil
	}
	changed := func(c inspect.Change) error {
		event, l, ok := view.change(c.Result.Lock(), c.Deleted)
		if !ok {
			return nil
		}
		if table {
			return o.printRows([]v1alpha1.Lock{l}, event, true)
		}
		return o.printEvent(event, l)
	}
	return o.inspector.Watch(ctx, o.scope(o.namespace), initial, changed)
}

// printRows prints table rows, with an EVENT column first under
// --output-watch-events.
func (o *LocksOptions) printRows(locks []v1alpha1.Lock, event string, noHeaders bool) error {
	opts := tableOptions{wide: o.output.format() == "wide", noHeaders: noHeaders, namespace: o.AllNamespaces, color: o.output.useColor(o.Out)}
	if o.WatchEvents {
		opts.event = event
	}
	return printTable(o.Out, locks, nil, opts)
}

// printEvent prints one lock in json, yaml, name, jsonpath or go-template.
func (o *LocksOptions) printEvent(event string, l v1alpha1.Lock) error {
	if o.WatchEvents {
		switch o.output.format() {
		case "json":
			b, err := json.MarshalIndent(watchEvent{Type: event, Object: l}, "", "    ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(o.Out, string(b))
			return err
		case "yaml":
			b, err := yaml.Marshal(watchEvent{Type: event, Object: l})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(o.Out, "---\n%s", b)
			return err
		}
	}
	return o.output.printOne(o.IOStreams, &l)
}
