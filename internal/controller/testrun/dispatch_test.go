package testrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/queue"
)

// These tests play Kueue's MultiKueue on one control plane: the manager cluster's namespace
// and the worker's are two namespaces of it, and the test copies what MultiKueue copies.

// dispatched is a run Kueue's MultiKueue is to dispatch through LocalQueue zone-x.
func dispatched(name, ns string) *v1alpha1.TestRun {
	run := tw.MakeTestRun(name, ns).Parallelism(2).Devices(200, "10s").Duration("10s").Obj()
	run.Spec.ManagedBy = v1alpha1.ManagedByMultiKueue
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "zone-x"}
	return run
}

// TestDispatchedRunIsOnlyQueuedHere: in the manager cluster a dispatched run only gets its
// Workload (the whole fleet, as any queued run) and waits Queued holding nothing, with no
// finalizer; once Kueue names its worker cluster the run is annotated with it, its status
// (MultiKueue's copy of the worker's) is never written here, and its TTL still applies.
func TestDispatchedRunIsOnlyQueuedHere(t *testing.T) {
	ns := setup(t)
	run := dispatched("home", ns)
	run.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	create(t, run)

	got := waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	if !strings.Contains(got.Status.Message, "dispatch the run to a worker cluster") {
		t.Errorf("message %q does not say the run waits to be dispatched", got.Status.Message)
	}
	if len(got.Finalizers) != 0 {
		t.Errorf("finalizers %v on a run that provisions nothing here", got.Finalizers)
	}
	holdsNothing(t, run)
	wl := workloadOf(t, run)
	counts := map[kueue.PodSetReference]int32{}
	for _, ps := range wl.Spec.PodSets {
		counts[ps.Name] = ps.Count
	}
	if counts[queue.PodSetTarget] != 1 || counts[queue.PodSetRunners] != 2 || counts[queue.PodSetPreflight] != 1 {
		t.Fatalf("pod sets %v, want the target, 2 runners and the pre-flight", counts)
	}

	// Kueue's MultiKueue picks the worker, reserves quota there and admits the run.
	eventually(t, "the worker named in the Workload", func() error {
		cur := &kueue.Workload{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
			return err
		}
		cur.Status.ClusterName = ptr.To("worker-1")
		return env.Client.Status().Update(ctx, cur)
	})
	eventually(t, "the run annotated with its worker", func() error {
		cur := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
			return err
		}
		if w := cur.Annotations[v1alpha1.AnnotationWorkerCluster]; w != "worker-1" {
			return fmt.Errorf("annotation %q", w)
		}
		return nil
	})
	// MultiKueue copies the worker's status: running there. Nothing here may overwrite it,
	// whatever wakes the run (the Workload's changes do).
	copyStatus(t, run, func(st *v1alpha1.TestRunStatus) {
		st.Phase, st.Reason, st.Message = v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, "running in worker-1"
	})
	admitWorkload(t, wl)
	holdsNothing(t, run)
	cur := &v1alpha1.TestRun{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
		t.Fatal(err)
	}
	if cur.Status.Phase != v1alpha1.PhaseRunning || cur.Status.Message != "running in worker-1" {
		t.Fatalf("status %s %q: the manager cluster wrote over the worker's", cur.Status.Phase, cur.Status.Message)
	}
	// The worker's run ended; MultiKueue's last copy says so, and ttlSecondsAfterFinished 0
	// deletes the run here.
	copyStatus(t, run, func(st *v1alpha1.TestRunStatus) {
		st.Phase, st.Reason, st.Message = v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "done in worker-1"
		st.CompletionTime = ptr.To(metav1.Now())
	})
	eventually(t, "the ended run deleted by its TTL", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.TestRun{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading it: %w", err)
		}
		return errors.New("still there")
	})
}

// copyStatus writes the run's status as MultiKueue copies the worker's.
func copyStatus(t *testing.T, run *v1alpha1.TestRun, edit func(*v1alpha1.TestRunStatus)) {
	t.Helper()
	eventually(t, "the worker's status copied", func() error {
		cur := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), cur); err != nil {
			return err
		}
		edit(&cur.Status)
		return env.Client.Status().Update(ctx, cur)
	})
}

// TestDispatchedRunNeedsAQueue: a run to be dispatched that names no LocalQueue (its namespace
// has no default one) cannot be: it ends NotDispatchable, holding nothing.
func TestDispatchedRunNeedsAQueue(t *testing.T) {
	ns := setup(t)
	run := dispatched("noqueue", ns)
	run.Spec.Queue = nil
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonNotDispatchable)
	if !strings.Contains(got.Status.Message, "spec.queue.localQueue") {
		t.Errorf("message %q does not say how to name a queue", got.Status.Message)
	}
	holdsNothing(t, got)
}

// workerCopy is MultiKueue's copy of home in namespace ns: its Workload (spec only, with
// extra changes to its pod sets) and the run itself, managedBy removed and the
// prebuilt-workload label added.
func workerCopy(t *testing.T, home *v1alpha1.TestRun, ns string, editSets func([]kueue.PodSet)) (*v1alpha1.TestRun, *kueue.Workload) {
	t.Helper()
	src := workloadOf(t, home)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: src.Name, Namespace: ns, Labels: src.Labels}}
	src.Spec.DeepCopyInto(&wl.Spec)
	editSets(wl.Spec.PodSets)
	if err := env.Client.Create(ctx, wl); err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: home.Name, Namespace: ns,
		Labels: map[string]string{v1alpha1.PrebuiltWorkloadLabel: wl.Name, kueue.MultiKueueOriginLabel: "multikueue"}}}
	home.Spec.DeepCopyInto(&run.Spec)
	run.Spec.ManagedBy = ""
	create(t, run)
	return run, wl
}

// TestWorkerRunsItsCopyThroughThePrebuiltWorkload: in the worker, MultiKueue's copy of the run
// adopts the Workload MultiKueue made (asking what the run needs), waits for Kueue to admit it
// there, and then runs as any queued run.
func TestWorkerRunsItsCopyThroughThePrebuiltWorkload(t *testing.T) {
	home := dispatched("zoned", setup(t))
	create(t, home)
	waitPhase(t, home, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	run, wl := workerCopy(t, home, setup(t), func([]kueue.PodSet) {})

	waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	holdsNothing(t, run)
	eventually(t, "the prebuilt Workload adopted", func() error {
		cur := &kueue.Workload{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
			return err
		}
		if !decide.ControlledBy(cur, run.UID) {
			return fmt.Errorf("owners %+v", cur.OwnerReferences)
		}
		return nil
	})
	var all kueue.WorkloadList
	if err := env.Client.List(ctx, &all, client.InNamespace(run.Namespace)); err != nil || len(all.Items) != 1 {
		t.Fatalf("%d Workloads in the worker's namespace (%v), want MultiKueue's only", len(all.Items), err)
	}
	admitWorkload(t, wl)
	got := waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Admitted condition %+v", c)
	}
}

// TestWorkerRefusesAPrebuiltWorkloadThatAsksLess: a prebuilt Workload that does not ask for the
// pods the run needs (one runner of two: written in the namespace, not by MultiKueue's copy)
// admits nothing; the run ends QueueRejected saying what differs, holding nothing.
func TestWorkerRefusesAPrebuiltWorkloadThatAsksLess(t *testing.T) {
	home := dispatched("cheat", setup(t))
	create(t, home)
	waitPhase(t, home, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	run, wl := workerCopy(t, home, setup(t), func(sets []kueue.PodSet) {
		for i := range sets {
			if sets[i].Name == queue.PodSetRunners {
				sets[i].Count = 1
			}
		}
	})
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonQueueRejected)
	if !strings.Contains(got.Status.Message, "runners x1, want runners x2") {
		t.Errorf("message %q does not say what differs", got.Status.Message)
	}
	holdsNothing(t, got)
	cur := &kueue.Workload{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
		t.Fatal(err)
	}
	if metav1.GetControllerOf(cur) != nil {
		t.Errorf("the refused Workload was adopted: %+v", cur.OwnerReferences)
	}
}
