package inspect

import (
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
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

// ownJobs are the Jobs CAPTF counts as the object's (jobs/list.go
// clientRunner.List, at c17d41803a622de4dd8491031b1a6066070bbc50): those
// carrying its owner-kind and owner-name labels whose controller owner
// reference is the object, by UID (metav1.IsControlledBy), so that a Job
// of an earlier object of the same name is not counted. The plugin's list
// already holds only Jobs labelled captf.io/managed=true, which CAPTF's
// Job cache requires (internal/manager/cache.go jobSelector, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517). uid must be known.
func ownJobs(jobs []*batchv1.Job, r object.Ref, uid types.UID) []*batchv1.Job {
	name := ownerLabel(r)
	var out []*batchv1.Job
	for _, j := range jobs {
		if j.Namespace != r.Namespace || j.Labels[LabelOwnerKind] != r.Kind.Name || j.Labels[LabelOwnerName] != name {
			continue
		}
		if c := metav1.GetControllerOfNoCopy(j); c == nil || c.UID != uid {
			continue
		}
		out = append(out, j)
	}
	return out
}

// ActiveJob returns the object's active runner Job as CAPTF picks it
// (jobs.Active): of the object's own Jobs (ownJobs), the newest by
// creationTimestamp that has neither a true Complete nor a true Failed
// condition, the first listed on a tie. nil when there is none, or when
// uid is unknown: then which Jobs are the object's cannot be told. The
// controller checks the lock only when there is none.
func ActiveJob(jobs []*batchv1.Job, r object.Ref, uid types.UID) *Job {
	if uid == "" {
		return nil
	}
	newest := activeOf(ownJobs(jobs, r, uid))
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

func activeOf(jobs []*batchv1.Job) *batchv1.Job {
	var newest *batchv1.Job
	for _, j := range jobs {
		if finished(j) {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&j.CreationTimestamp) {
			newest = j
		}
	}
	return newest
}

// jobFacts are what the gates read of an object's own Jobs, as CAPTF's
// bookkeeping reads them (bookkeeping.go Bookkeep and applyDestroy, at
// 81a0ff422f986130946f62ca8e093aeff3e5fc2c; reconcile.go
// lastApplySucceeded, at 99fd973d5e3cc29b95dce3c83e8a571f019a7597): the
// active one; whether the newest finished apply or destroy Job is a
// destroy that succeeded, a failed plan newer than both counting as the
// newest (DestroySucceeded); and when the newest finished apply Job
// finished, if it succeeded (nil when it failed or none is kept).
func jobFacts(jobs []*batchv1.Job) (active string, destroyed bool, lastApply *time.Time) {
	if a := activeOf(jobs); a != nil {
		active = a.Name
	}
	done := finishedNewestFirst(jobs)
	var newest, apply *batchv1.Job
	planSeen := false
	for _, j := range done {
		switch op := opOf(j); {
		case op == "plan" && !planSeen:
			planSeen = true
			if !succeeded(j) && newest == nil {
				newest = j
			}
		case op == "apply" || op == "destroy":
			if newest == nil {
				newest, destroyed = j, op == "destroy" && succeeded(j)
			}
			if op == "apply" && apply == nil {
				apply = j
			}
		}
	}
	if apply != nil && succeeded(apply) {
		at, _ := finishedAt(apply)
		lastApply = &at
	}
	return active, destroyed, lastApply
}

// finishedNewestFirst are the finished Jobs of jobs, the newest first
// (by finishedAt, then by name, descending), as CAPTF's bookkeeping
// orders them.
func finishedNewestFirst(jobs []*batchv1.Job) []*batchv1.Job {
	var done []*batchv1.Job
	for _, j := range jobs {
		if _, ok := finishedAt(j); ok {
			done = append(done, j)
		}
	}
	slices.SortStableFunc(done, func(a, b *batchv1.Job) int {
		ta, _ := finishedAt(a)
		tb, _ := finishedAt(b)
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	return done
}

// UnbookkeptApply is whether the object u, whose own Jobs (ownJobs) are
// own, has an apply Job CAPTF's bookkeeping has not read yet: a finished
// one without jobgate.BookkeptAnnotation, or the apply Job its
// status.activeJob names that is gone (preamble.go unbookkeptApply, at
// 81a0ff422f986130946f62ca8e093aeff3e5fc2c). While one is there, CAPTF's
// preamble never releases an ownerless deletion. It fills
// jobgate.Env.UnbookkeptApply.
func UnbookkeptApply(own []*batchv1.Job, u *unstructured.Unstructured) bool {
	for _, j := range own {
		if opOf(j) == "apply" && finished(j) && j.Annotations[jobgate.BookkeptAnnotation] != "true" {
			return true
		}
	}
	name, _, _ := unstructured.NestedString(u.Object, "status", "activeJob", "name")
	op, _, _ := unstructured.NestedString(u.Object, "status", "activeJob", "operation")
	return name != "" && op == "apply" && !slices.ContainsFunc(own, func(j *batchv1.Job) bool { return j.Name == name })
}

// opOf is a Job's op: its op label, else from its name.
func opOf(j *batchv1.Job) string {
	if op := j.Labels[LabelOp]; op != "" {
		return op
	}
	p, _ := runner.ParseJobName(j.Name)
	return p.Op
}

// finishedAt is when a Job reached its terminal condition (jobs.FinishedAt).
func finishedAt(j *batchv1.Job) (time.Time, bool) {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			switch {
			case !c.LastTransitionTime.IsZero():
				return c.LastTransitionTime.Time, true
			case j.Status.CompletionTime != nil:
				return j.Status.CompletionTime.Time, true
			}
			return j.CreationTimestamp.Time, true
		}
	}
	return time.Time{}, false
}

// succeeded is whether a finished Job succeeded; a plan Job CAPTF
// found without a readable plan counts as failed
// (PlanUnreadableAnnotation).
func succeeded(j *batchv1.Job) bool {
	if j.Annotations["captf.io/plan-unreadable"] == "true" {
		return false
	}
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			switch c.Type {
			case batchv1.JobComplete:
				return true
			case batchv1.JobFailed:
				return false
			}
		}
	}
	return false
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

// TriedJob is a Job of the object's that CAPTF started to force-unlock
// the lock, and that failed while the lock is still held.
type TriedJob struct {
	Name, Op string
	// Image is the module image it ran (its runner's --image), cut to
	// maxImage, "" when not recorded.
	Image string
	// Outcome is how it ended: "failed", with its Failed condition's
	// reason, cut to maxReason, in parentheses.
	Outcome string
}

// Runner flags CAPTF passes in the Job's container args
// (internal/jobs/spec.go args, at d6986f4646de003dbde2b12ec279505307a1b667;
// internal/jobs/testdata/apply-force-unlock.yaml, at
// 07c8c1e0ba04add1241dc3ba4845a7facfb6a4bb): the lock ID the Job's
// force-unlock step is given, and the module image it runs.
const (
	FlagForceUnlock = "--force-unlock="
	FlagImage       = "--image="
)

// maxReason bounds the Failed reason a reason quotes: the Job
// controller's are a word, and anyone who may write a Job's status can
// write any. maxImage bounds the image it quotes the same way: an image
// reference's name is at most 255 characters (the distribution spec),
// and anyone who may create a Job may write a longer one (review26f m1).
const (
	maxReason = 64
	maxImage  = 255
)

// cut is s, cut to at most n runes, an ellipsis marking a cut.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// runnerArg is the value of the first container arg of j that begins
// with flag, "" for none.
func runnerArg(j *batchv1.Job, flag string) string {
	for _, c := range j.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, flag); ok {
				return v
			}
		}
	}
	return ""
}

// triedJob is the newest Job of own, the object's own Jobs, that CAPTF
// created to force-unlock the lock id (its --force-unlock argument is id)
// and that failed, the lock still held. CAPTF passes the argument only to
// a Job it creates while the holder's pod is gone or finished
// (bookkeeping.go checkLock, at 148aa21efa139ad15203df93fb94de9c6b88260e;
// spec.go args), and the runner runs init, then force-unlock -force <id>
// (internal/runner/plan.go Steps, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517), so such a Job with the same
// lock still held never cleared it: its pod did not reach that step (an
// image that does not pull: the drift Jobs' at their deadline, after
// which bookkeeping rewrites DriftJobSucceeded from the finished Job,
// setDriftJob), or the step did not clear it: it failed, or passed as
// CAPTF's runner counts success ("does not match existing lock") while
// the runtime reads another ID (review26f n2). Lock IDs are not reused. A Job
// without the argument (one created while the holder's pod still ran)
// says nothing of the force-unlock. nil for none.
func triedJob(own []*batchv1.Job, id string) *TriedJob {
	if id == "" {
		return nil
	}
	for _, j := range finishedNewestFirst(own) {
		if runnerArg(j, FlagForceUnlock) != id {
			continue
		}
		for _, c := range j.Status.Conditions {
			if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue {
				continue
			}
			t := &TriedJob{Name: j.Name, Op: opOf(j), Image: cut(runnerArg(j, FlagImage), maxImage), Outcome: "failed"}
			if c.Reason != "" {
				t.Outcome += " (" + cut(c.Reason, maxReason) + ")"
			}
			return t
		}
	}
	return nil
}
