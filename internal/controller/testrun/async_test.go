package testrun

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// oneWorker restarts the manager with a single reconcile worker for the test, and with the
// default again after it: what one run's reconcile waits on then holds every other run.
func oneWorker(t *testing.T) {
	t.Helper()
	testWorkers = 1
	restartManager(t)
	t.Cleanup(func() {
		testWorkers = 0
		restartManager(t)
	})
}

// A runner whose REST and live endpoints hang (Envelope, Stop, Ended, Interrupted answer
// nothing) and a kubelet whose summary hangs hold no other run, even on one worker: another
// TestRun goes from creation to Succeeded while they hang. Before, each call was made inside
// the reconcile (bounded in a real cluster only by its timeout, up to seconds, and for the log
// and summary reads by nothing of the operator's own), and the one worker waited in it.
func TestHangingRunnersAndKubeletHoldNoOtherRun(t *testing.T) {
	oneWorker(t)
	hungNS, endingNS, stoppedNS, fastNS := setup(t), setup(t), setup(t), setup(t)

	// A running run: its live envelopes are read for progress and abortOnFail, runner 0 is
	// asked whether the script aborted, its target is sampled every second; all of it hangs.
	hung := tw.MakeTestRun("hung", hungNS).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(20, "1s").Duration("1m").
		Stability(&v1alpha1.StabilitySpec{SampleInterval: "1s"}).Obj()
	create(t, hung)
	kh := newKubelet(t, hung)
	kh.node = "node-hung"
	stats.set(kh.targetNS(), 100, 1) // sampled before the start, so sampled during the load
	kh.targetReady()
	kh.runnersReady(2)
	waitPhase(t, hung, v1alpha1.PhaseRunning, "")
	// A run whose runner 1 ended: runner 0 is asked whether its load ended, which hangs.
	ending := tw.MakeTestRun("ending", endingNS).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	ke, endingPods := startRunning(t, ending, 2)
	// A run whose runner 1 was OOM-killed: the others are sent a Stop, which hangs.
	stopped := tw.MakeTestRun("stopped", stoppedNS).Parallelism(3).Devices(30, "1s").Duration("1m").Obj()
	ks, stoppedPods := startRunning(t, stopped, 3)

	for _, ns := range []string{hungNS, endingNS, stoppedNS} {
		t.Cleanup(runner.hold.hangRunners(ns))
	}
	t.Cleanup(stats.hangNode("node-hung"))
	ke.Finish(endingPods[1], 0, "Completed")
	ks.Finish(stoppedPods[1], 137, "OOMKilled")
	eventually(t, "every hang entered", func() error {
		for _, c := range []struct {
			ns, call string
		}{{hungNS, "Envelope"}, {hungNS, "Interrupted"}, {endingNS, "Ended"}, {stoppedNS, "Stop"}} {
			if runner.hold.hangs(c.ns, c.call) == 0 {
				return fmt.Errorf("no %s call hangs in %s yet", c.call, c.ns)
			}
		}
		if stats.hangs("node-hung") == 0 {
			return errors.New("no kubelet summary hangs yet")
		}
		return nil
	})

	fast := tw.MakeTestRun("fast", fastNS).Parallelism(2).Devices(20, "1s").Duration("1s").Obj()
	k, pods := startRunning(t, fast, 2)
	now := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, now), nil)
		k.Finish(pod, 0, "Completed")
	}
	got := waitPhase(t, fast, v1alpha1.PhaseSucceeded, "")
	if got.Status.Results == nil || got.Status.Results.Requests == nil || got.Status.Results.Requests.Total != 200 {
		t.Errorf("fast run results %+v, want both runners' 200 requests", got.Status.Results)
	}
	// The hangs were never released: the runs behind them are still running.
	for _, run := range []*v1alpha1.TestRun{hung, ending} {
		h := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), h); err != nil {
			t.Fatal(err)
		}
		if h.Status.Phase != v1alpha1.PhaseRunning {
			t.Errorf("run %s %s %s, want still Running: the test shows nothing", run.Name, h.Status.Phase, h.Status.Reason)
		}
	}
}

// A setup() that takes 90 s on one run (held here until released, as a script's setup()
// sleeping would hold it) delays neither the start nor the end of another run, on one worker:
// the other run reaches Running and then Succeeded while the first is still inside setup().
// How long its start and end took is logged (no timing is asserted in a unit test).
func TestSlowSetupDelaysNeitherStartNorEndOfAnotherRun(t *testing.T) {
	oneWorker(t)
	slowNS, fastNS := setup(t), setup(t)
	release := runner.hold.holdSetup(slowNS)
	t.Cleanup(release)
	slow := tw.MakeTestRun("slow-setup", slowNS).Parallelism(2).Devices(20, "1s").Duration("10s").Obj()
	create(t, slow)
	ks := newKubelet(t, slow)
	ks.targetReady()
	ks.runnersReady(2)
	eventually(t, "the slow run inside setup()", func() error {
		if !runner.hold.settingUp(slowNS) {
			return errors.New("not in setup() yet")
		}
		return nil
	})

	fast := tw.MakeTestRun("fast", fastNS).Parallelism(2).Devices(20, "1s").Duration("1s").Obj()
	create(t, fast)
	k := newKubelet(t, fast)
	k.targetReady()
	ready := time.Now()
	pods := k.runnersReady(2)
	waitPhase(t, fast, v1alpha1.PhaseRunning, "")
	started := time.Since(ready)
	now := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, now), nil)
		k.Finish(pod, 0, "Completed")
	}
	ended := time.Now()
	waitPhase(t, fast, v1alpha1.PhaseSucceeded, "")
	done := time.Since(ended)
	if !runner.hold.settingUp(slowNS) {
		t.Fatal("the slow run left setup() before the other run ended: the test shows nothing")
	}
	t.Logf("with another run inside setup() on the one worker: runners ready → Running %s, runners ended → Succeeded %s", started, done)
	release()
	waitPhase(t, slow, v1alpha1.PhaseRunning, "")
}

// A run's long calls are one per kind in flight, end at their deadline, are read once and are
// gone after; forget drops every result of a run and ends its reads, not its actions.
func TestAsyncCallsAreBoundedAndForgotten(t *testing.T) {
	c := runio.NewAsyncCalls(clock.RealClock{})
	run := tw.MakeTestRun("r", "ns").Obj()
	run.UID = types.UID("run-1")
	started := make(chan struct{}, 10)
	hang := func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	if _, done := runio.Poll(c, run, runio.CallLive, 50*time.Millisecond, hang); done {
		t.Fatal("done before the call ran")
	}
	if _, done := runio.Poll(c, run, runio.CallLive, 50*time.Millisecond, hang); done {
		t.Fatal("done while in flight")
	}
	<-started
	<-c.Wake // its end at the deadline wakes the run
	if len(started) != 0 {
		t.Errorf("%d more calls started while one was in flight", len(started))
	}
	res, done := runio.Poll(c, run, runio.CallLive, time.Second, hang)
	if !done || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("result %+v done %v, want the deadline's error", res, done)
	}
	if n := c.Pending(run.UID); n != 0 {
		t.Errorf("%d calls kept after the result was read, want 0", n)
	}

	// forget ends a read, lets an action finish, and keeps neither result.
	action := make(chan struct{})
	c.Begin(run, runio.CallStop, time.Minute, true, func(ctx context.Context) (any, error) {
		select {
		case <-action:
			return "stopped", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	readEnded := make(chan error, 1)
	c.Begin(run, runio.CallLive, time.Minute, false, func(ctx context.Context) (any, error) {
		<-ctx.Done()
		readEnded <- ctx.Err()
		return nil, ctx.Err()
	})
	c.Forget(run.UID)
	if err := <-readEnded; !errors.Is(err, context.Canceled) {
		t.Errorf("read after forget: %v, want canceled", err)
	}
	close(action)
	if n := c.Pending(run.UID); n != 0 {
		t.Errorf("%d calls kept after forget, want 0", n)
	}
}
