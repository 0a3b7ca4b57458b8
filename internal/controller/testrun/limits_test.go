package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestTargetQuotaAndPolicyHoldTheProfile: a GPU Profile's run gets a quota of requests and
// limits of cpu, memory and ephemeral storage and of the GPU it grants, and a policy with
// egress denied but DNS, its own pods and the block it opted into, both accepted by the API
// server; its pods pass the quota's admission. The same component on a Profile that grants no
// GPU ends Failed NotPermitted, with nothing made.
func TestTargetQuotaAndPolicyHoldTheProfile(t *testing.T) {
	ns := setup(t)
	gpu := tw.MakeProfile("limits-gpu", "2", "1Gi").Obj()
	gpu.Spec.EphemeralStorage = ptr.To(resource.MustParse("5Gi"))
	gpu.Spec.ExtendedResources = map[corev1.ResourceName]resource.Quantity{"example.com/gpu": resource.MustParse("1")}
	if err := env.Client.Create(ctx, gpu); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "app:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1"), "example.com/gpu": resource.MustParse("1")}}}
	run := tw.MakeTestRun("gpu", ns).Profile("limits-gpu").Sizing(v1alpha1.SizingPerComponent).Components(app).Obj()
	run.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "10.20.0.0/16", Ports: []v1alpha1.EgressPort{{Port: 443}}}}
	create(t, run)
	k := newKubelet(t, run)
	// The pod made from the template passes the quota's admission (every container bounded).
	k.targetReady()
	// The target came up: the run goes on to its runners.
	waitPhase(t, run, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners)

	quota := &corev1.ResourceQuota{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "profile"}, quota); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[corev1.ResourceName]string{
		"requests.cpu": "2", "limits.cpu": "2", "requests.memory": "1Gi", "limits.memory": "1Gi",
		"requests.ephemeral-storage": "5Gi", "limits.ephemeral-storage": "5Gi", "requests.example.com/gpu": "1",
	} {
		if q, ok := quota.Spec.Hard[name]; !ok || q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("quota %s = %v, want %s (hard %v)", name, quota.Spec.Hard[name], want, quota.Spec.Hard)
		}
	}
	policy := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "runners-only"}, policy); err != nil {
		t.Fatal(err)
	}
	if len(policy.Spec.PolicyTypes) != 2 || len(policy.Spec.Egress) != 3 || policy.Spec.Egress[2].To[0].IPBlock.CIDR != "10.20.0.0/16" {
		t.Errorf("policy %+v, want ingress and egress, with the opted-in block", policy.Spec)
	}

	plain := tw.MakeTestRun("no-gpu", ns).Sizing(v1alpha1.SizingPerComponent).Components(app).Obj()
	create(t, plain)
	got := waitPhase(t, plain, v1alpha1.PhaseFailed, v1alpha1.ReasonNotPermitted)
	if !strings.Contains(got.Status.Message, "example.com/gpu") || !strings.Contains(got.Status.Message, "extendedResources") {
		t.Errorf("message %q, want the resource and the Profile field that grants it", got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, plain.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused target's namespace was made: %v", err)
	}
}

// TestMaxTargetsPerNamespace runs a manager with --max-targets-per-namespace=2, on a control
// plane of its own (the suite's manager has no limit): a namespace's third run waits Pending
// TargetLimitReached, with nothing made, until one of the two ends, then gets its target; a
// fourth, whose provisioning deadline passes while it waits, ends Failed TargetLimitReached.
func TestMaxTargetsPerNamespace(t *testing.T) {
	const ns = "team-a"
	e := ownControlPlane(t, namespaceAndProfile(ns))
	c := e.Client
	startOwnManager(t, e, func(o *runenv.Options, _ bool) error {
		o.MaxTargetsPerNamespace = 2
		return nil
	})

	runs := make([]*v1alpha1.TestRun, 3)
	kubelets := make([]*kubelet, 3)
	var runnerPods []*corev1.Pod
	for i := range runs {
		runs[i] = tw.MakeTestRun(fmt.Sprintf("load-%d", i+1), ns).Obj()
		if err := c.Create(ctx, runs[i]); err != nil {
			t.Fatal(err)
		}
		kubelets[i] = newKubeletOn(t, c, runs[i], naming.TargetNamespace(ns, runs[i].Name))
		if i < 2 {
			kubelets[i].targetReady()
			runnerPods = append(runnerPods, kubelets[i].runnersReady(1)[0])
			waitPhaseOn(t, c, runs[i], v1alpha1.PhaseRunning, "")
		}
	}
	third := waitPhaseOn(t, c, runs[2], v1alpha1.PhasePending, v1alpha1.ReasonTargetLimitReached)
	if !strings.Contains(third.Status.Message, "--max-targets-per-namespace") || !strings.Contains(third.Status.Message, "waiting until") ||
		third.Status.TargetNamespace != "" {
		t.Errorf("the third run waits as %q, target namespace %q", third.Status.Message, third.Status.TargetNamespace)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: kubelets[2].targetNS()}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("the third run's target namespace was made over the limit: %v", err)
	}

	// load-1 ends: its slot goes to load-3.
	logs.set(runnerPods[0], load(runnerPods[0], time.Now()), nil)
	kubelets[0].Finish(runnerPods[0], 0, "Completed")
	waitPhaseOn(t, c, runs[0], v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	kubelets[2].targetReady()
	kubelets[2].runnersReady(1)
	waitPhaseOn(t, c, runs[2], v1alpha1.PhaseRunning, "")

	// load-2 and load-3 hold the two slots until after this one's deadline.
	late := tw.MakeTestRun("load-4", ns).Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "5s"}).Obj()
	if err := c.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	got := waitPhaseOn(t, c, late, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetLimitReached)
	if !strings.Contains(got.Status.Message, "ask the admin to raise the limit") {
		t.Errorf("message %q, want what to do", got.Status.Message)
	}
}

// TestMaxRunnersPerNamespace runs a manager with --max-runners-per-namespace=3 on a control
// plane of its own: a run asking 4 runners ends NotPermitted at once with nothing made, and an
// auto run is sized to 3; with a 2-runner run going, a second 2-runner run waits Pending
// RunnerLimitReached with no Job made, and so does a 1-runner run after it (first come, first
// served); when the first ends both go on, and one more, whose deadline passes while they hold
// the 3, ends Failed RunnerLimitReached.
func TestMaxRunnersPerNamespace(t *testing.T) {
	const ns = "team-r"
	e := ownControlPlane(t, namespaceAndProfile(ns))
	c := e.Client
	startOwnManager(t, e, func(o *runenv.Options, _ bool) error {
		o.MaxRunnersPerNamespace = 3
		return nil
	})
	jobsOf := func(run *v1alpha1.TestRun) int {
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{naming.LabelTestRun: run.Name}); err != nil {
			t.Fatal(err)
		}
		return len(jobs.Items)
	}
	mustCreate := func(run *v1alpha1.TestRun) {
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
	}

	big := tw.MakeTestRun("big", ns).Parallelism(4).Obj()
	mustCreate(big)
	got := waitPhaseOn(t, c, big, v1alpha1.PhaseFailed, v1alpha1.ReasonNotPermitted)
	if !strings.Contains(got.Status.Message, "asks for 4 runners") || !strings.Contains(got.Status.Message, "--max-runners-per-namespace") || jobsOf(big) != 0 {
		t.Errorf("run past the cap alone: %q, %d Jobs", got.Status.Message, jobsOf(big))
	}

	// 100 iterations/s at 1 per runner wants 100 runners: auto chooses the cap.
	auto := tw.MakeTestRun("auto", ns).Devices(100, "1s").Duration("10s").Obj()
	auto.Spec.Parallelism = autoParallelism()
	auto.Spec.RunnerCapacity = &v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](1)}
	mustCreate(auto)
	got = waitPhaseOn(t, c, auto, v1alpha1.PhaseProvisioning, "")
	if p := got.Status.Parallelism; p == nil || p.Chosen != 3 {
		t.Errorf("auto chose %+v, want the cap's 3", p)
	}
	if err := c.Delete(ctx, auto); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the auto run gone", func() error {
		switch err := c.Get(ctx, client.ObjectKeyFromObject(auto), &v1alpha1.TestRun{}); {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("still there")
	})

	first := tw.MakeTestRun("first", ns).Parallelism(2).Obj()
	mustCreate(first)
	k := newKubeletOn(t, c, first, naming.TargetNamespace(ns, first.Name))
	k.targetReady()
	pods := k.runnersReady(2)
	waitPhaseOn(t, c, first, v1alpha1.PhaseRunning, "")

	second := tw.MakeTestRun("second", ns).Parallelism(2).Obj()
	mustCreate(second)
	got = waitPhaseOn(t, c, second, v1alpha1.PhasePending, v1alpha1.ReasonRunnerLimitReached)
	if !strings.Contains(got.Status.Message, "already has 2 runners in flight") || !strings.Contains(got.Status.Message, "waiting until") {
		t.Errorf("the second run waits as %q", got.Status.Message)
	}
	third := tw.MakeTestRun("third", ns).Parallelism(1).Obj()
	mustCreate(third)
	waitPhaseOn(t, c, third, v1alpha1.PhasePending, v1alpha1.ReasonRunnerLimitReached)
	if n := jobsOf(second) + jobsOf(third); n != 0 {
		t.Errorf("runs waiting for room made %d Jobs (pre-flight or runners)", n)
	}

	for _, pod := range pods {
		logs.set(pod, load(pod, time.Now()), nil)
		k.Finish(pod, 0, "Completed")
	}
	waitPhaseOn(t, c, first, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	waitPhaseOn(t, c, second, v1alpha1.PhaseProvisioning, "")
	waitPhaseOn(t, c, third, v1alpha1.PhaseProvisioning, "")

	late := tw.MakeTestRun("late", ns).Parallelism(1).Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3s"}).Obj()
	mustCreate(late)
	got = waitPhaseOn(t, c, late, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerLimitReached)
	if !strings.Contains(got.Status.Message, "lower spec.parallelism") || jobsOf(late) != 0 {
		t.Errorf("late run: %q, %d Jobs", got.Status.Message, jobsOf(late))
	}
}
