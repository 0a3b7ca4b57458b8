package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestAbortOnFailStopsTheFleetOnMergedData: the script marks http_req_failed rate<0.1
// abortOnFail. Runner 0 fails 5 % of its requests, runner 1 25 %: k6 alone would abort only
// runner 1, judged on its own share; fleetbench judges the merged 15 %, stops both, and the
// verdict is FAILED.
func TestAbortOnFailStopsTheFleetOnMergedData(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("abort", ns).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	k, pods := startRunning(t, run, 2)
	start := waitPhase(t, run, v1alpha1.PhaseRunning, "").Status.StartTime.Time
	abort := []measure.AbortThreshold{{Metric: "http_req_failed", Expression: "rate<0.1"}}
	for i, failed := range []int{5, 25} {
		load := []tw.StepLoad{{From: 0, To: 2 * time.Second, Requests: 100, Failed: failed, LatencyMs: 5}}
		name := pods[i].Name
		runner.serveLive(pods[i], func() measure.Envelope {
			// The whole 2 s at once: whichever reconcile judges first sees the merged 15 %.
			e := tw.LiveEnvelope(name, start, time.Second, load, start.Add(2*time.Second))
			// The runner reports every script threshold, abortOnFail ones included.
			e.AbortOnFail, e.Thresholds = abort, map[string][]string{"http_req_failed": {"rate<0.1"}}
			return e
		})
	}
	eventually(t, "both runners stopped", func() error {
		if runner.stops(pods[0]) == 0 || runner.stops(pods[1]) == 0 {
			return fmt.Errorf("stops %d, %d", runner.stops(pods[0]), runner.stops(pods[1]))
		}
		return nil
	})
	for _, pod := range pods {
		logs.set(pod, tw.EnvelopeLog(tw.RunnerLoad{Runner: pod.Name, Requests: 100, Failed: 15, Start: start, Duration: 2 * time.Second}), nil)
		k.Finish(pod, decide.ExitStopped, "Error")
	}
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	w := got.Status.AbortOnFail
	if w == nil || len(w.Thresholds) != 1 || w.Thresholds[0] != "http_req_failed rate<0.1" || !strings.HasPrefix(w.Aborted, "http_req_failed rate<0.1 (was 0.15") {
		t.Fatalf("abortOnFail = %+v", w)
	}
	if got.Status.Verdict != v1alpha1.VerdictFailed || !strings.Contains(got.Status.Message, "aborted early") {
		t.Errorf("verdict %s: %s", got.Status.Verdict, got.Status.Message)
	}
	tw.WantConditions(t, got, map[string]string{v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionStalled: "True/" + v1alpha1.ReasonVerdictFailed})
}
