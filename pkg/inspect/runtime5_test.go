package inspect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// createdAt is j created at t.
func createdAt(j *batchv1.Job, t time.Time) *batchv1.Job {
	j.CreationTimestamp = metav1.NewTime(t)
	return j
}

// deadlineExceeded is j failed at its activeDeadlineSeconds, as the Job
// controller records it.
func deadlineExceeded(j *batchv1.Job) *batchv1.Job {
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", LastTransitionTime: j.CreationTimestamp}}
	return j
}

// review26d M1: a drift Job whose image does not pull ends at its
// deadline, and bookkeeping then rewrites DriftJobSucceeded from it
// (DriftJobDeadlineExceeded), so no condition says ImagePullFailed any
// more. The finished Job, started after the holder's with the lock still
// held, says that CAPTF's Jobs do not clear it.
func TestAJobThatEndedWithoutClearingIsEvidence(t *testing.T) {
	holderJob := strings.TrimSuffix(demoPod, "-x7k2p")
	drift := "captf-c-demo-drift-a1-bbbbbb"
	cases := []struct {
		name    string
		objects []runtime.Object
		want    StaleCase
		says    string
	}{
		{"a drift Job after the holder's, at its deadline",
			[]runtime.Object{createdAt(job("default", holderJob, demo, true), created.Add(-time.Minute)), deadlineExceeded(createdAt(job("default", drift, demo, true), created.Add(time.Hour)))},
			StaleTried, "its drift Job " + drift + ", which CAPTF started after the holder's Job, has failed (DeadlineExceeded) and the lock is still held, so that Job's force-unlock -force " + lockID + " did not clear it"},
		{"the holder's Job pruned: the lock's Created stands in",
			[]runtime.Object{deadlineExceeded(createdAt(job("default", drift, demo, true), created.Add(time.Hour)))},
			StaleTried, "has failed (DeadlineExceeded)"},
		{"the holder's Job pruned, a Job within the clock skew of Created",
			[]runtime.Object{deadlineExceeded(createdAt(job("default", drift, demo, true), created.Add(clockSkew/2)))},
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"a finished Job older than the holder's",
			[]runtime.Object{createdAt(job("default", holderJob, demo, true), created.Add(-time.Minute)), deadlineExceeded(createdAt(job("default", drift, demo, true), created.Add(-time.Hour)))},
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job after the holder's still running",
			[]runtime.Object{createdAt(job("default", holderJob, demo, true), created.Add(-time.Minute)), createdAt(job("default", drift, demo, false), created.Add(time.Hour))},
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job after the holder's of an earlier object of the same name",
			[]runtime.Object{createdAt(job("default", holderJob, demo, true), created.Add(-time.Minute)), func() *batchv1.Job {
				j := deadlineExceeded(createdAt(job("default", drift, demo, true), created.Add(time.Hour)))
				j.OwnerReferences[0].UID = "earlier"
				return j
			}()},
			StaleClears, "CAPTF clears it with the object's next Job"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newCluster(append([]runtime.Object{held(demo, "root@"+demoPod)}, c.objects...), demo).only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != c.want || r.Decision.CAPTFClears != (c.want == StaleClears) {
				t.Errorf("case %v (captfClears %v), want %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, c.want, r.Decision.Reason)
			}
		})
	}
}

// The Jobs unread, nothing is claimed of them.
func TestTriedNeedsTheJobs(t *testing.T) {
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod), deadlineExceeded(createdAt(job("default", "captf-c-demo-drift-a1-bbbbbb", demo, true), created.Add(time.Hour)))}, demo)
	c.jobsErr = errors.New("jobs is forbidden")
	r := c.only(t)
	if r.Decision.StaleCase == StaleTried || r.Facts.Runtime.Tried != nil {
		t.Errorf("case %v with the Jobs unread: %s", r.Decision.StaleCase, r.Decision.Reason)
	}
}

// review26d m5: a reason lists at most maxNames state Secrets, however
// many carry the state labels.
func TestReasonsListAFewSecretNames(t *testing.T) {
	var rt Runtime
	for n := 1; n <= maxNames+2; n++ {
		rt.Secrets = append(rt.Secrets, metav1.ObjectMeta{Name: fmt.Sprintf("tfstate-default-%s-part-%d", demo.Suffix(), n)})
	}
	got := rt.Chunked(demo.Suffix())
	if !strings.HasSuffix(got, fmt.Sprintf("-part-%d and 2 more", maxNames)) || strings.Count(got, "tfstate-default-") != maxNames {
		t.Errorf("Chunked = %q, want %d names and \"and 2 more\"", got, maxNames)
	}
	if got := rt.secretNames(); strings.Count(got, ", ") != maxNames-1 || !strings.HasSuffix(got, " and 2 more") {
		t.Errorf("secretNames = %q", got)
	}
}

// review26d m1: an unnamed next Job counts as a drift Job only for a live
// object, and the text says that which Job is next is not known.
func TestAnUnnamedNextJobIsADriftJobOnlyWhileLive(t *testing.T) {
	live := Runtime{DriftNoSteps: "False/ImagePullFailed"}
	if got := live.NoStepsText(""); !strings.Contains(got, "whether its next Job is one of them is not known") {
		t.Errorf("live, unnamed next: %q", got)
	}
	deleting := live
	deleting.Deleting = true
	if got := deleting.Blocked(""); got != "" {
		t.Errorf("deleting, unnamed next: Blocked = %q, want none (a deletion runs no drift Job)", got)
	}
	if got := deleting.Blocked(jobgate.OpRefresh); got == "" {
		t.Error("a refresh named next is stopped on a deletion too")
	}
}
