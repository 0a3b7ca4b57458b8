package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

var ctx = context.Background()

// setup makes a namespace for one test and the Profile c1.
func setup(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tr-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	c1 := tw.MakeProfile("c1", "1", "512Mi").Obj()
	if err := env.Client.Create(ctx, c1); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, run *v1alpha1.TestRun) {
	t.Helper()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
}

// startRunning creates the TestRun and plays the cluster until its n runners run.
func startRunning(t *testing.T, run *v1alpha1.TestRun, n int) (*kubelet, []*corev1.Pod) {
	t.Helper()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	pods := k.runnersReady(n)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	return k, pods
}

// load is what runner i measured in the happy path: 100 requests, 10–14 ms.
func load(pod *corev1.Pod, start time.Time) []byte {
	return tw.EnvelopeLog(tw.RunnerLoad{Runner: pod.Name, Requests: 100, Start: start, Duration: 10 * time.Second, CPUSeconds: 0.5})
}

func TestHappyPathMergesAllRunners(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("happy", ns).Parallelism(3).Devices(300, "10s").Duration("10s").
		Threshold("http_req_duration", "p(95)<200").Threshold("http_req_failed", "rate<0.01").Obj()
	create(t, run)
	k := newKubelet(t, run)

	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	// The real API server kept the one-machine target's pod-level budget: the whole C1 profile.
	stack := k.targetDeployments(1)[0].Spec.Template.Spec
	if stack.Resources == nil || stack.Resources.Limits.Cpu().String() != "1" || stack.Resources.Limits.Memory().String() != "512Mi" {
		t.Errorf("stack pod resources = %+v, want the profile", stack.Resources)
	}
	k.targetReady()
	waitPhase(t, run, v1alpha1.PhaseStarting, "")
	pods := k.runnersReady(3)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	if runner.resumes(ns) != 3 || got.Status.StartTime == nil || got.Status.Runners.StartSkew == "" {
		t.Fatalf("start: %d resumes, startTime %v, skew %q", runner.resumes(ns), got.Status.StartTime, got.Status.Runners.StartSkew)
	}

	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
		k.finish(pod, 0, "Completed")
	}
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "Completed")
	r := got.Status.Results
	if got.Status.Verdict != v1alpha1.VerdictPassed || r.Partial || r.Requests.Total != 300 || r.Requests.Dropped != 0 {
		t.Fatalf("verdict %s, results %+v", got.Status.Verdict, r.Requests)
	}
	if r.Latency == nil || r.Latency.P95 == "" || len(r.Thresholds) != 2 || got.Status.Runners.Succeeded != 3 {
		t.Fatalf("latency %+v thresholds %+v runners %+v", r.Latency, r.Thresholds, got.Status.Runners)
	}
	for _, c := range []string{v1alpha1.ConditionTargetReady, v1alpha1.ConditionRunnersReady, v1alpha1.ConditionStarted,
		v1alpha1.ConditionResultsCollected, v1alpha1.ConditionThresholdsPassed, v1alpha1.ConditionReady} {
		if !meta.IsStatusConditionTrue(got.Status.Conditions, c) {
			t.Errorf("condition %s not True: %+v", c, meta.FindStatusCondition(got.Status.Conditions, c))
		}
	}
	if got.Status.CompletionTime == nil || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("completionTime %v observedGeneration %d", got.Status.CompletionTime, got.Status.ObservedGeneration)
	}
	eventually(t, "the TestRuns-by-phase gauge", func() error {
		families, err := metrics.Registry.Gather()
		if err != nil {
			return err
		}
		for _, f := range families {
			if f.GetName() != "fleetbench_testruns" {
				continue
			}
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == "Succeeded" && m.GetGauge().GetValue() >= 1 {
					return nil
				}
			}
		}
		return fmt.Errorf("no fleetbench_testruns{phase=Succeeded} >= 1")
	})
	eventually(t, "phase events", func() error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			seen[e.Action] = true
		}
		for _, phase := range []string{"Provisioning", "Starting", "Running", "Collecting", "Succeeded"} {
			if !seen[phase] {
				return fmt.Errorf("no event for %s among %v", phase, seen)
			}
		}
		return nil
	})
}

// TestRestartInEveryPhaseCreatesNothingTwice restarts the manager in each phase; the new one
// starts from the world alone.
func TestRestartInEveryPhaseCreatesNothingTwice(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("restart", ns).Parallelism(2).Devices(20, "1s").Duration("5s").Obj()
	create(t, run)
	k := newKubelet(t, run)
	countChildren := func() {
		t.Helper()
		var jobs batchv1.JobList
		var cms corev1.ConfigMapList
		var svcs corev1.ServiceList
		_ = env.Client.List(ctx, &jobs, client.InNamespace(ns))
		_ = env.Client.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{naming.LabelRole: naming.RoleScript})
		_ = env.Client.List(ctx, &svcs, client.InNamespace(k.targetNS()))
		if len(jobs.Items) > 2 || len(cms.Items) > 1 || len(svcs.Items) > 1 {
			t.Fatalf("duplicates: %d Jobs, %d ConfigMaps, %d Services", len(jobs.Items), len(cms.Items), len(svcs.Items))
		}
	}

	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	restartManager(t)
	countChildren()
	k.targetReady()
	waitPhase(t, run, v1alpha1.PhaseStarting, "")
	restartManager(t)
	countChildren()
	pods := k.runnersReady(2)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	restartManager(t)
	countChildren()
	if n := runner.resumes(ns); n != 2 {
		t.Fatalf("a restart in Running must not start runners again: %d resumes for 2 runners", n)
	}
	// Logs not readable yet: the run waits in Collecting, where the manager restarts again.
	for _, pod := range pods {
		logs.set(pod, nil, fmt.Errorf("container log not yet available"))
		k.finish(pod, 0, "Completed")
	}
	waitPhase(t, run, v1alpha1.PhaseCollecting, "")
	restartManager(t)
	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
	}
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
	countChildren()
	if got.Status.Results.Requests.Total != 200 {
		t.Fatalf("results after restarts: %+v", got.Status.Results.Requests)
	}
	if n := runner.resumes(ns); n != 2 {
		t.Fatalf("%d resumes for 2 runners", n)
	}
}

func TestFailurePathsEndInFailedWithTheirReason(t *testing.T) {
	fast := &v1alpha1.TimeoutsSpec{Provisioning: "2s", RunnersReady: "2s", Run: "2s", Collection: "2s"}
	cases := []struct {
		name   string
		run    func(ns string) *v1alpha1.TestRun
		act    func(t *testing.T, k *kubelet)
		reason string
		// says are parts of the message the user must read: the cause and the fix.
		says []string
		// within bounds how long after creation Failed must come.
		within time.Duration
	}{
		{name: "profile missing", reason: "ProfileNotFound", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("no-profile", ns).Profile("C9").Timeouts(fast).Obj()
			}},
		{name: "target never ready", reason: "TargetNotReady", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("never-ready", ns).Timeouts(fast).Obj() }},
		{name: "target image missing", reason: "TargetImageNotPresent", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-image", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetPodWaiting("ErrImageNeverPull", "Container image \"fleetbench/nginx:dev\" is not present with pull policy of Never")
			}},
		{name: "target image runs as root", reason: "TargetRunsAsRoot", within: 15 * time.Second,
			says: []string{"container legacy: container has runAsNonRoot and image will run as root", "runAsUser", "spec.target.podSecurity: baseline"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("root-image", ns).Components(v1alpha1.Component{Name: "legacy", Kind: v1alpha1.ComponentCustom,
					Image: "legacy:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}).Obj()
			},
			act: func(t *testing.T, k *kubelet) {
				k.targetPodWaiting("CreateContainerConfigError", `container has runAsNonRoot and image will run as root (pod: "stack", container: legacy)`)
			}},
		{name: "runner image missing", reason: "RunnerImageNotPresent", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-runner-image", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					pod.Status.Phase = corev1.PodPending
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "k6", Image: "fleetbench/runner:test",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull"}}}}
				})
			}},
		{name: "runner unschedulable", reason: "RunnerUnschedulable", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("unschedulable", ns).Timeouts(fast).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					pod.Status.Phase = corev1.PodPending
					pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
						Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu"}}
				})
			}},
		{name: "runner pod never created (quota)", reason: "RunnerNotCreated", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("quota", ns).Timeouts(fast).Obj() },
			act: func(t *testing.T, k *kubelet) { k.targetReady(); k.jobs(1) }},
		{name: "runner cannot reach the target", reason: "RunnerFailedBeforeStart", within: 15 * time.Second,
			says: []string{"reach-target exited with code 1", "web.", "NetworkPolicy"},
			run:  func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("unreachable", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					if len(pod.Spec.InitContainers) != 1 {
						t.Errorf("runner pod init containers = %d, want reach-target", len(pod.Spec.InitContainers))
					}
					pod.Status.Phase = corev1.PodFailed
					pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "reach-target", State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "the target was not reachable from this runner within 1m0s; " +
							pod.Spec.InitContainers[0].Args[3] + ": dial tcp: connect: connection refused (a NetworkPolicy or the network keeps the runner out)"}}}}
				})
			}},
		{name: "runner script error before start", reason: "RunnerFailedBeforeStart", within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("script-error", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				// k6 fails while loading the script, before its API (and so readiness) is up.
				pods := k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) { pod.Status.Phase = corev1.PodRunning })
				k.finish(pods[0], 107, "Error")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := setup(t)
			run := tc.run(ns)
			create(t, run)
			if tc.act != nil {
				tc.act(t, newKubelet(t, run))
			}
			got := waitPhase(t, run, v1alpha1.PhaseFailed, tc.reason)
			if took := got.Status.CompletionTime.Sub(got.CreationTimestamp.Time); took > tc.within {
				t.Errorf("Failed after %s, want within %s", took, tc.within)
			}
			if got.Status.Verdict != v1alpha1.VerdictFailed || got.Status.Message == "" {
				t.Errorf("verdict %q message %q", got.Status.Verdict, got.Status.Message)
			}
			for _, part := range tc.says {
				if !strings.Contains(got.Status.Message, part) {
					t.Errorf("message %q lacks %q", got.Status.Message, part)
				}
			}
			eventually(t, "no runner left waiting", func() error {
				var jobs batchv1.JobList
				if err := env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
					return err
				}
				for _, j := range jobs.Items {
					if j.DeletionTimestamp.IsZero() && tc.reason != "RunnerFailedBeforeStart" {
						return fmt.Errorf("runner Job %s outlived the failure", j.Name)
					}
				}
				return nil
			})
			ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != tc.reason {
				t.Errorf("Ready condition = %+v", ready)
			}
			t.Logf("%s: %s", got.Status.Reason, got.Status.Message)
		})
	}
}

// TestFailedRunnerStopsTheOthers: one runner is OOM-killed mid-run; the others are stopped,
// their results kept and marked partial, and the run fails with the OOM as its reason.
func TestFailedRunnerStopsTheOthers(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("oom", ns).Parallelism(3).Devices(30, "1s").Duration("1m").Obj()
	k, pods := startRunning(t, run, 3)

	k.finish(pods[1], 137, "OOMKilled")
	eventually(t, "the other runners stopped", func() error {
		if runner.stops(pods[0]) == 0 || runner.stops(pods[2]) == 0 {
			return fmt.Errorf("stops: %d, %d", runner.stops(pods[0]), runner.stops(pods[2]))
		}
		return nil
	})
	start := time.Now()
	for _, i := range []int{0, 2} {
		logs.set(pods[i], load(pods[i], start), nil)
		k.finish(pods[i], exitStopped, "Error")
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, "RunnerOOMKilled")
	if got.Status.Results == nil || !got.Status.Results.Partial || got.Status.Results.Requests.Total != 200 {
		t.Fatalf("want the two surviving runners' 200 requests, partial: %+v", got.Status.Results)
	}
	if !strings.Contains(got.Status.Message, pods[1].Name) {
		t.Errorf("message does not name the OOM-killed runner: %s", got.Status.Message)
	}
}

// TestLostRunnerAndRunDeadline: a runner whose pod vanished fails the run as lost; a load past
// its deadline is stopped and fails as RunTimeout.
func TestLostRunnerAndRunDeadline(t *testing.T) {
	t.Run("lost", func(t *testing.T) {
		t.Parallel()
		ns := setup(t)
		run := tw.MakeTestRun("lost", ns).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
		k, pods := startRunning(t, run, 2)
		if err := env.Client.Delete(ctx, pods[0]); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.RunnerJob(run.Name, 0)}, job); err != nil {
			t.Fatal(err)
		}
		job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"},
			batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"})
		now := metav1.Now()
		job.Status.StartTime, job.Status.Failed = &now, 1
		if err := env.Client.Status().Update(ctx, job); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the surviving runner stopped", func() error {
			if runner.stops(pods[1]) == 0 {
				return fmt.Errorf("not stopped")
			}
			return nil
		})
		logs.set(pods[1], load(pods[1], time.Now()), nil)
		k.finish(pods[1], exitStopped, "Error")
		waitPhase(t, run, v1alpha1.PhaseFailed, "RunnerLost")
	})
	t.Run("run deadline", func(t *testing.T) {
		t.Parallel()
		ns := setup(t)
		run := tw.MakeTestRun("deadline", ns).Timeouts(&v1alpha1.TimeoutsSpec{Run: "2s"}).Obj()
		k, pods := startRunning(t, run, 1)
		eventually(t, "the runner stopped at the deadline", func() error {
			if runner.stops(pods[0]) == 0 {
				return fmt.Errorf("not stopped")
			}
			return nil
		})
		logs.set(pods[0], load(pods[0], time.Now()), nil)
		k.finish(pods[0], exitStopped, "Error")
		got := waitPhase(t, run, v1alpha1.PhaseFailed, "RunTimeout")
		if got.Status.Results == nil || got.Status.Results.Requests.Total != 100 || !got.Status.Results.Partial {
			t.Errorf("results before the deadline must be kept, partial: %+v", got.Status.Results)
		}
	})
}

// TestTTLRemovesEveryChild: after ttlSecondsAfterFinished the TestRun, its Jobs, its
// ConfigMap and its target namespace go.
func TestTTLRemovesEveryChild(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("ttl", ns).TTL(2).Obj()
	k, pods := startRunning(t, run, 1)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.finish(pods[0], 0, "Completed")
	waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

	eventually(t, "TestRun and children deleted", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.TestRun{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("TestRun still there: %w", err)
		}
		var jobs batchv1.JobList
		var cms corev1.ConfigMapList
		_ = env.Client.List(ctx, &jobs, client.InNamespace(ns))
		_ = env.Client.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{naming.LabelTestRun: run.Name})
		if len(jobs.Items)+len(cms.Items) > 0 {
			return fmt.Errorf("%d Jobs and %d ConfigMaps left", len(jobs.Items), len(cms.Items))
		}
		target := &corev1.Namespace{}
		// envtest has no namespace controller: a deleted namespace stays Terminating.
		if err := env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, target); err == nil && target.DeletionTimestamp.IsZero() {
			return fmt.Errorf("target namespace not deleted")
		}
		return nil
	})
	// Runner pods go with their Jobs through the garbage collector, which follows this owner.
	if owner := metav1.GetControllerOf(pods[0]); owner == nil || owner.Kind != "Job" {
		t.Errorf("runner pod owner = %+v", owner)
	}
}

// TestAPIWritesGrowLinearlyWithRunners measures what one TestRun costs the API server.
func TestAPIWritesGrowLinearlyWithRunners(t *testing.T) {
	var measured []string
	costs := map[int]int64{}
	for _, n := range []int{1, 4, 8} {
		ns := setup(t)
		run := tw.MakeTestRun(fmt.Sprintf("writes-%d", n), ns).Parallelism(int32(n)).Devices(100, "1s").Duration("1s").Obj()
		k, pods := startRunning(t, run, n)
		start := time.Now()
		for _, pod := range pods {
			logs.set(pod, load(pod, start), nil)
		}
		for _, pod := range pods {
			k.finish(pod, 0, "Completed")
		}
		waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
		costs[n] = writes.count(ns, k.targetNS())
		measured = append(measured, fmt.Sprintf("N=%d: %d writes", n, costs[n]))
	}
	t.Logf("API writes per TestRun (creates, updates, patches, deletes; events not counted): %s", strings.Join(measured, ", "))
	// Fixed cost (namespace, quota, policy, Deployment, Service, ConfigMap, finalizer, a status
	// patch per phase and target sample) plus, per runner, its Job and the status patches its
	// pod's transitions cause (Ready, finished); how many of those coalesce varies with timing.
	// Measured: 27–34 for N = 1, 47 for N = 4, 62–63 for N = 8.
	perRunner := float64(costs[8]-costs[1]) / 7
	if perRunner > 6 || costs[1] > 40 {
		t.Errorf("writes grow too fast: %v (%.1f per runner)", measured, perRunner)
	}
}

// TestTargetMeasurements: a scaled-down Stab-2-2 on C1 with seed 000's memory figures (44 MiB
// before, 57 MiB after, 1000 devices) gets seed 000's derived columns and log findings; a
// target that restarted fails the verdict.
func TestTargetMeasurements(t *testing.T) {
	stability := func(name, ns string) *v1alpha1.TestRun {
		return tw.MakeTestRun(name, ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("10s").
			Stability(&v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{
				{Name: "warning", Regex: "level=warn"}, {Name: "error", Regex: "level=error", FailAbove: ptr.To[int64](0)}}}).Obj()
	}
	for _, tc := range []struct {
		name     string
		restarts int32
		logs     string
		verdict  v1alpha1.Verdict
	}{
		{"healthy", 0, "level=info msg=up\nlevel=warn msg=\"CFG profile sync delayed\"\nlevel=warn msg=again\n", v1alpha1.VerdictPassed},
		{"crashed", 2, "level=error msg=\"simulated crash\"\n", v1alpha1.VerdictFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := stability("stab-"+tc.name, ns)
			create(t, run)
			k := newKubelet(t, run)
			stats.set(k.targetNS(), 44, 10)
			k.targetReadyWith(tc.restarts)
			pods := k.runnersReady(1)
			got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
			if got.Status.Target == nil || got.Status.Target.Memory.BeforeMiB != 44 {
				t.Fatalf("no before sample: %+v", got.Status.Target)
			}
			stats.set(k.targetNS(), 57, 13)
			logs.set(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.targetNS(), Name: "target-stack-pod"}}, []byte(tc.logs), nil)
			logs.set(pods[0], load(pods[0], time.Now()), nil)
			k.finish(pods[0], 0, "Completed")
			got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

			m := got.Status.Target.Memory
			// Seed 000, Stab-2-2 / C1: +13 MiB, 29.55 %, 0.013 MiB per device. Utilization is the
			// working set (the fake reports RSS + 50 MiB = 107 MiB) over C1's 512 MiB.
			if m.AfterMiB != 57 || m.IncreaseMiB != 13 || m.IncreasePercent != "29.55" || m.PerDeviceMiB != "0.013" || m.UtilizationPercent != "20.90" {
				t.Errorf("memory = %+v (%+v)", m, meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetMeasured))
			}
			if got.Status.Capacity == nil || got.Status.Capacity.MaxSafeDevicesByMemory != 4785 {
				t.Errorf("capacity = %+v, want 1000 / 0.209 = 4785 devices", got.Status.Capacity)
			}
			if got.Status.Target.CPU.AverageCoresPerCore == "" || got.Status.Target.Samples < 2 || got.Status.Target.Restarts != tc.restarts {
				t.Errorf("cpu %+v samples %d restarts %d", got.Status.Target.CPU, got.Status.Target.Samples, got.Status.Target.Restarts)
			}
			if got.Status.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", got.Status.Verdict, tc.verdict, got.Status.Message)
			}
			findings := map[string]int64{}
			for _, f := range got.Status.Target.LogFindings {
				findings[f.Pattern] = f.Count
			}
			if tc.name == "healthy" && (findings["warning"] != 2 || findings["error"] != 0) {
				t.Errorf("findings = %+v", got.Status.Target.LogFindings)
			}
			if tc.name == "crashed" && !strings.Contains(got.Status.Message, "restarted 2 times") {
				t.Errorf("message does not report the restarts: %s", got.Status.Message)
			}
		})
	}
}

// TestTargetMeasuredWithMetricsAPIWhereTheNodeProxyIsDenied: the kubelet summary is forbidden
// (a cluster that denies nodes/proxy); the run is measured from metrics.k8s.io, says so, uses
// the working set for its memory columns and integrates CPU from the sampled rates.
func TestTargetMeasuredWithMetricsAPIWhereTheNodeProxyIsDenied(t *testing.T) {
	stats.failSummary(apierrors.NewForbidden(schema.GroupResource{Resource: "nodes/proxy"}, "node-1", errors.New("denied by policy")))
	t.Cleanup(func() { stats.failSummary(nil) })
	ns := setup(t)
	run := tw.MakeTestRun("metrics-api", ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("10s").
		Stability(&v1alpha1.StabilitySpec{SampleInterval: "1s"}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	pods := k.runnersReady(1)
	// metrics-server has not scraped the new target yet: the start waits for the idle sample.
	waitPhase(t, run, v1alpha1.PhaseStarting, "WaitingForTargetSample")
	stats.set(k.targetNS(), 44, 0)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	if tu := got.Status.Target; tu == nil || tu.Source != "metricsAPI" || tu.Memory.BeforeMiB != 94 {
		t.Fatalf("before the start: %+v, want source metricsAPI and the working set 44+50 MiB", tu)
	}
	time.Sleep(2500 * time.Millisecond) // a few samples at 0.1 cores
	stats.set(k.targetNS(), 57, 0)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.finish(pods[0], 0, "Completed")
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

	tu := got.Status.Target
	if tu.Source != "metricsAPI" || tu.Memory.AfterMiB != 107 || tu.Memory.IncreaseMiB != 13 || tu.Samples < 3 {
		t.Errorf("target = %+v memory %+v", tu, tu.Memory)
	}
	est, _ := strconv.ParseFloat(tu.CPU.EstimatedCoreSeconds, 64)
	avg, _ := strconv.ParseFloat(tu.CPU.AverageCoresPerCore, 64)
	// 0.1 cores throughout on C1's one core: the integral over the run averages back to 0.1.
	if est <= 0 || avg < 0.05 || avg > 0.15 {
		t.Errorf("cpu = %+v, want about 0.1 cores per core integrated from the rates", tu.CPU)
	}
	measured := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetMeasured)
	if measured == nil || !strings.Contains(measured.Message, "metricsAPI") {
		t.Errorf("TargetMeasured = %+v, want it to name the source", measured)
	}
}

// TestOneMachineFallsBackWhereTheAPIServerDropsPodLevelResources runs a manager against a second
// API server whose PodLevelResources gate is off: it drops pod.spec.resources from the target's
// Deployment, so the operator splits the profile among the containers instead (a pod with no
// limit at all would void the profile) and tells the user.
func TestOneMachineFallsBackWhereTheAPIServerDropsPodLevelResources(t *testing.T) {
	old, err := testenv.Start(testenv.WithAPIServerFlag("feature-gates", "PodLevelResources=false"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Stop() })
	mgr, err := startManagerOn(old)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.stop)
	if err := old.Client.Create(ctx, tw.MakeProfile("c1", "1", "512Mi").Obj()); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("gate-off", "default").Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer},
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase}).Obj()
	if err := old.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, "the target split evenly", func() error {
		key := client.ObjectKey{Namespace: naming.TargetNamespace("default", "gate-off"), Name: naming.TargetWorkload("stack")}
		if err := old.Client.Get(ctx, key, &d); err != nil {
			return err
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Resources.Limits.Memory().String() != "256Mi" || c.Resources.Limits.Cpu().String() != "500m" {
				return fmt.Errorf("container %s has %v", c.Name, c.Resources.Limits)
			}
		}
		return nil
	})
	if d.Spec.Template.Spec.Resources != nil {
		t.Errorf("this API server does not keep pod-level resources, yet the pod has %+v", d.Spec.Template.Spec.Resources)
	}
	eventually(t, "a PodLevelResourcesUnavailable event", func() error {
		var list eventsv1.EventList
		if err := old.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "PodLevelResourcesUnavailable" && e.Regarding.Name == "gate-off" {
				return nil
			}
		}
		return fmt.Errorf("%d events, none PodLevelResourcesUnavailable", len(list.Items))
	})
}

// TestSessionOnlyRunSaysIterations: a script that speaks no HTTP (seed 003's XMPP robots) is
// summed up by its iterations and checks, not as "0 requests".
func TestSessionOnlyRunSaysIterations(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("robots", ns).Devices(100, "10s").Duration("10s").Obj()
	k, pods := startRunning(t, run, 1)
	logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Sessions: 120, Start: time.Now()}), nil)
	k.finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "Completed")
	if want := "verdict PASSED: 120 iterations, no HTTP requests, checks 120 passed / 0 failed"; got.Status.Message != want {
		t.Errorf("message %q, want %q", got.Status.Message, want)
	}
}
