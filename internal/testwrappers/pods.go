package testwrappers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodWrapper wraps a Pod under construction, status included, as the kubelet would report it.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a Pod with one container named container, just created (Pending).
func MakePod(name, namespace, container string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: container + ":test"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

func (w *PodWrapper) Obj() *corev1.Pod { return &w.Pod }

// Clone returns a copy to change without touching this one.
func (w *PodWrapper) Clone() *PodWrapper { return &PodWrapper{*w.DeepCopy()} }

// Ready runs the pod, Ready, its container running, at ip.
func (w *PodWrapper) Ready(ip string) *PodWrapper {
	w.Status.Phase, w.Status.PodIP = corev1.PodRunning, ip
	w.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: w.Spec.Containers[0].Name, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	return w
}

// Terminated ends the pod's container with an exit code and reason (Completed, Error, OOMKilled).
func (w *PodWrapper) Terminated(exit int32, reason string) *PodWrapper {
	w.Status.Phase = corev1.PodSucceeded
	if exit != 0 {
		w.Status.Phase = corev1.PodFailed
	}
	w.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: w.Spec.Containers[0].Name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, FinishedAt: metav1.Now()}}}}
	return w
}

// TerminationMessage sets the ended container's termination message, as the kubelet fills it
// from the log's end with FallbackToLogsOnError.
func (w *PodWrapper) TerminationMessage(msg string) *PodWrapper {
	w.Status.ContainerStatuses[0].State.Terminated.Message = msg
	return w
}

// InitFailed ends the pod Failed in its init container, before the main container ran.
func (w *PodWrapper) InitFailed(container string, exit int32, message string) *PodWrapper {
	w.Status.Phase = corev1.PodFailed
	w.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", Message: message}}}}
	return w
}

// Evicted fails the pod with no container state, as an eviction or a lost node leaves it.
func (w *PodWrapper) Evicted(reason string) *PodWrapper {
	w.Status.Phase, w.Status.Reason = corev1.PodFailed, reason
	w.Status.ContainerStatuses = nil
	return w
}

// Unschedulable leaves the pod Pending with the scheduler's message.
func (w *PodWrapper) Unschedulable(message string) *PodWrapper {
	w.Status.Phase = corev1.PodPending
	w.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: message}}
	return w
}

// Waiting leaves the pod's container waiting with a kubelet reason (ErrImageNeverPull, …).
func (w *PodWrapper) Waiting(reason, message string) *PodWrapper {
	c := w.Spec.Containers[0]
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	return w
}

// JobWrapper wraps a Job under construction.
type JobWrapper struct{ batchv1.Job }

func MakeJob(name, namespace string) *JobWrapper {
	return &JobWrapper{batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

func (w *JobWrapper) Obj() *batchv1.Job { return &w.Job }

// Failed marks the Job Failed, as the Job controller does when its pod is gone for good.
func (w *JobWrapper) Failed(reason, message string) *JobWrapper {
	w.Status.Conditions = append(w.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message},
		batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message})
	return w
}
