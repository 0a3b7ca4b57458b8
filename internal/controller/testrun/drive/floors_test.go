package drive

import (
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// An object admitted before the floor (or written around admission) is still sampled at most
// once a second; runner 0's end is asked often at first, then as often as it waited, up to 5 s.
func TestSamplingAndEndPollingHaveFloors(t *testing.T) {
	r := New(&runenv.Env{})
	for interval, want := range map[v1alpha1.Duration]time.Duration{"1ms": time.Second, "999ms": time.Second, "": 30 * time.Second, "10s": 10 * time.Second} {
		run := tw.MakeTestRun("s", "ns").Stability(&v1alpha1.StabilitySpec{SampleInterval: interval}).Obj()
		if got := r.SampleInterval(run); got != want {
			t.Errorf("sampleInterval %q: every %s, want %s", interval, got, want)
		}
	}
	// Without spec.stability.sampleInterval the interval follows the run's length: a 30 s run's
	// target gets a curve, a long one is sampled every 30 s.
	for run, want := range map[*v1alpha1.TestRun]time.Duration{
		tw.MakeTestRun("quick", "ns").Devices(200, "1s").Duration("30s").Obj():                                                        2 * time.Second,
		tw.MakeTestRun("quick-stable", "ns").Devices(200, "1s").Duration("30s").Stability(&v1alpha1.StabilitySpec{}).Obj():            2 * time.Second,
		tw.MakeTestRun("set", "ns").Devices(200, "1s").Duration("30s").Stability(&v1alpha1.StabilitySpec{SampleInterval: "5s"}).Obj(): 5 * time.Second,
		tw.MakeTestRun("long", "ns").Devices(200, "1s").Duration("2h").Obj():                                                          30 * time.Second,
	} {
		if got := r.SampleInterval(run); got != want {
			t.Errorf("%s: sampled every %s, want %s", run.Name, got, want)
		}
	}
	// A script-only run (no spec.load): every 30 s until the pre-flight says how long k6 plans
	// it (status.plannedDuration), then as a run of that length (issue 38: a 45 s script's
	// target chart had two points).
	scriptOnly := tw.MakeTestRun("script-only", "ns").Obj()
	if got := r.SampleInterval(scriptOnly); got != 30*time.Second {
		t.Errorf("script-only, unchecked: sampled every %s, want 30s", got)
	}
	scriptOnly.Status.PlannedDuration = "1m30s"
	if got := r.SampleInterval(scriptOnly); got != 3*time.Second || RunLength(scriptOnly) != 90*time.Second {
		t.Errorf("script-only, planned 1m30s: sampled every %s over %s, want 3s over 1m30s", got, RunLength(scriptOnly))
	}
	scriptOnly.Status.PlannedDuration = "not a duration"
	if got := r.SampleInterval(scriptOnly); got != 30*time.Second {
		t.Errorf("script-only, a planned duration that does not parse: sampled every %s, want 30s", got)
	}
	for waited, want := range map[time.Duration]time.Duration{0: 250 * time.Millisecond, time.Second: time.Second, time.Hour: 5 * time.Second, -time.Minute: 250 * time.Millisecond} {
		if got := EndPoll(waited); got != want {
			t.Errorf("endPoll(%s) = %s, want %s", waited, got, want)
		}
	}
}
