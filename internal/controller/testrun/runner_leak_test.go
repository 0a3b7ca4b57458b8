package testrun

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestRunnerLeakIsTheGenerators: a stability run with spec.stability.leak.failOn: leak whose
// runner's own memory (the RSS its envelope carries per window) grows 1 MiB every 10 s after
// a ramp gets status.runners.memory.trend leak, naming the runner, and a warning that says the
// generator, not the target, leaks; the run is not FAILED for it (the target did not leak).
// The same runner with flat memory gets stable and no warning.
func TestRunnerLeakIsTheGenerators(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory func(i int) float64
		trend  string
	}{
		{"leaking", func(i int) float64 { return 60 + 4*float64(min(i, 10)) + float64(max(i-10, 0)) }, "leak"},
		{"flat", func(i int) float64 { return 60 + 4*float64(min(i, 10)) + float64(i%2) }, "stable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("runner-leak-"+tc.name, ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("60s").
				Stability(&v1alpha1.StabilitySpec{SampleInterval: "1s", Leak: &v1alpha1.LeakSpec{Horizon: "24h", FailOn: "leak"}}).Obj()
			create(t, run)
			k := newKubelet(t, run)
			stats.set(k.targetNS(), 44, 10)
			k.targetReady()
			pods := k.runnersReady(1)
			waitPhase(t, run, v1alpha1.PhaseRunning, "")
			logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Requests: 600, Start: time.Now().Add(-60 * time.Minute),
				Duration: 60 * time.Minute, CPUSeconds: 5, MemoryMiB: tc.memory}), nil)
			k.Finish(pods[0], 0, "Completed")
			got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

			rs := got.Status.Runners
			if rs == nil || rs.Memory == nil || rs.Memory.Trend == nil {
				t.Fatalf("no runner memory in status: %+v", rs)
			}
			m, tr := rs.Memory, rs.Memory.Trend
			t.Logf("runner memory %+v, trend %+v; verdict %s: %s", *m, *tr, got.Status.Verdict, got.Status.Message)
			if tr.Verdict != tc.trend || m.Runner != pods[0].Name || m.Fitted != 1 || tr.Samples < 15 {
				t.Errorf("runner trend %s of %q over %d samples (%d fitted), want %s of %s", tr.Verdict, m.Runner, tr.Samples, m.Fitted, tc.trend, pods[0].Name)
			}
			if got.Status.Verdict == v1alpha1.VerdictFailed || strings.Contains(got.Status.Message, "target memory leaks") {
				t.Errorf("a generator's memory failed the run as the target's: %s: %s", got.Status.Verdict, got.Status.Message)
			}
			warned := slicesContain(got.Status.Results.Warnings, "the load generator leaks memory, not the target: runner "+pods[0].Name)
			if warned != (tc.trend == "leak") || (tc.trend == "leak") != strings.Contains(got.Status.Message, "the load generator leaks memory, not the target") {
				t.Errorf("warning %v, want %v: %q; message %s", warned, tc.trend == "leak", got.Status.Results.Warnings, got.Status.Message)
			}
		})
	}
}

func slicesContain(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}
