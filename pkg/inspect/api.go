package inspect

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// Lock renders a result in the captf.io/v1alpha1 output schema.
func (r Result) Lock() v1alpha1.Lock {
	f, l := r.Facts, r.Facts.Lease
	out := v1alpha1.Lock{
		ObjectMeta: metav1.ObjectMeta{
			Name: l.Name, Namespace: l.Namespace, UID: l.UID,
			ResourceVersion: l.ResourceVersion, CreationTimestamp: l.CreationTimestamp,
			Labels: l.Labels,
		},
		Workspace:   l.Workspace,
		Suffix:      l.Suffix,
		Verdict:     r.Decision.Verdict,
		Reason:      r.Decision.Reason,
		CAPTFClears: r.Decision.CAPTFClears,
		Warnings:    f.Warnings,
		Unreadable:  r.Unreadable,
	}
	out.ActiveJob = r.ActiveJob.name()
	if x := r.Decision.DeletesLease; x != nil {
		out.CAPTFDeletesLease = &v1alpha1.LeaseDeletion{Path: x.Path, When: x.When, Why: x.Why + "; " + jobgate.HolderStillWriting, Certain: x.Certain}
	}
	out.SetTypeMeta()
	if o := f.Owner; o != nil {
		out.Object = &v1alpha1.ObjectRef{Kind: o.Ref.Kind.Name, Name: o.Ref.Name, Exists: o.Exists}
		out.Cluster = o.Cluster
	}
	if !l.Held {
		return out
	}
	out.Lock = &v1alpha1.LockInfo{ID: l.ID}
	if l.Info == nil {
		out.Lock.InfoError = l.InfoErr.Error()
		return out
	}
	i := l.Info
	out.Lock.InfoID, out.Lock.Operation, out.Lock.Who, out.Lock.Version = i.ID, i.Operation, i.Who, i.Version
	if !i.Created.IsZero() {
		c := i.Created
		out.Lock.Created = &c
	}
	if l.HostErr != nil {
		return out
	}
	h := &v1alpha1.Holder{Host: l.Host}
	_, h.OwnPod = OwnPodHost(l, f.Owner)
	if p := f.Pod; p != nil && (p.Exists || h.OwnPod) {
		h.Pod, h.PodExists, h.PodPhase, h.Terminating = p.Name, p.Exists, string(p.Phase), p.Terminating
	}
	h.Death = r.Death
	out.Holder = h
	return out
}
