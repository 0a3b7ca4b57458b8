package testrun

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
)

// The suite's control plane serves Kueue's Workload API (testenv.WithKueueCRDs); nothing runs
// Kueue there, so these tests play its admission by writing the Workload's status.

func workloadOf(t *testing.T, run *v1alpha1.TestRun) *kueue.Workload {
	t.Helper()
	wl := &kueue.Workload{}
	eventually(t, "the run's Workload", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.Workload(run.Name)}, wl)
	})
	return wl
}

// admitWorkload plays Kueue admitting wl in ClusterQueue cq on the ResourceFlavor default (made
// if missing: Kueue admits only on flavors that exist) for every pod set.
func admitWorkload(t *testing.T, wl *kueue.Workload) {
	t.Helper()
	if err := env.Client.Create(ctx, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	admitWorkloadOn(t, wl, func(kueue.PodSetReference) string { return "default" })
}

// admitWorkloadOn plays Kueue admitting wl in ClusterQueue cq, each pod set's cpu and memory on
// the flavor flavorOf names: quota reserved for every pod set, then Admitted, as Kueue's
// scheduler writes them.
func admitWorkloadOn(t *testing.T, wl *kueue.Workload, flavorOf func(kueue.PodSetReference) string) {
	t.Helper()
	eventually(t, "admitting the Workload", func() error {
		cur := &kueue.Workload{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
			return err
		}
		adm := &kueue.Admission{ClusterQueue: "cq"}
		for _, ps := range cur.Spec.PodSets {
			f := kueue.ResourceFlavorReference(flavorOf(ps.Name))
			adm.PodSetAssignments = append(adm.PodSetAssignments, kueue.PodSetAssignment{Name: ps.Name, Count: &ps.Count,
				Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: f, corev1.ResourceMemory: f}})
		}
		cur.Status.Admission = adm
		now := metav1.Now()
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "Quota reserved in ClusterQueue cq", LastTransitionTime: now})
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "The workload is admitted", LastTransitionTime: now})
		return env.Client.Status().Update(ctx, cur)
	})
}

// holdsNothing fails if the run has any Job (runner or pre-flight) or any target Deployment.
func holdsNothing(t *testing.T, run *v1alpha1.TestRun) {
	t.Helper()
	holdsNothingOn(t, env.Client, run)
}

// holdsNothingOn is holdsNothing on the control plane of c.
func holdsNothingOn(t *testing.T, c client.Client, run *v1alpha1.TestRun) {
	t.Helper()
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(run.Namespace)); err != nil {
		t.Fatal(err)
	}
	var ns corev1.Namespace
	err := c.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(run.Namespace, run.Name)}, &ns)
	if len(jobs.Items) != 0 || !apierrors.IsNotFound(err) {
		t.Fatalf("a queued run holds %d Jobs, target namespace: %v", len(jobs.Items), err)
	}
}

// TestQueuedRunHoldsNothingUntilAdmitted: a run naming a LocalQueue waits Queued with nothing
// that holds a pod (no pre-flight, no target, no runner) while its Workload asks for the whole
// fleet; admitted, it provisions and runs as any run; ended, its Workload is Finished so Kueue
// frees the quota.
func TestQueuedRunHoldsNothingUntilAdmitted(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("queued", ns).Parallelism(3).Devices(300, "10s").Duration("10s").Obj()
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	create(t, run)

	waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	holdsNothing(t, run)
	wl := workloadOf(t, run)
	if string(wl.Spec.QueueName) != "team-a" || !decide.ControlledBy(wl, run.UID) {
		t.Fatalf("Workload queue %q owners %+v", wl.Spec.QueueName, wl.OwnerReferences)
	}
	counts := map[kueue.PodSetReference]int32{}
	for _, ps := range wl.Spec.PodSets {
		counts[ps.Name] = ps.Count
	}
	if counts[queue.PodSetTarget] != 1 || counts[queue.PodSetRunners] != 3 || counts[queue.PodSetPreflight] != 1 || len(counts) != 3 {
		t.Fatalf("pod sets %v, want the target, 3 runners and the pre-flight", counts)
	}
	target := wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests
	if target.Cpu().Cmp(resource.MustParse("1")) != 0 || target.Memory().Cmp(resource.MustParse("512Mi")) != 0 {
		t.Errorf("the target's pod set asks %v, want the Profile c1 (1 CPU, 512Mi)", target)
	}
	// Still nothing after another look: a queued run's reconciles stop at the queue.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
		t.Fatal(err)
	}
	run.Annotations = map[string]string{"poke": "1"}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	holdsNothing(t, run)

	admitWorkload(t, wl)
	k := newKubelet(t, run)
	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	k.targetReady()
	pods := k.runnersReady(3)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonAdmitted {
		t.Errorf("Admitted condition %+v", c)
	}
	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
		k.Finish(pod, 0, "Completed")
	}
	waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	eventually(t, "the Workload Finished", func() error {
		cur := &kueue.Workload{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
			return err
		}
		if !queue.Read(cur).Finished {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		return nil
	})
}

// TestQueuedRunTimesOut: a run Kueue never admits ends Failed QueueTimeout at spec.queue.maxWait,
// having held nothing, and its Workload is Finished so it leaves the queue.
func TestQueuedRunTimesOut(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("never", ns).Obj()
	run.Labels = map[string]string{v1alpha1.QueueNameLabel: "team-a"} // Kueue's own label names the queue too
	run.Spec.Queue = &v1alpha1.QueueSpec{MaxWait: "2s"}
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonQueueTimeout)
	holdsNothing(t, got)
	wl := workloadOf(t, run)
	if string(wl.Spec.QueueName) != "team-a" {
		t.Errorf("queue %q, want the label's team-a", wl.Spec.QueueName)
	}
}

// TestEvictedRunStops: Kueue taking an admission back (preemption) ends the run Failed Evicted
// and stops it, as Kueue suspends a Job it evicts.
func TestEvictedRunStops(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("evicted", ns).Parallelism(2).Devices(300, "10s").Duration("10s").Obj()
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	create(t, run)
	wl := workloadOf(t, run)
	admitWorkload(t, wl)
	_, _ = startRunningQueued(t, run, 2)
	eventually(t, "evicting the Workload", func() error {
		cur := &kueue.Workload{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
			return err
		}
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: "Preempted", Message: "Preempted to accommodate a higher priority Workload", LastTransitionTime: metav1.Now()})
		return env.Client.Status().Update(ctx, cur)
	})
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonEvicted)
	if got.Status.Message == "" {
		t.Error("no message")
	}
}

// startRunningQueued plays the cluster of an admitted run until its n runners run.
func startRunningQueued(t *testing.T, run *v1alpha1.TestRun, n int) (*kubelet, []*corev1.Pod) {
	t.Helper()
	k := newKubelet(t, run)
	k.targetReady()
	pods := k.runnersReady(n)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	return k, pods
}

// TestUnqueuedRunMakesNoWorkload: with Kueue installed, a run naming no queue goes on as before.
func TestUnqueuedRunMakesNoWorkload(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("plain", ns).Obj()
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	var list kueue.WorkloadList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 || meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted) != nil {
		t.Fatalf("%d Workloads, Admitted %+v", len(list.Items), meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted))
	}
}

// TestWithoutKueueAQueueChangesNothing: on a control plane without Kueue's CRDs the manager
// starts, and a run naming a queue provisions at once, saying the queue was not used.
func TestWithoutKueueAQueueChangesNothing(t *testing.T) {
	const ns = "team-a"
	e := ownControlPlane(t, namespaceAndProfile(ns))
	c := e.Client
	startOwnManager(t, e, func(_ *runenv.Options, kueue bool) error {
		if kueue {
			return fmt.Errorf("controller.KueueServed said Kueue is served on a control plane without its CRDs")
		}
		return nil
	})
	run := tw.MakeTestRun("load", ns).Obj()
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	k := newKubeletOn(t, c, run, naming.TargetNamespace(ns, run.Name))
	got := waitPhaseOn(t, c, run, v1alpha1.PhaseProvisioning, "")
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted)
	if cond == nil || cond.Reason != v1alpha1.ReasonKueueNotInstalled {
		t.Errorf("Admitted %+v, want reason KueueNotInstalled", cond)
	}
	k.targetReady()
	k.runnersReady(1)
	waitPhaseOn(t, c, run, v1alpha1.PhaseRunning, "")
}
