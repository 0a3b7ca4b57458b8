package testrun

import (
	"fmt"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// test.abort() on one runner ends the whole test, as in one k6 process: the other runners are
// stopped, teardown() runs once on runner 0, and the verdict is FAILED with the abort named.
func TestScriptAbortStopsTheFleet(t *testing.T) {
	for _, tc := range []struct {
		name string
		// aborting is the runner whose script calls test.abort().
		aborting int
	}{
		// Runners other than 0 exit 108.
		{name: "on runner 2", aborting: 2},
		// Runner 0 lingers for teardown(): its load is found Interrupted.
		{name: "on runner 0", aborting: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("abort", ns).Parallelism(3).Devices(300, "10s").Duration("1m").Obj()
			k, pods := startRunning(t, run, 3)
			start := waitPhase(t, run, v1alpha1.PhaseRunning, "").Status.StartTime.Time
			aborting := pods[tc.aborting]
			if tc.aborting == 0 {
				runner.mu.Lock()
				runner.aborted[key(aborting)] = true
				runner.mu.Unlock()
			} else {
				logs.set(aborting, load(aborting, start), nil)
				k.Finish(aborting, decide.ExitScriptAborted, "Error")
			}
			eventually(t, "the other runners stopped", func() error {
				for i, pod := range pods {
					if i != tc.aborting && runner.stops(pod) == 0 {
						return fmt.Errorf("runner %s not stopped", pod.Name)
					}
				}
				return nil
			})
			// Stopped, the others print their results and exit; runner 0 lingers for teardown().
			for i, pod := range pods {
				if i != tc.aborting && i != 0 {
					logs.set(pod, load(pod, start), nil)
					k.Finish(pod, decide.ExitStopped, "Error")
				}
			}
			eventually(t, "teardown() once on runner 0, and its release", func() error {
				if _, teardowns, releases, _ := runner.calls(ns); teardowns != 1 || releases < 1 {
					return fmt.Errorf("teardowns %d releases %d", teardowns, releases)
				}
				return nil
			})
			exit := int32(decide.ExitStopped)
			if tc.aborting == 0 {
				exit = decide.ExitScriptAborted
			}
			logs.set(pods[0], load(pods[0], start), nil)
			k.Finish(pods[0], exit, "Error")
			got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
			if _, teardowns, _, _ := runner.calls(ns); teardowns != 1 {
				t.Errorf("teardown ran %d times, want once", teardowns)
			}
			want := "the script aborted the test on " + aborting.Name + " (test.abort())"
			if got.Status.Verdict != v1alpha1.VerdictFailed || !strings.Contains(got.Status.Message, want) {
				t.Errorf("verdict %s: %s; want FAILED saying %q", got.Status.Verdict, got.Status.Message, want)
			}
			if got.Status.Results == nil || got.Status.Results.Partial || got.Status.Results.Requests.Total != 300 {
				t.Errorf("results %+v: want all three runners' 300 requests, whole", got.Status.Results)
			}
		})
	}
}
