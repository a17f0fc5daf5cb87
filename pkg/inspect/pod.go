package inspect

import corev1 "k8s.io/api/core/v1"

// PodFact keeps what the verdict and the death evidence read of a pod: of
// a finished pod's status, its reason, message and each container's
// termination; nothing of a running one's.
func PodFact(p *corev1.Pod) *Pod {
	f := &Pod{Name: p.Name, Exists: true, Phase: p.Status.Phase, Terminating: p.DeletionTimestamp != nil, Node: p.Spec.NodeName}
	if f.Phase != corev1.PodSucceeded && f.Phase != corev1.PodFailed {
		return f
	}
	s := &corev1.PodStatus{Phase: p.Status.Phase, Reason: p.Status.Reason, Message: p.Status.Message}
	for _, c := range p.Status.ContainerStatuses {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name:                 c.Name,
			State:                corev1.ContainerState{Terminated: c.State.Terminated},
			LastTerminationState: corev1.ContainerState{Terminated: c.LastTerminationState.Terminated},
		})
	}
	f.Status = s
	return f
}

// MissingPod is a pod that is not there, marked Invalid when no pod can
// ever have that name.
func MissingPod(name string) *Pod {
	return &Pod{Name: name, Invalid: !ValidName(name)}
}
