package inspect

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
)

// runnerJob is the Job name of demo's, op op, failed with reason (""
// for none) and given args, as CAPTF's spec.go passes them.
func runnerJob(name, reason string, args ...string) *batchv1.Job {
	j := job("default", name, demo, true)
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason}}
	j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "source", Args: append([]string{"--op=drift", "--image=registry.example/mod:1"}, args...)}}
	return j
}

// review26d M1, review26e M1: a drift Job whose image does not pull ends
// at its deadline, and bookkeeping then rewrites DriftJobSucceeded from it
// (DriftJobDeadlineExceeded), so no condition says ImagePullFailed any
// more. A failed Job that CAPTF created to force-unlock this lock (its
// --force-unlock argument), with the lock still held, says that its Jobs
// have not cleared it. A Job without the argument, one of another lock,
// one still running or one of an earlier object says nothing.
func TestAJobThatEndedWithoutClearingIsEvidence(t *testing.T) {
	drift := "captf-c-demo-drift-a1-bbbbbb"
	forced := FlagForceUnlock + lockID
	cases := []struct {
		name    string
		objects []runtime.Object
		want    StaleCase
		says    string
	}{
		{"a drift Job given the force-unlock, at its deadline", []runtime.Object{runnerJob(drift, "DeadlineExceeded", forced)},
			StaleTried, "its drift Job " + drift + ", running registry.example/mod:1, which CAPTF created to force-unlock it (--force-unlock=" + lockID + "), failed (DeadlineExceeded) and the lock is still held"},
		{"a Job given the force-unlock, failed for another reason", []runtime.Object{runnerJob(drift, "BackoffLimitExceeded", forced)},
			StaleTried, "failed (BackoffLimitExceeded)"},
		{"a hostile reason is cut", []runtime.Object{runnerJob(drift, strings.Repeat("x", 1000), forced)},
			StaleTried, "failed (" + strings.Repeat("x", maxReason) + "…)"},
		{"a hostile image is cut", []runtime.Object{func() *batchv1.Job {
			j := runnerJob(drift, "DeadlineExceeded", forced)
			j.Spec.Template.Spec.Containers[0].Args[1] = FlagImage + strings.Repeat("i", 100000)
			return j
		}()},
			StaleTried, ", running " + strings.Repeat("i", maxImage) + "…, which CAPTF created"},
		{"a Job created while the holder still ran: no force-unlock", []runtime.Object{runnerJob(drift, "DeadlineExceeded")},
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job that force-unlocked another lock", []runtime.Object{runnerJob(drift, "DeadlineExceeded", FlagForceUnlock+"0000")},
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job given the force-unlock that completed", []runtime.Object{func() *batchv1.Job {
			j := runnerJob(drift, "", forced)
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			return j
		}()}, StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job given the force-unlock still running", []runtime.Object{func() *batchv1.Job {
			j := runnerJob(drift, "", forced)
			j.Status.Conditions = nil
			return j
		}()}, StaleClears, "CAPTF clears it with the object's next Job"},
		{"a Job of an earlier object of the same name", []runtime.Object{func() *batchv1.Job {
			j := runnerJob(drift, "DeadlineExceeded", forced)
			j.OwnerReferences[0].UID = "earlier"
			return j
		}()}, StaleClears, "CAPTF clears it with the object's next Job"},
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
	c := newCluster([]runtime.Object{held(demo, "root@"+demoPod), runnerJob("captf-c-demo-drift-a1-bbbbbb", "DeadlineExceeded", FlagForceUnlock+lockID)}, demo)
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
	if !strings.HasSuffix(got, fmt.Sprintf("-part-%d, and 2 more", maxNames)) || strings.Count(got, "tfstate-default-") != maxNames {
		t.Errorf("Chunked = %q, want %d names and \"and 2 more\"", got, maxNames)
	}
	if got := rt.secretNames(); strings.Count(got, ", ") != maxNames || !strings.HasSuffix(got, ", and 2 more") {
		t.Errorf("secretNames = %q", got)
	}
	rt.BackendLabels = map[string]string{"x": "y"}
	if got := rt.Relabeled(); strings.Count(got, "tfstate-default-") != maxNames || !strings.HasSuffix(got, "; and 2 more") {
		t.Errorf("Relabeled = %q", got)
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

// review26d m4: CAPTF checks its state Secrets for an earlier object's
// retained-from-uid label before anything its read finds, the names'
// hold included: such a Secret is RetainedStateFound, no Job, unless
// spec.adoptRetainedState; the object's own uid on it is no retention.
func TestARetainedStateSecretComesFirst(t *testing.T) {
	retained := func(uid string) *corev1.Secret {
		s := stateSecret(demo)
		s.Labels[jobgate.RetainedLabel] = uid
		return s
	}
	adopting := withConditions([3]string{"StateReadable", "True", "StateRead"})
	adopting.Object["spec"].(map[string]any)["adoptRetainedState"] = true
	for _, c := range []struct {
		name    string
		objects []runtime.Object
		u       func() *unstructured.Unstructured
		want    StaleCase
		says    string
	}{
		{"an earlier object's uid", []runtime.Object{retained("uid-earlier")}, func() *unstructured.Unstructured {
			return withConditions([3]string{"StateReadable", "True", "StateRead"})
		},
			StaleGateClosed, "a state Secret carries captf.io/retained-from-uid=uid-earlier, an earlier object's: CAPTF's next read of its state finds it before anything else (checkRetained) and writes StateReadable False/RetainedStateFound: no Job starts, not even a restore"},
		{"before the names' hold", []runtime.Object{retained("uid-earlier"), chunk(demo, "2")}, func() *unstructured.Unstructured {
			return withConditions([3]string{"StateReadable", "True", "StateRead"})
		},
			StaleGateClosed, "RetainedStateFound: no Job starts, not even a restore"},
		{"adopted", []runtime.Object{retained("uid-earlier")}, func() *unstructured.Unstructured { return adopting },
			StaleClears, "CAPTF clears it with the object's next Job"},
		{"its own uid", []runtime.Object{retained(string(uidOf(demo)))}, func() *unstructured.Unstructured {
			return withConditions([3]string{"StateReadable", "True", "StateRead"})
		},
			StaleClears, "CAPTF clears it with the object's next Job"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClusterFull(append([]runtime.Object{held(demo, "root@"+demoPod)}, c.objects...), c.u()).only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != c.want || r.Decision.CAPTFClears != (c.want == StaleClears) {
				t.Errorf("case %v (captfClears %v), want %v: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, c.want, r.Decision.Reason)
			}
		})
	}
}

// review26f m2, m3: a deleting object's retained Secrets are its inputs
// Secrets too, and with no state its backups (checkRetained, retain.go
// at 665f88bbb7e5f92cc5a32fd15406517769c0e98a); CAPTF reads them after a
// policy that does not resolve and before what the policy decides
// (reconcile.go run, at ade7dc79d93b624f3a23cffb2e55f6487a315ab7): a
// release, no Job, whatever the policy resolves to.
func TestADeletionFindsRetainedInputsAndBackups(t *testing.T) {
	const earlier = "uid-earlier"
	durable, _ := jobgate.InputsSecrets(demo.Kind.Code, demo.Name)
	labeled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: demo.Namespace, Name: durable, Labels: map[string]string{jobgate.RetainedLabel: earlier}}}
	backup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: demo.Namespace, Name: "backup-1", Labels: map[string]string{
		jobgate.BackupLabel: "true", jobgate.BackupSuffixLabel: demo.Suffix(), jobgate.RetainedLabel: earlier}}}
	deletingWith := func(policy string) *unstructured.Unstructured {
		now := metav1.NewTime(created)
		u := full(demo, nil)
		u.SetDeletionTimestamp(&now)
		u.SetFinalizers([]string{"terraformcluster.infrastructure.cluster.x-k8s.io"})
		if policy != "" {
			_ = unstructured.SetNestedField(u.Object, policy, "spec", "deletionPolicy")
		}
		return u
	}
	for _, c := range []struct {
		name    string
		objects []runtime.Object
		policy  string
		says    string
	}{
		{"the durable Secret, under Destroy", []runtime.Object{stateSecret(demo), labeled}, "Destroy",
			"the durable inputs Secret carries captf.io/retained-from-uid=uid-earlier, an earlier object's"},
		{"the durable Secret, under Retain", []runtime.Object{stateSecret(demo), labeled}, "Retain",
			"it releases the object without a Job and without touching the Lease"},
		{"a backup, no state", []runtime.Object{backup}, "Destroy",
			"a state backup Secret carries captf.io/retained-from-uid=uid-earlier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClusterFull(append([]runtime.Object{held(demo, "root@"+demoPod)}, c.objects...), deletingWith(c.policy)).only(t)
			want(t, r, v1alpha1.Stale, c.says)
			if r.Decision.StaleCase != StaleGateClosed || r.Decision.CAPTFClears || r.Facts.Gate == nil || !r.Facts.Gate.Releases || r.Facts.Gate.Deletes != nil {
				t.Errorf("case %v (captfClears %v), want a release without a Job: %s", r.Decision.StaleCase, r.Decision.CAPTFClears, r.Decision.Reason)
			}
		})
	}
	// A backup is read only when there is no state.
	r := newClusterFull([]runtime.Object{held(demo, "root@"+demoPod), stateSecret(demo), backup, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: demo.Namespace, Name: durable}}}, deletingWith("Destroy")).only(t)
	if !r.Decision.CAPTFClears {
		t.Errorf("with state, a retained backup is not read: the destroy Job clears it: %s", r.Decision.Reason)
	}
}
