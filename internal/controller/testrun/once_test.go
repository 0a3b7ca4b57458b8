package testrun

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
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
		k.Finish(pod, 0, "Completed")
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
	newKubelet(t, run).Finish(pods[0], 0, "Completed")
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

// Runners that hand over their final envelopes end the run before any pod exit reaches pod
// status: the runners' pods stay Running here, as they are for a moment after k6 stops its
// outputs. Runner 0 hands its over once released. A final envelope with a test error is not
// taken (k6's exit code decides what it means), so that runner's log is read at its exit.
func TestFinalEnvelopesEndTheRunBeforeThePodsExit(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("finals", ns).Parallelism(3).Devices(300, "10s").Duration("10s").Obj()
	_, pods := startRunning(t, run, 3)
	start := time.Now()
	envelope := func(i int) measure.Envelope {
		env, err := measure.ExtractEnvelope(load(pods[i], start))
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	runner.answerFinal(pods[1], envelope(1))
	crossed := envelope(2)
	crossed.Error = "thresholds on metrics 'http_req_duration' have been crossed"
	runner.answerFinal(pods[2], crossed)
	eventually(t, "runner 1 counted as ended, runner 2 not", func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if r := got.Status.Runners; r == nil || r.Succeeded != 1 || r.Running != 2 {
			return fmt.Errorf("runners %+v, want 1 succeeded and 2 running", r)
		}
		return nil
	})
	// The kubelet rotated runner 2's log after its envelope (containerLogMaxSize): the numbers
	// come from the envelope it handed over, the meaning of its exit from pod status.
	logs.set(pods[2], []byte("level=info msg=\"the log file was rotated\"\n"), nil)
	newKubelet(t, run).Finish(pods[2], decide.ExitThresholdsFailed, "Error")
	eventually(t, "teardown and release on runner 0", func() error {
		if _, teardowns, releases, _ := runner.calls(ns); teardowns != 1 || releases < 1 {
			return fmt.Errorf("teardowns %d releases %d", teardowns, releases)
		}
		return nil
	})
	runner.answerFinal(pods[0], envelope(0))
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := got.Status.Results; r.Requests.Total != 300 || r.Partial {
		t.Errorf("requests %d partial %v, want 300 from the three runners, complete", r.Requests.Total, r.Partial)
	}
	for _, i := range []int{0, 1} {
		live := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pods[i]), live); err != nil {
			t.Fatal(err)
		}
		if decide.Terminated(live) {
			t.Errorf("runner %d's pod ended; the test must show the run ending before pod status has the exit", i)
		}
	}
}

// TestRotatedLogWithOnlyACheckpointIsPartial: a runner that ended cleanly but whose final
// envelope the kubelet rotated out of the log it serves (containerLogMaxSize), with no
// handed-over final (an operator restarted near the end), leaves its last checkpoint: the run
// ends with its numbers marked partial and INCONCLUSIVE, never as complete.
func TestRotatedLogWithOnlyACheckpointIsPartial(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("rotated", ns).Parallelism(2).Devices(200, "10s").Duration("10s").
		Threshold("http_req_failed", "rate<0.01").Obj()
	k, pods := startRunning(t, run, 2)
	start := time.Now()
	checkpoint := tw.Envelope(tw.RunnerLoad{Runner: pods[1].Name, Requests: 60, Start: start, Duration: 6 * time.Second})
	checkpoint.Final = false
	var log bytes.Buffer
	if err := measure.Encode(&log, &checkpoint); err != nil {
		t.Fatal(err)
	}
	logs.set(pods[0], load(pods[0], start), nil)
	logs.set(pods[1], log.Bytes(), nil)
	k.Finish(pods[0], 0, "Completed")
	k.Finish(pods[1], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
	r := got.Status.Results
	if r == nil || !r.Partial || r.Requests.Total != 160 || got.Status.Verdict != v1alpha1.VerdictInconclusive {
		t.Fatalf("verdict %s results %+v, want the 160 requests measured, partial, INCONCLUSIVE", got.Status.Verdict, r)
	}
}
