package inspect

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A finished pod keeps what its death is told from, and nothing else.
func TestPodFactKeepsTheDeath(t *testing.T) {
	p := pod("default", demoPod, corev1.PodFailed, true)
	p.Spec.NodeName = "node-1"
	p.Status.Reason, p.Status.Message = "Evicted", "low on memory"
	term := &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9, Reason: "OOMKilled", FinishedAt: metav1.Now()}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runner", Image: "x", State: corev1.ContainerState{Terminated: term}}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady}}
	f := PodFact(p)
	d := podDeath(f)
	full := &Pod{Name: p.Name, Exists: true, Phase: p.Status.Phase, Node: "node-1", Status: &p.Status}
	if !reflect.DeepEqual(d, podDeath(full)) {
		t.Errorf("death %+v, from the whole status %+v", d, podDeath(full))
	}
	if f.Status.Conditions != nil || f.Status.ContainerStatuses[0].Image != "" {
		t.Errorf("kept more than the death needs: %+v", f.Status)
	}
	if running := PodFact(pod("default", demoPod, corev1.PodRunning, true)); running.Status != nil {
		t.Errorf("a running pod keeps its status")
	}
}
