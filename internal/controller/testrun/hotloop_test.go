package testrun

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// holds lets a test hold the fake runners of one namespace: setup() that does not return
// until released, or a runner 0 that never reports its load's end.
type holds struct {
	mu       sync.Mutex
	gates    map[string]chan struct{}
	inSetup  map[string]bool
	neverEnd map[string]bool
	// hangTeardown makes teardown() in a namespace return only when its context ends.
	hangTeardown map[string]bool
	// endAsks counts Ended calls per namespace: each is one reconcile waiting on runner 0.
	endAsks map[string]int
	// hung makes a namespace's runners' REST and live calls (Envelope, Stop, Ended,
	// Interrupted, Release) answer only once released or their context ends; entered counts
	// the calls that hung, by namespace and call.
	hung    map[string]chan struct{}
	entered map[string]map[string]int
}

// hangRunners makes the REST and live calls to ns's runners hang until release is called.
func (h *holds) hangRunners(ns string) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	gate := make(chan struct{})
	h.hung[ns] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

// hang holds call to a runner of ns while ns hangs (hangRunners).
func (h *holds) hang(ctx context.Context, ns, call string) error {
	h.mu.Lock()
	h.init()
	gate := h.hung[ns]
	if gate != nil {
		if h.entered[ns] == nil {
			h.entered[ns] = map[string]int{}
		}
		h.entered[ns][call]++
	}
	h.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hangs counts the calls of ns's runners that hung.
func (h *holds) hangs(ns, call string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entered[ns][call]
}

func (h *holds) init() {
	if h.gates == nil {
		h.gates, h.inSetup, h.neverEnd, h.endAsks = map[string]chan struct{}{}, map[string]bool{}, map[string]bool{}, map[string]int{}
		h.hangTeardown = map[string]bool{}
		h.hung, h.entered = map[string]chan struct{}{}, map[string]map[string]int{}
	}
}

// holdSetup makes setup() in ns wait until the returned release is called.
func (h *holds) holdSetup(ns string) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	gate := make(chan struct{})
	h.gates[ns] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

func (h *holds) setup(ctx context.Context, ns string) {
	h.mu.Lock()
	h.init()
	gate := h.gates[ns]
	if gate != nil {
		h.inSetup[ns] = true
	}
	h.mu.Unlock()
	if gate == nil {
		return
	}
	select {
	case <-gate:
	case <-ctx.Done():
	}
	h.mu.Lock()
	h.inSetup[ns] = false
	h.mu.Unlock()
}

func (h *holds) teardown(ctx context.Context, ns string) error {
	h.mu.Lock()
	h.init()
	hang := h.hangTeardown[ns]
	h.mu.Unlock()
	if !hang {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (h *holds) settingUp(ns string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inSetup[ns]
}

func (h *holds) Ended(ns string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	h.endAsks[ns]++
	return !h.neverEnd[ns]
}

func (h *holds) asks(ns string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endAsks[ns]
}

// A runner 0 that never reports the end of its load (teardown() can then never run) is
// waited for until the run deadline, not beyond: the run is stopped there and ends RunTimeout.
// Meanwhile it is asked with back-off, not every 250 ms: the asks are counted, each one a
// reconcile, and a 6 s wait at 250 ms would be 24 of them.
func TestTeardownWaitEndsAtTheRunDeadline(t *testing.T) {
	ns := setup(t)
	runner.hold.mu.Lock()
	runner.hold.init()
	runner.hold.neverEnd[ns] = true
	runner.hold.mu.Unlock()
	run := tw.MakeTestRun("no-end", ns).Parallelism(2).Devices(20, "1s").Duration("1s").
		Timeouts(&v1alpha1.TimeoutsSpec{Run: "6s"}).Obj()
	k, pods := startRunning(t, run, 2)
	k.Finish(pods[1], 0, "Completed")
	eventually(t, "runner 0 stopped at the run deadline", func() error {
		if runner.stops(pods[0]) == 0 {
			return fmt.Errorf("not stopped; asked for its end %d times", runner.hold.asks(ns))
		}
		return nil
	})
	asks := runner.hold.asks(ns)
	t.Logf("runner 0 asked for its end %d times before the deadline stopped it", asks)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	logs.set(pods[1], load(pods[1], time.Now()), nil)
	k.Finish(pods[0], decide.ExitStopped, "Error")
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunTimeout)
	if asks == 0 || asks > 14 {
		t.Errorf("runner 0 was asked for its end %d times before the deadline; want a few, with back-off", asks)
	}
	if _, teardowns, _, _ := runner.calls(ns); teardowns != 0 {
		t.Errorf("teardown ran %d times on a runner whose load never ended", teardowns)
	}
	if got.Status.CompletionTime == nil {
		t.Error("no completion time")
	}
}

// A teardown() that never returns is given up at the run deadline too: the run is stopped
// there and ends RunTimeout. Before, the reconcile worker waited in it (scriptTimeout, 2
// minutes, in a real cluster; the fake's never ends) and the run never reached its deadline.
func TestHangingTeardownEndsAtTheRunDeadline(t *testing.T) {
	ns := setup(t)
	runner.hold.mu.Lock()
	runner.hold.init()
	runner.hold.hangTeardown[ns] = true
	runner.hold.mu.Unlock()
	run := tw.MakeTestRun("hung-teardown", ns).Parallelism(2).Devices(20, "1s").Duration("1s").
		Timeouts(&v1alpha1.TimeoutsSpec{Run: "5s"}).Obj()
	k, pods := startRunning(t, run, 2)
	k.Finish(pods[1], 0, "Completed")
	eventually(t, "runner 0 stopped at the run deadline", func() error {
		if runner.stops(pods[0]) == 0 {
			return fmt.Errorf("not stopped")
		}
		return nil
	})
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	logs.set(pods[1], load(pods[1], time.Now()), nil)
	k.Finish(pods[0], decide.ExitStopped, "Error")
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunTimeout)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTeardownDone); c != nil && c.Status == "True" {
		t.Errorf("TeardownDone %+v for a teardown() that never returned", c)
	}
}

// A setup() that takes long on one run holds no other run: it runs off the reconcile worker
// (its own run's reconcile returns and says so in the SetupDone condition), and a second
// TestRun goes from creation to Running while the first is still inside setup(). Before, the
// one worker waited in setup() (up to scriptTimeout, 2 minutes, in a real cluster) and every
// other run waited behind it.
func TestSlowSetupHoldsNoOtherRun(t *testing.T) {
	slowNS, fastNS := setup(t), setup(t)
	release := runner.hold.holdSetup(slowNS)
	t.Cleanup(release)
	slow := tw.MakeTestRun("slow-setup", slowNS).Parallelism(2).Devices(20, "1s").Duration("10s").Obj()
	create(t, slow)
	ks := newKubelet(t, slow)
	ks.targetReady()
	ks.runnersReady(2)
	eventually(t, "the slow run inside setup(), its reconcile returned", func() error {
		if !runner.hold.settingUp(slowNS) {
			return fmt.Errorf("not in setup() yet")
		}
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(slow), got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSetupDone); c == nil || c.Reason != "Running" {
			return fmt.Errorf("SetupDone %+v, want False Running while setup() runs", c)
		}
		return nil
	})

	fast := tw.MakeTestRun("fast", fastNS).Parallelism(2).Devices(20, "1s").Duration("10s").Obj()
	startRunning(t, fast, 2)
	if !runner.hold.settingUp(slowNS) {
		t.Fatal("the slow run left setup() before the fast one ran: the test shows nothing")
	}
	release()
	waitPhase(t, slow, v1alpha1.PhaseRunning, "")
	got := &v1alpha1.TestRun{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(fast), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.StartTime == nil {
		t.Errorf("fast run has no start time")
	}
}
