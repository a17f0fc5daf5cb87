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
// one object per event in json and yaml, like kubectl get -w.
func (o *LocksOptions) runWatch(ctx context.Context) error {
	table := o.output.human()
	initial := func(rep *inspect.Report) error {
		warn(o.ErrOut, rep.Warnings)
		if table {
			list := v1alpha1.NewLockList()
			for _, r := range rep.Results {
				list.Items = append(list.Items, r.Lock())
			}
			return o.printRows(list.Items, eventAdded, o.output.noHeaders)
		}
		for _, r := range rep.Results {
			if err := o.printEvent(eventAdded, r.Lock()); err != nil {
				return err
			}
		}
		return nil
	}
	changed := func(c inspect.Change) error {
		event := eventModified
		if c.Deleted {
			event = eventDeleted
		}
		if table {
			return o.printRows([]v1alpha1.Lock{c.Result.Lock()}, event, true)
		}
		return o.printEvent(event, c.Result.Lock())
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
