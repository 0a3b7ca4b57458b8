package testrun

import (
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/queue"
)

// defaultLocalQueue makes the namespace's LocalQueue named default with c, Kueue's way for a
// namespace to name the queue of jobs that name none.
func defaultLocalQueue(t *testing.T, c client.Client, ns string) {
	t.Helper()
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: queue.DefaultLocalQueue, Namespace: ns},
		Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	if err := c.Create(ctx, lq); err != nil {
		t.Fatal(err)
	}
}

// noWorkload fails if the namespace holds any Workload.
func noWorkload(t *testing.T, c client.Client, ns string) {
	t.Helper()
	var list kueue.WorkloadList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("%d Workloads in %s, want none", len(list.Items), ns)
	}
}

// TestQueueNamingNothingFails: spec.queue (here only its maxWait) on a run that names no
// LocalQueue, in a namespace without a default one, is not ignored: the run ends Failed
// QueueNotNamed before it holds anything, saying how to name a queue.
func TestQueueNamingNothingFails(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("unnamed", ns).Obj()
	run.Spec.Queue = &v1alpha1.QueueSpec{MaxWait: "1h"}
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonQueueNotNamed)
	for _, want := range []string{"spec.queue.localQueue", v1alpha1.QueueNameLabel, "namespace " + ns} {
		if !strings.Contains(got.Status.Message, want) {
			t.Errorf("message %q does not say %q", got.Status.Message, want)
		}
	}
	holdsNothing(t, got)
	noWorkload(t, env.Client, ns)
}

// TestNamespaceDefaultLocalQueue: a run naming no queue, in a namespace with a LocalQueue named
// default, is queued there as Kueue queues a Job naming none; its status and event say which
// queue and why. Admitted, it provisions as any run.
func TestNamespaceDefaultLocalQueue(t *testing.T) {
	ns := setup(t)
	defaultLocalQueue(t, env.Client, ns)
	run := tw.MakeTestRun("defaulted", ns).Parallelism(2).Devices(300, "10s").Duration("10s").Obj()
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	holdsNothing(t, got)
	if !strings.Contains(got.Status.Message, "LocalQueue default (namespace default LocalQueue") {
		t.Errorf("message %q does not say the queue is the namespace's default", got.Status.Message)
	}
	wl := workloadOf(t, run)
	if wl.Spec.QueueName != queue.DefaultLocalQueue || !decide.ControlledBy(wl, run.UID) {
		t.Fatalf("Workload queue %q owners %+v, want the namespace's default", wl.Spec.QueueName, wl.OwnerReferences)
	}
	eventually(t, "a Queued event naming the namespace default", func() error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == v1alpha1.ReasonQueued && e.Regarding.Name == run.Name && strings.Contains(e.Note, "namespace default LocalQueue") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none Queued naming the namespace default", len(list.Items))
	})
	admitWorkload(t, wl)
	k := newKubelet(t, run)
	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	k.targetReady()
	k.runnersReady(2)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
}

// TestKueueAskedOnceAtStart: the controller queues by the answer the manager got when it
// started (testrun.Options.Kueue, the one the cache was built with), never asking the API
// server again. The control plane serves Kueue's API and the namespace has a default
// LocalQueue; a manager told Kueue is absent queues nothing, watches no Workload and says
// Kueue is not installed, on both a run naming a queue and one whose spec.queue names none.
func TestKueueAskedOnceAtStart(t *testing.T) {
	const ns = "team-a"
	e := ownControlPlane(t, namespaceAndProfile(ns), testenv.WithKueueCRDs())
	c := e.Client
	defaultLocalQueue(t, c, ns)
	var served bool
	startOwnManager(t, e, func(o *runenv.Options, kueue bool) error {
		served = kueue
		// The answer as if Kueue's CRDs were not there when the manager started.
		o.Kueue = false
		return nil
	})
	if !served {
		t.Fatal("controller.KueueServed said Kueue is absent on a control plane serving its Workload and LocalQueue APIs")
	}
	named := tw.MakeTestRun("named", ns).Obj()
	named.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	unnamed := tw.MakeTestRun("unnamed", ns).Obj()
	unnamed.Spec.Queue = &v1alpha1.QueueSpec{MaxWait: "1h"}
	for _, run := range []*v1alpha1.TestRun{named, unnamed} {
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		got := waitPhaseOn(t, c, run, v1alpha1.PhaseProvisioning, "")
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAdmitted)
		if cond == nil || cond.Reason != v1alpha1.ReasonKueueNotInstalled {
			t.Errorf("%s: Admitted %+v, want reason KueueNotInstalled", run.Name, cond)
		}
	}
	noWorkload(t, c, ns)
	if !strings.Contains(meta.FindStatusCondition(waitPhaseOn(t, c, unnamed, v1alpha1.PhaseProvisioning, "").Status.Conditions,
		v1alpha1.ConditionAdmitted).Message, "spec.queue is set but Kueue is not installed") {
		t.Error("the run whose spec.queue names nothing is not told its queue was not used")
	}
}
