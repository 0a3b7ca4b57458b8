package testrun

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
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
	stack := k.targetDeployments()[0].Spec.Template.Spec
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
		k.Finish(pod, 0, "Completed")
	}
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	r := got.Status.Results
	if got.Status.Verdict != v1alpha1.VerdictPassed || r.Partial || r.Requests.Total != 300 || r.Requests.Dropped != 0 {
		t.Fatalf("verdict %s, results %+v", got.Status.Verdict, r.Requests)
	}
	if r.Latency == nil || r.Latency.P95 == "" || len(r.Thresholds) != 2 || got.Status.Runners.Succeeded != 3 {
		t.Fatalf("latency %+v thresholds %+v runners %+v", r.Latency, r.Thresholds, got.Status.Runners)
	}
	// The run's slowest requests over the three runners (14 ms each: every fifth request),
	// earliest first, with their runner and trace, as the API server stored them.
	if s := r.SlowestRequests; len(s) != 10 || s[0].Duration != "14.0ms" || s[0].Runner == "" || s[0].TraceID == "" ||
		s[0].Start.After(s[9].Start.Time) || s[0].Start.Time.Before(start.Add(-time.Second)) {
		t.Errorf("slowest requests %+v", s)
	}
	// The full result, in k6's summary shape, is in the ConfigMap status points at.
	if r.FullResult == nil {
		t.Fatal("no full result")
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.FullResult.ConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	var k6 struct {
		Metrics map[string]struct {
			Values     map[string]float64
			Thresholds map[string]struct{ OK bool }
		}
	}
	if err := judge.DecodeGzipJSON(cm.BinaryData[r.FullResult.Key], &k6); err != nil {
		t.Fatal(err)
	}
	if k6.Metrics["http_reqs"].Values["count"] != 300 || !k6.Metrics["http_req_duration"].Thresholds["p(95)<200"].OK {
		t.Errorf("full result metrics %+v", k6.Metrics)
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
		// The runners' Jobs: the pre-flight's runs alongside them until its verdict is in.
		_ = env.Client.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{naming.LabelRole: naming.RoleRunner})
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
		k.Finish(pod, 0, "Completed")
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

// TestTTLRemovesEveryChild: after ttlSecondsAfterFinished the TestRun, its Jobs, its
// ConfigMap and its target namespace go.
func TestTTLRemovesEveryChild(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("ttl", ns).TTL(2).Obj()
	k, pods := startRunning(t, run, 1)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
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
			k.Finish(pod, 0, "Completed")
		}
		waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
		costs[n] = writes.count(ns, k.targetNS())
		measured = append(measured, fmt.Sprintf("N=%d: %d writes", n, costs[n]))
	}
	t.Logf("API writes per TestRun (creates, updates, patches, deletes; events not counted): %s", strings.Join(measured, ", "))
	// Fixed cost (the script pre-flight's Job, created and deleted; namespace, quota, policy,
	// Deployment, Service, ConfigMap, finalizer, a status patch per phase and target sample)
	// plus, per runner, its Job and the status patches its pod's transitions cause (Ready,
	// finished); how many of those coalesce varies with timing.
	// Measured: 37–41 for N = 1, 50 for N = 4, 61 for N = 8.
	perRunner := float64(costs[8]-costs[1]) / 7
	if perRunner > 6 || costs[1] > 50 {
		t.Errorf("writes grow too fast: %v (%.1f per runner)", measured, perRunner)
	}
}

// TestSessionOnlyRunSaysIterations: a script that speaks no HTTP (seed 003's XMPP robots) is
// summed up by its iterations and checks, not as "0 requests".
func TestSessionOnlyRunSaysIterations(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("robots", ns).Devices(100, "10s").Duration("10s").Obj()
	k, pods := startRunning(t, run, 1)
	logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Sessions: 120, Start: time.Now()}), nil)
	k.Finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if want := "verdict PASSED: 120 iterations, no HTTP requests, checks 120 passed / 0 failed"; got.Status.Message != want {
		t.Errorf("message %q, want %q", got.Status.Message, want)
	}
}

// TestFirstStatusWriteHasAPhase: the reconcile that adds the finalizer keeps the status it set
// before the update (the update answers with the stored, empty status): the first status a
// watcher sees has a phase and the test id, never a blank phase.
func TestFirstStatusWriteHasAPhase(t *testing.T) {
	ns := setup(t)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &v1alpha1.TestRunList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	create(t, tw.MakeTestRun("first", ns).Obj())
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			got, ok := ev.Object.(*v1alpha1.TestRun)
			if !ok || equality.Semantic.DeepEqual(got.Status, v1alpha1.TestRunStatus{}) {
				continue // created, or the finalizer added: no status yet
			}
			if got.Status.Phase == "" || got.Status.TestID == "" {
				t.Fatalf("first status written: phase %q reason %q testID %q, want a phase and a test id",
					got.Status.Phase, got.Status.Reason, got.Status.TestID)
			}
			return
		case <-timeout:
			t.Fatal("no status written in 30 s")
		}
	}
}
