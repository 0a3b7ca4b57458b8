package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// Three runners, one setup() and one teardown(): setup() runs on runner 0 before the start and
// its data reaches the other two; runner 0 lingers after its load, teardown() runs there once
// the others ended, and runner 0 is released. A manager restart in between repeats neither.
func TestSetupAndTeardownRunOnceForTheFleet(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("once", ns).Parallelism(3).Devices(300, "10s").Duration("10s").Obj()
	_, pods := startRunning(t, run, 3)
	for i, pod := range pods {
		args := strings.Join(pod.Spec.Containers[0].Args, " ")
		if !strings.Contains(args, "--no-setup --no-teardown") || strings.Contains(args, "--linger") != (i == 0) {
			t.Errorf("runner %d args %q: every runner leaves setup and teardown to the operator, runner 0 lingers", i, args)
		}
	}
	setups, _, _, data := runner.calls(ns)
	want := `{"token":"t-` + pods[0].Name + `"}`
	if setups != 1 || data[pods[1].Name] != want || data[pods[2].Name] != want {
		t.Fatalf("setup ran %d times; data handed over %v, want %s on every runner", setups, data, want)
	}
	restartManager(t)

	start := time.Now()
	for _, pod := range pods[1:] {
		logs.set(pod, load(pod, start), nil)
		k := newKubelet(t, run)
		k.finish(pod, 0, "Completed")
	}
	eventually(t, "teardown and release on runner 0, recorded", func() error {
		if _, teardowns, releases, _ := runner.calls(ns); teardowns != 1 || releases < 1 {
			return fmt.Errorf("teardowns %d releases %d", teardowns, releases)
		}
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionTeardownDone) {
			return fmt.Errorf("condition TeardownDone: %+v", meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTeardownDone))
		}
		return nil
	})
	restartManager(t)
	// Released, runner 0 prints its results and exits, as k6 does after a linger.
	logs.set(pods[0], load(pods[0], start), nil)
	newKubelet(t, run).finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if setups, teardowns, _, _ := runner.calls(ns); setups != 1 || teardowns != 1 {
		t.Errorf("setup ran %d times, teardown %d times; want once each", setups, teardowns)
	}
	for _, c := range []string{v1alpha1.ConditionSetupDone, v1alpha1.ConditionTeardownDone} {
		if !meta.IsStatusConditionTrue(got.Status.Conditions, c) {
			t.Errorf("condition %s: %+v", c, meta.FindStatusCondition(got.Status.Conditions, c))
		}
	}
	if got.Status.Results.Requests.Total != 300 {
		t.Errorf("requests %d, want 300 from the three runners", got.Status.Results.Requests.Total)
	}
}

// A setup() that throws ends the run before the start, with k6's words.
func TestSetupFailureEndsTheRun(t *testing.T) {
	ns := setup(t)
	runner.mu.Lock()
	runner.failSetup[ns] = "runner answered 500: Error executing setup: TypeError: Cannot read property 'token' of undefined at setup (file:///fleetbench/script/test.js:5:12)"
	runner.mu.Unlock()
	run := tw.MakeTestRun("bad-setup", ns).Parallelism(2).Devices(20, "10s").Duration("10s").Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	k.runnersReady(2)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonSetupFailed)
	if !strings.Contains(got.Status.Message, "setup() failed on runner") || !strings.Contains(got.Status.Message, "test.js:5:12") {
		t.Errorf("message %q must name setup() and k6's error", got.Status.Message)
	}
	if runner.resumes(ns) != 0 {
		t.Errorf("%d runners started after setup() failed", runner.resumes(ns))
	}
}
