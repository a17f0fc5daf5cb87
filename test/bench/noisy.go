package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// Noisy is explain in a namespace full of other objects' Events (issue
// 28), side by side with the same lock in a namespace without them: a
// management cluster's namespaces hold thousands of Events from Cluster
// API and the providers.
type Noisy struct {
	Events int
	// Cached is true when kube-apiserver kept a watch cache for Events
	// (eventsWatchCache), which it does not by default.
	Cached bool
	// Kube is the version of that kube-apiserver.
	Kube string
	// Rows are explain in the quiet namespace, then in the noisy one.
	Rows []Row
}

// targetNoisy is issue 28's bound on explain in the noisy namespace, as
// a ratio of its time in the quiet one.
const targetNoisy = 1.2

// Names of the rows.
const (
	rowQuiet = "explain-quiet"
	rowNoisy = "explain-noisy"
)

// eventsWatchCache turns on kube-apiserver's watch cache for both
// resources that serve Events, core and events.k8s.io. kube-apiserver's
// DefaultWatchCacheSizes (k8s.io/kubernetes pkg/kubeapiserver
// default_storage_factory_builder.go, v1.34.4 and v1.37.2 alike) sets both
// to 0, so every list of Events, whatever its field selector, reads the
// namespace's Events from etcd and filters them after. A size other than 0
// only turns the cache on (its size is dynamic); the flag's syntax is
// resource[.group]#size (k8s.io/apiserver pkg/server/options
// ParseWatchCacheSizes).
var eventsWatchCache = []string{"--watch-cache-sizes=events#1000,events.events.k8s.io#1000"}

// noisyBoth measures explain in a noisy namespace on a cluster as
// kube-apiserver starts by default, then on one with a watch cache for
// Events.
func noisyBoth(ctx context.Context, c Config, plugin string, log io.Writer) (off, on *Noisy, err error) {
	if off, err = noisy(ctx, c, plugin, false, log); err != nil {
		return nil, nil, err
	}
	if on, err = noisy(ctx, c, plugin, true, log); err != nil {
		return nil, nil, err
	}
	return off, on, nil
}

// noisy seeds one stale lock, of an object with a few lock Events of its
// own, in each of two namespaces, and c.NoisyEvents Events about other
// objects in the second, then measures explain of both, interleaved.
func noisy(ctx context.Context, c Config, plugin string, cached bool, log io.Writer) (*Noisy, error) {
	var o testbed.Options
	if cached {
		o.APIServerFlags = eventsWatchCache
	}
	bed, err := testbed.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer bed.Stop()
	kube, err := serverVersion(bed)
	if err != nil {
		return nil, err
	}
	cs, err := bed.Clients()
	if err != nil {
		return nil, err
	}
	quiet := object.Ref{Kind: object.TerraformCluster, Namespace: "quiet", Name: "demo"}
	loud := object.Ref{Kind: object.TerraformCluster, Namespace: "noisy", Name: "demo"}
	for _, r := range []object.Ref{quiet, loud} {
		if err := seedExplained(ctx, cs, r); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(log, "seeding %d unrelated Events...\n", c.NoisyEvents)
	if err := seedEvents(ctx, cs, loud.Namespace, c.NoisyEvents); err != nil {
		return nil, err
	}
	dir, _, counted, err := env(bed, plugin)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	spec := func(name string, r object.Ref, bin, label string) cmdSpec {
		shown := "kubectl captf explain " + r.String() + " -n " + r.Namespace + " -o json"
		if label != "" {
			shown += ", as built at " + label
		}
		return cmdSpec{name: name, shown: shown, env: counted, argv: []string{bin, "explain", r.String(), "-n", r.Namespace, "-o", "json"}, runs: c.NoisyRuns}
	}
	specs := []cmdSpec{spec(rowQuiet, quiet, plugin, ""), spec(rowNoisy, loud, plugin, "")}
	if c.Baseline != "" {
		specs = append(specs, spec(rowQuiet+"-before", quiet, c.Baseline, c.BaselineLabel), spec(rowNoisy+"-before", loud, c.Baseline, c.BaselineLabel))
	}
	rows, err := measureAll(ctx, specs, apiserver(bed), log)
	if err != nil {
		return nil, err
	}
	return &Noisy{Events: c.NoisyEvents, Cached: cached, Kube: kube, Rows: rows}, nil
}

// seedExplained makes r with a stale lock of one of its own runner pods,
// gone, and the Events CAPTF and the kubelet leave about it: a
// StateLocked about the object and an OOMKilling about the pod.
func seedExplained(ctx context.Context, cs *testbed.Clients, r object.Ref) error {
	if err := cs.Object(ctx, r); err != nil {
		return err
	}
	pod := "captf-c-" + r.Name + "-apply-a1-d72d2a-x7k2p"
	id := "5e1f0c2d-0000-0000-0000-000000000001"
	info := testbed.LockInfo(id, "root@"+pod, time.Now().Add(-10*time.Minute))
	if _, err := cs.LockLease(ctx, r.Namespace, r.Suffix(), testbed.BackendLabels(r, testbed.ObjectCluster), &id, &info); err != nil {
		return err
	}
	for _, e := range []*eventsv1.Event{
		eventAbout(r.Namespace, r.Kind.Name, r.Name, "StateLocked", "the state is locked"),
		eventAbout(r.Namespace, "Pod", pod, "OOMKilling", "memory cgroup out of memory"),
	} {
		if _, err := cs.Kube.EventsV1().Events(r.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// seedEvents creates n Events about other pods in ns, as a busy
// management cluster's controllers leave them.
func seedEvents(ctx context.Context, cs *testbed.Clients, ns string, n int) error {
	jobs := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				e := eventAbout(ns, "Pod", fmt.Sprintf("app-%05d", i), "Pulled", "Successfully pulled image \"registry.example/app:v1\" in 1.2s")
				if _, err := cs.Kube.EventsV1().Events(ns).Create(ctx, e, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// eventAbout is an events.k8s.io Event about kind/name, as a controller
// reports it.
func eventAbout(ns, kind, name, reason, note string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(name) + "-", Namespace: ns},
		EventTime:  metav1.NewMicroTime(time.Now()),
		Regarding:  corev1.ObjectReference{Kind: kind, Name: name, Namespace: ns},
		Reason:     reason, Note: note, Type: corev1.EventTypeWarning, Action: "Run",
		ReportingController: "bench.captf.io/seed", ReportingInstance: "bench",
	}
}

// markdown renders the section of docs/benchmarks.md.
func (n *Noisy) markdown() string {
	var b strings.Builder
	cache := "kube-apiserver " + n.Kube + " as it starts by default, with no watch cache for Events"
	if n.Cached {
		cache = "kube-apiserver " + n.Kube + " started with a watch cache for Events (`" + eventsWatchCache[0] + "`)"
	}
	fmt.Fprintf(&b, "\n### `explain` in a noisy namespace (issue 28), %d unrelated Events, %s\n\n", n.Events, cache)
	fmt.Fprintf(&b, "A cluster of its own: one stale lock in each of two namespaces, the second also holding %d Events about other objects; medians of %d interleaved runs.\n\n", n.Events, n.Rows[0].Runs)
	b.WriteString("| command | wall time | peak memory (RSS) | API requests | CPU | API server CPU |\n|---|---|---|---|---|---|\n")
	for _, r := range n.Rows {
		m := r.Median
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", r.Command, m.Wall.Round(time.Millisecond), mb(m.PeakKB), m.Requests,
			m.CPU.Round(10*time.Millisecond), m.ServerCPU.Round(10*time.Millisecond))
	}
	x := n.ratio()
	b.WriteString("\nTarget (issue 28), this run:\n\n")
	fmt.Fprintf(&b, "- explain with the unrelated Events at most %.1fx its time without them: **%.2fx**, %s.\n", targetNoisy, x, verdict(x <= targetNoisy))
	if len(n.Rows) == 4 {
		qb, lb := n.Rows[2].Median, n.Rows[3].Median
		fmt.Fprintf(&b, "- as built before (%s): **%.2fx**.\n", strings.TrimPrefix(n.Rows[2].Command[strings.LastIndex(n.Rows[2].Command, " "):], " "), ratio(int64(lb.Wall), int64(qb.Wall)))
	}
	return b.String()
}

// ratio is explain's time in the noisy namespace over its time in the
// quiet one.
func (n *Noisy) ratio() float64 {
	return ratio(int64(n.Rows[1].Median.Wall), int64(n.Rows[0].Median.Wall))
}
