package inspect

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// Death reads why a Stale lock's runner died from what the cluster still
// holds: the finished pod's container termination and its own reason, or,
// when the pod is gone, its Job's failure condition (the Job is the pod
// name without its 5-character tail). It reads nothing itself: the pods
// and Jobs come from the lists and GETs the verdict already needed. It
// returns nil for other verdicts. named gives the listed Jobs of a name;
// jobsRead is false when the Jobs could not be listed: then nothing is
// claimed about them.
func Death(r Result, named func(namespace, name string) []*batchv1.Job, jobsRead bool) *v1alpha1.Death {
	if r.Decision.Verdict != v1alpha1.Stale || r.Facts.Pod == nil {
		return nil
	}
	p := r.Facts.Pod
	if p.Exists && p.Status != nil {
		return podDeath(p)
	}
	name, err := runner.ParsePodName(p.Name)
	if err != nil {
		return nil
	}
	d := &v1alpha1.Death{Job: name.Job}
	if !jobsRead {
		d.Summary = fmt.Sprintf("pod gone; Job %s could not be read", name.Job)
		return d
	}
	for _, j := range named(r.Facts.Lease.Namespace, name.Job) {
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				d.JobCondition = c.Reason
				d.Summary = fmt.Sprintf("pod gone; Job %s failed: %s", j.Name, c.Reason)
				if c.Message != "" {
					d.Summary += " (" + c.Message + ")"
				}
				return d
			}
		}
		d.Summary = fmt.Sprintf("pod gone; Job %s records no failure", j.Name)
		return d
	}
	d.Summary = "pod and Job pruned; no record left"
	return d
}

// podDeath reads a finished pod: the runner container's termination
// (preferring one that failed), and the pod's own reason.
func podDeath(p *Pod) *v1alpha1.Death {
	d := &v1alpha1.Death{Node: p.Node, PodReason: p.Status.Reason, PodMessage: p.Status.Message}
	var term *corev1.ContainerStateTerminated
	for _, cs := range p.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			t = cs.LastTerminationState.Terminated
		}
		if t != nil && (term == nil || (term.ExitCode == 0 && t.ExitCode != 0)) {
			term, d.Container = t, cs.Name
		}
	}
	switch {
	case term != nil:
		d.Reason, d.ExitCode = term.Reason, &term.ExitCode
		if term.Signal != 0 {
			d.Signal = &term.Signal
		}
		if !term.FinishedAt.IsZero() {
			t := term.FinishedAt.Time
			d.FinishedAt = &t
		}
		d.Summary = fmt.Sprintf("container %s %s (exit %d)", d.Container, orUnknown(term.Reason), term.ExitCode)
		if d.PodReason != "" {
			d.Summary += ", pod " + d.PodReason
		}
	case d.PodReason != "":
		d.Summary = "pod " + d.PodReason
		if d.PodMessage != "" {
			d.Summary += ": " + d.PodMessage
		}
	default:
		d.Summary = fmt.Sprintf("pod %s with no termination recorded", p.Phase)
	}
	if d.Node != "" {
		d.Summary += " on node " + d.Node
	}
	return d
}

func orUnknown(s string) string {
	if s == "" {
		return "terminated"
	}
	return s
}
