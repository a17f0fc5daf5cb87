package inspect

import (
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// ActiveJob returns the name of the object's active runner Job, "" when it
// has none. Active is CAPTF's meaning: no true Complete or Failed
// condition. The controller checks the lock only when no Job is active.
func ActiveJob(jobs []*batchv1.Job, r object.Ref) string {
	var active []string
	for _, j := range jobs {
		if j.Namespace == r.Namespace && jobOf(j, r) && !finished(j) {
			active = append(active, j.Name)
		}
	}
	sort.Strings(active)
	if len(active) == 0 {
		return ""
	}
	return active[0]
}

// jobOf reads a Job's owner from its controller reference, falling back
// to CAPTF's owner labels (whose name is hashed when longer than 63).
func jobOf(j *batchv1.Job, r object.Ref) bool {
	if c := metav1.GetControllerOf(j); c != nil {
		gv, _ := schema.ParseGroupVersion(c.APIVersion)
		return gv.Group == object.Group && c.Kind == r.Kind.Name && c.Name == r.Name
	}
	name := r.Name
	if len(name) > 63 {
		name = object.ShortHash(name)
	}
	return j.Labels[LabelOwnerKind] == r.Kind.Name && j.Labels[LabelOwnerName] == name
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
