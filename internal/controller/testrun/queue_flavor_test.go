package testrun

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/queue/place"
)

// resourceFlavor makes a ResourceFlavor (cluster-scoped) named for the test's namespace, whose
// nodes carry poolLabel=pool and the taint pool:NoSchedule; it is deleted when the test ends.
func resourceFlavor(t *testing.T, ns, pool string) *kueue.ResourceFlavor {
	t.Helper()
	f := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: pool + "-" + ns}, Spec: kueue.ResourceFlavorSpec{
		NodeLabels:  map[string]string{poolLabel: pool},
		Tolerations: []corev1.Toleration{{Key: pool, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}}
	if err := env.Client.Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, f) })
	return f
}

const poolLabel = "test.fleetbench.dev/pool"

// placedOn fails unless pod carries flavor f's node label and toleration.
func placedOn(t *testing.T, what string, pod corev1.PodSpec, f *kueue.ResourceFlavor) {
	t.Helper()
	want := f.Spec.Tolerations[0]
	tolerated := false
	for _, tol := range pod.Tolerations {
		tolerated = tolerated || (tol.Key == want.Key && tol.Operator == want.Operator && tol.Effect == want.Effect)
	}
	if pod.NodeSelector[poolLabel] != f.Spec.NodeLabels[poolLabel] || !tolerated {
		t.Errorf("%s: nodeSelector %v tolerations %+v, want the flavor %s's %s=%s and its toleration",
			what, pod.NodeSelector, pod.Tolerations, f.Name, poolLabel, f.Spec.NodeLabels[poolLabel])
	}
}

// TestAdmittedFlavorReachesThePods: Kueue admits the target's pod set on one ResourceFlavor and
// the runners' and pre-flight's on another; the target's Deployment, every runner Job and the
// pre-flight Job carry their flavor's node labels and tolerations, beside the run's own
// nodeSelector, as Kueue's job framework puts them on a Job's pods. status.admission says so.
func TestAdmittedFlavorReachesThePods(t *testing.T) {
	ns := setup(t)
	spot, reserved := resourceFlavor(t, ns, "spot"), resourceFlavor(t, ns, "reserved")
	run := tw.MakeTestRun("flavored", ns).Parallelism(2).Devices(300, "10s").Duration("10s").Annotation(manualPreflight, "true").Obj()
	run.Spec.Runner = &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"zone": "a"}}
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	create(t, run)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, run) })
	waitPhase(t, run, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)
	admitWorkloadOn(t, workloadOf(t, run), func(ps kueue.PodSetReference) string {
		if ps == queue.PodSetTarget {
			return reserved.Name
		}
		return spot.Name
	})
	k := newKubelet(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	placedOn(t, "the pre-flight", k.preflightJob().Spec.Template.Spec, spot)
	for _, d := range k.targetDeployments() {
		placedOn(t, "target Deployment "+d.Name, d.Spec.Template.Spec, reserved)
	}
	k.targetReady()
	for _, j := range k.jobs(2) {
		placedOn(t, "runner Job "+j.Name, j.Spec.Template.Spec, spot)
		if j.Spec.Template.Spec.NodeSelector["zone"] != "a" {
			t.Errorf("runner Job %s lost the run's own nodeSelector: %v", j.Name, j.Spec.Template.Spec.NodeSelector)
		}
	}
	adm := got.Status.Admission
	if adm == nil || adm.ClusterQueue != "cq" || place.PodSet(adm, queue.PodSetRunners) == nil ||
		place.PodSet(adm, queue.PodSetTarget).Flavors[0] != reserved.Name {
		t.Errorf("status.admission %+v, want the ClusterQueue and each pod set's flavor", adm)
	}
}

// TestFlavorContradictingTheRunFails: a flavor whose node label contradicts the run's own
// spec.runner.nodeSelector cannot place the runners (Kueue's job framework finishes such a
// Workload): the run ends Failed FlavorUnusable, naming the flavor and the field, holding
// nothing, and its Workload is finished so the quota is free.
func TestFlavorContradictingTheRunFails(t *testing.T) {
	ns := setup(t)
	spot := resourceFlavor(t, ns, "spot")
	run := tw.MakeTestRun("contradicted", ns).Obj()
	run.Spec.Runner = &v1alpha1.RunnerSpec{NodeSelector: map[string]string{poolLabel: "on-demand"}}
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "team-a"}
	create(t, run)
	wl := workloadOf(t, run)
	admitWorkloadOn(t, wl, func(kueue.PodSetReference) string { return spot.Name })
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonFlavorUnusable)
	for _, want := range []string{"ResourceFlavor " + spot.Name, "spec.runner.nodeSelector", poolLabel + "=on-demand"} {
		if !strings.Contains(got.Status.Message, want) {
			t.Errorf("message %q does not say %q", got.Status.Message, want)
		}
	}
	holdsNothing(t, got)
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

// TestRequiredQueue: with --require-queue, a run naming no LocalQueue in a namespace without
// one named default ends Failed QueueRequired before it holds anything, with or without
// spec.queue, saying how to fix it; in a namespace with a default LocalQueue it is queued as
// always. A manager that found no Kueue at start ends every run KueueRequired, even one naming
// a queue, instead of running it unqueued.
func TestRequiredQueue(t *testing.T) {
	const bare, withDefault = "team-q", "team-r"
	e := ownControlPlane(t, append(namespaceAndProfile(bare), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: withDefault}}),
		testenv.WithKueueCRDs())
	c := e.Client
	defaultLocalQueue(t, c, withDefault)
	mgr := startOwnManager(t, e, func(o *runenv.Options, kueue bool) error {
		if !kueue {
			return fmt.Errorf("controller.KueueServed said Kueue is absent on a control plane serving its API")
		}
		o.RequireQueue = true
		return nil
	})
	unnamed := tw.MakeTestRun("unnamed", bare).Obj()
	maxWaitOnly := tw.MakeTestRun("max-wait-only", bare).Obj()
	maxWaitOnly.Spec.Queue = &v1alpha1.QueueSpec{MaxWait: "1h"}
	for _, run := range []*v1alpha1.TestRun{unnamed, maxWaitOnly} {
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		got := waitPhaseOn(t, c, run, v1alpha1.PhaseFailed, v1alpha1.ReasonQueueRequired)
		for _, want := range []string{"--require-queue", "create a LocalQueue named default in namespace " + bare, "spec.queue.localQueue"} {
			if !strings.Contains(got.Status.Message, want) {
				t.Errorf("%s: message %q does not say %q", run.Name, got.Status.Message, want)
			}
		}
		holdsNothingOn(t, c, got)
	}
	noWorkload(t, c, bare)
	defaulted := tw.MakeTestRun("defaulted", withDefault).Obj()
	if err := c.Create(ctx, defaulted); err != nil {
		t.Fatal(err)
	}
	waitPhaseOn(t, c, defaulted, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued)

	mgr.Stop()
	startOwnManager(t, e, func(o *runenv.Options, _ bool) error {
		o.Kueue, o.RequireQueue = false, true // as if Kueue's API was not served at start
		return nil
	})
	named := tw.MakeTestRun("named", withDefault).Obj()
	named.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: queue.DefaultLocalQueue}
	if err := c.Create(ctx, named); err != nil {
		t.Fatal(err)
	}
	got := waitPhaseOn(t, c, named, v1alpha1.PhaseFailed, v1alpha1.ReasonKueueRequired)
	if !strings.Contains(got.Status.Message, "install Kueue and restart the fleetbench manager") {
		t.Errorf("message %q does not say what the admin must do", got.Status.Message)
	}
	holdsNothingOn(t, c, got)
}
