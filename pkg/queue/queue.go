// Package queue builds the Kueue Workload that admits a TestRun as one unit (spec.queue) and
// reads Kueue's answer from it. Kueue's job framework (sigs.k8s.io/kueue/pkg/controller/
// jobframework) is the integration its docs recommend, but it does not build against this
// module's Kubernetes libraries (its imports pull kubeflow's trainer, which needs an older
// k8s.io/api); so the controller does what the framework's reconciler does for a job, on the
// Workload API Kueue serves (kueue.x-k8s.io/v1beta2): one Workload per run, owned by it, with
// a pod set per kind of pod, admitted by Kueue, finished by the owner when the run ends.
// Everything here is pure.
package queue

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue/place"
)

// Pod set names of a run's Workload.
const (
	PodSetTarget    = "target"
	PodSetRunners   = "runners"
	PodSetPreflight = "preflight"
)

// DefaultMaxWait bounds the wait in Queued when spec.queue.maxWait is unset.
const DefaultMaxWait = 24 * time.Hour

// Name is the LocalQueue the run names: spec.queue.localQueue, else Kueue's queue-name label
// on the TestRun. Empty: the run is not queued.
func Name(run *v1alpha1.TestRun) string {
	if q := run.Spec.Queue; q != nil && q.LocalQueue != "" {
		return q.LocalQueue
	}
	return run.Labels[v1alpha1.QueueNameLabel]
}

// MaxWait is spec.queue.maxWait, or DefaultMaxWait.
func MaxWait(run *v1alpha1.TestRun) time.Duration {
	if q := run.Spec.Queue; q != nil && q.MaxWait != "" {
		if d, err := time.ParseDuration(string(q.MaxWait)); err == nil && d > 0 {
			return d
		}
	}
	return DefaultMaxWait
}

// Fleet is what a run holds once admitted, as pod templates: Kueue counts each pod set's
// requests times its count against the ClusterQueue's quota.
type Fleet struct {
	// Target is the provisioned target's size (the Profile snapshot); nil for an external one.
	Target *v1alpha1.ProfileSnapshotSpec
	// Runner is one runner's pod spec as the runner Jobs are built; Runners how many.
	Runner  corev1.PodSpec
	Runners int32
	// Preflight is the pre-flight's pod spec; nil when none will run.
	Preflight *corev1.PodSpec
}

// PodSets are the Workload's pod sets: the target as one pod of the Profile's size (the
// quota of its namespace caps it there), every runner, and the pre-flight.
func PodSets(f Fleet) []kueue.PodSet {
	var sets []kueue.PodSet
	if f.Target != nil {
		sets = append(sets, kueue.PodSet{Name: PodSetTarget, Count: 1, Template: targetTemplate(f.Target)})
	}
	sets = append(sets, kueue.PodSet{Name: PodSetRunners, Count: f.Runners, Template: corev1.PodTemplateSpec{Spec: sizeOnly(f.Runner)}})
	if f.Preflight != nil {
		sets = append(sets, kueue.PodSet{Name: PodSetPreflight, Count: 1, Template: corev1.PodTemplateSpec{Spec: sizeOnly(*f.Preflight)}})
	}
	return sets
}

// targetTemplate is one pod requesting the whole Profile, placed where the Profile places it.
func targetTemplate(p *v1alpha1.ProfileSnapshotSpec) corev1.PodTemplateSpec {
	list := corev1.ResourceList{corev1.ResourceCPU: p.CPU, corev1.ResourceMemory: p.Memory}
	if p.EphemeralStorage != nil {
		list[corev1.ResourceEphemeralStorage] = *p.EphemeralStorage
	}
	for name, q := range p.ExtendedResources {
		list[name] = q
	}
	spec := corev1.PodSpec{
		Containers:   []corev1.Container{{Name: PodSetTarget, Resources: corev1.ResourceRequirements{Requests: list, Limits: list}}},
		NodeSelector: p.NodeSelector,
	}
	for _, t := range p.Tolerations {
		spec.Tolerations = append(spec.Tolerations, place.Toleration(t))
	}
	return corev1.PodTemplateSpec{Spec: spec}
}

// sizeOnly keeps of a pod spec what Kueue sizes and places it by: each container's name and
// resources (init containers with their restart policy, which makes a sidecar count), the
// pod's own resources and overhead, and its node placement. Nothing else of the runner (its
// script, environment, secrets) is copied into the Workload.
func sizeOnly(p corev1.PodSpec) corev1.PodSpec {
	out := corev1.PodSpec{NodeSelector: p.NodeSelector, Tolerations: p.Tolerations, Overhead: p.Overhead, Resources: p.Resources}
	for _, c := range p.InitContainers {
		out.InitContainers = append(out.InitContainers, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
	}
	for _, c := range p.Containers {
		out.Containers = append(out.Containers, corev1.Container{Name: c.Name, Resources: c.Resources})
	}
	if a := p.Affinity; a != nil && a.NodeAffinity != nil {
		out.Affinity = &corev1.Affinity{NodeAffinity: a.NodeAffinity}
	}
	return out
}

// Workload is the run's Workload in its namespace, queued in the LocalQueue named; the
// caller makes the TestRun its controller.
func Workload(run *v1alpha1.TestRun, localQueue string, sets []kueue.PodSet) *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: naming.Workload(run.Name), Namespace: run.Namespace,
			Labels: map[string]string{naming.LabelTestRun: naming.KeptRunLabel(run.Name), naming.LabelRole: RoleWorkload}},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(localQueue), PodSets: sets},
	}
}

// RoleWorkload is the fleetbench.dev/role of a run's Workload.
const RoleWorkload = "workload"

// State is what Kueue said of a Workload.
type State struct {
	// Admitted: quota reserved and every admission check passed; ClusterQueue admitted it.
	Admitted     bool
	ClusterQueue string
	// Evicted: Kueue took the admission back (preemption, deactivation, a stopped queue);
	// Reason and Message say why, from its Evicted condition.
	Evicted bool
	// Finished: the owner said it ended (Finish); its quota is free.
	Finished bool
	// Pending is why it is not admitted yet, from Kueue's QuotaReserved condition.
	Pending         string
	Reason, Message string
}

// Read is the State of wl.
func Read(wl *kueue.Workload) State {
	conds := wl.Status.Conditions
	st := State{
		Admitted: meta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted),
		Finished: meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished),
		Pending:  "not seen by Kueue yet (is the LocalQueue there? kubectl get localqueue)",
	}
	if wl.Status.Admission != nil {
		st.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
	}
	if c := meta.FindStatusCondition(conds, kueue.WorkloadQuotaReserved); c != nil && c.Message != "" {
		st.Pending = c.Message
	}
	if c := meta.FindStatusCondition(conds, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		st.Evicted, st.Reason, st.Message = true, c.Reason, c.Message
	}
	return st
}

// Finish is wl marked Finished, as Kueue's job framework marks the Workload of a job that
// ended (workload.Finish): Kueue then frees its quota. reason is the run's; wl is not changed.
func Finish(wl *kueue.Workload, reason, message string, now metav1.Time) *kueue.Workload {
	if reason == "" {
		reason = "Ended"
	}
	out := wl.DeepCopy()
	meta.SetStatusCondition(&out.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: now, ObservedGeneration: wl.Generation})
	return out
}
