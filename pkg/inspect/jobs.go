package inspect

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// Job labels CAPTF sets on its runner Jobs.
const (
	LabelOp      = "captf.infrastructure.cluster.x-k8s.io/op"
	LabelAttempt = "captf.infrastructure.cluster.x-k8s.io/attempt"
)

// Job is an object's active runner Job, in the shape of CAPTF's
// status.activeJob.
type Job struct {
	Name      string
	Operation string
	Attempt   int32
	// StartTime is the Job's status.startTime, else its creation time.
	StartTime time.Time
}

// name is the Job's name, "" for no Job.
func (j *Job) name() string {
	if j == nil {
		return ""
	}
	return j.Name
}

// ActiveJob returns the object's active runner Job as CAPTF picks it: of
// the Jobs carrying the object's owner-kind and owner-name labels, the
// newest by creationTimestamp that has neither a true Complete nor a true
// Failed condition. nil when there is none. The controller checks the
// lock only when there is none.
func ActiveJob(jobs []*batchv1.Job, r object.Ref) *Job {
	name := ownerLabel(r)
	var newest *batchv1.Job
	for _, j := range jobs {
		if j.Namespace != r.Namespace || j.Labels[LabelOwnerKind] != r.Kind.Name || j.Labels[LabelOwnerName] != name || finished(j) {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&j.CreationTimestamp) {
			newest = j
		}
	}
	if newest == nil {
		return nil
	}
	out := &Job{Name: newest.Name, Operation: newest.Labels[LabelOp], StartTime: newest.CreationTimestamp.Time}
	if n, err := strconv.ParseInt(newest.Labels[LabelAttempt], 10, 32); err == nil {
		out.Attempt = int32(n)
	}
	if p, err := runner.ParseJobName(newest.Name); err == nil {
		if out.Operation == "" {
			out.Operation = p.Op
		}
		if out.Attempt == 0 {
			out.Attempt = p.Attempt
		}
	}
	if t := newest.Status.StartTime; t != nil {
		out.StartTime = t.Time
	}
	return out
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// ownerLabel is the LabelOwnerName CAPTF gives the Jobs of r: its name, or
// the hash of a name too long for a label value.
func ownerLabel(r object.Ref) string {
	if len(r.Name) > 63 {
		return object.ShortHash(r.Name)
	}
	return r.Name
}

// jobIndex finds a lock's Jobs without reading every Job for each lock: a
// cluster that keeps its finished Jobs has several per object, and
// locks -A looks up the Jobs of every lock.
type jobIndex struct {
	byOwner map[jobOwner][]*batchv1.Job
	byName  map[types.NamespacedName][]*batchv1.Job
}

// jobOwner is the owner a Job's labels name.
type jobOwner struct{ namespace, kind, name string }

func indexJobs(jobs []*batchv1.Job) jobIndex {
	x := jobIndex{byOwner: map[jobOwner][]*batchv1.Job{}, byName: map[types.NamespacedName][]*batchv1.Job{}}
	for _, j := range jobs {
		o := jobOwner{j.Namespace, j.Labels[LabelOwnerKind], j.Labels[LabelOwnerName]}
		x.byOwner[o] = append(x.byOwner[o], j)
		n := types.NamespacedName{Namespace: j.Namespace, Name: j.Name}
		x.byName[n] = append(x.byName[n], j)
	}
	return x
}

// of are the Jobs whose labels name r as their owner.
func (x jobIndex) of(r object.Ref) []*batchv1.Job {
	return x.byOwner[jobOwner{r.Namespace, r.Kind.Name, ownerLabel(r)}]
}

// named are the Jobs of that name (one, or none).
func (x jobIndex) named(namespace, name string) []*batchv1.Job {
	return x.byName[types.NamespacedName{Namespace: namespace, Name: name}]
}
