package queue

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// WorkloadName is the name of run's Workload: the one MultiKueue made for its copy of a
// dispatched run (named by Kueue's prebuilt-workload label), else the run's own.
func WorkloadName(run *v1alpha1.TestRun) string {
	if name := run.Labels[v1alpha1.PrebuiltWorkloadLabel]; name != "" {
		return name
	}
	return naming.Workload(run.Name)
}

// HandedToWorker says whether Kueue's MultiKueue has chosen a worker cluster for wl, the
// Workload of a dispatched run (spec.managedBy): from then on the worker's fleetbench runs the
// run and MultiKueue owns its status here. A Workload admitted or finished was handed over too
// (a worker is chosen before the manager's copy is admitted).
func HandedToWorker(wl *kueue.Workload) bool {
	conds := wl.Status.Conditions
	return wl.Status.ClusterName != nil || meta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted) ||
		meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished)
}

// PodSetsDiffer says how got, the pod sets of a Workload made by someone else (MultiKueue's
// copy of a dispatched run's Workload), differs from want, the ones the run would ask for
// itself: empty when they match in name, count and each pod's requests, which is all Kueue
// reserves quota by. Placement and the rest of the template are Kueue's to default.
func PodSetsDiffer(want, got []kueue.PodSet) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d pod sets, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Name != g.Name || w.Count != g.Count {
			return fmt.Sprintf("pod set %d is %s x%d, want %s x%d", i, g.Name, g.Count, w.Name, w.Count)
		}
		wr, gr := podRequests(&w.Template.Spec), podRequests(&g.Template.Spec)
		names := make([]corev1.ResourceName, 0, len(wr)+len(gr))
		for n := range wr {
			names = append(names, n)
		}
		for n := range gr {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range slices.Compact(names) {
			if a, b := wr[n], gr[n]; a.Cmp(b) != 0 {
				return fmt.Sprintf("pod set %s asks %s %s a pod, want %s", w.Name, b.String(), n, a.String())
			}
		}
	}
	return ""
}

// podRequests sums every request of spec's containers, init containers and overhead: not what
// the scheduler counts for a pod, but equal for pods that ask the same, which is all
// PodSetsDiffer needs.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(l corev1.ResourceList) {
		for n, q := range l {
			sum := out[n]
			sum.Add(q)
			out[n] = sum
		}
	}
	for _, c := range spec.InitContainers {
		add(c.Resources.Requests)
	}
	for _, c := range spec.Containers {
		add(c.Resources.Requests)
	}
	add(spec.Overhead)
	return out
}

// StartWorkload queues a ZoneStart (a zoned run's start of one zone, api/v1alpha1
// testrun_zones.go) in localQueue, the LocalQueue that dispatched its zone run: MultiKueue
// dispatches it to the same cluster. Its one pod asks for nothing, so it holds no quota; no
// pod is ever made for it. The caller makes the ZoneStart its controller.
func StartWorkload(zs *v1alpha1.ZoneStart, localQueue string) *kueue.Workload {
	start := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "start"}}}}
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: naming.Workload(zs.Name), Namespace: zs.Namespace,
			Labels: map[string]string{naming.LabelTestRun: naming.KeptRunLabel(zs.Spec.Run), naming.LabelRole: RoleWorkload}},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(localQueue), PodSets: []kueue.PodSet{{Name: "start", Count: 1, Template: start}}},
	}
}
