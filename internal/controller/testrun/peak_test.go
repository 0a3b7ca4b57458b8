package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// TestPeakStopsAtTheBreakingPoint climbs 20 → 120 devices in steps of 20 held 2 s each. From
// 80 devices on, a fifth of the requests fail; the rule is errors above 5 %. The operator
// judges each step on the two runners' merged live windows, stops both runners once the step
// of 80 has been judged, and records 60 devices as the breaking point.
func TestPeakStopsAtTheBreakingPoint(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("peak", ns).Type(v1alpha1.TestTypePeak).Parallelism(2).Devices(20, "1s").
		Peak(&v1alpha1.PeakSpec{StepDevices: 20, StepDuration: "2s", MaxDevices: ptr.To[int32](120),
			StopWhen: v1alpha1.PeakStopRules{ErrorPercentAbove: ptr.To[v1alpha1.Percent](5)}}).Obj()
	steps, err := runners.PeakSteps(&run.Spec)
	if err != nil || len(steps) != 6 {
		t.Fatalf("steps %v: %v", steps, err)
	}
	k, pods := startRunning(t, run, 2)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	start := got.Status.StartTime.Time
	var load []tw.StepLoad
	for _, st := range steps {
		l := tw.StepLoad{From: st.From, To: st.To, Requests: int(st.Devices), LatencyMs: 5} // each runner: half the devices, 2 s
		if st.Devices >= 80 {
			l.Failed = l.Requests / 5
		}
		load = append(load, l)
	}
	for _, pod := range pods {
		runner.serveLive(pod, func() measure.Envelope {
			return tw.LiveEnvelope(pod.Name, start, runners.PeakWindow(&run.Spec), load, time.Now())
		})
	}

	eventually(t, "both runners stopped at the breaking point", func() error {
		if runner.stops(pods[0]) == 0 || runner.stops(pods[1]) == 0 {
			got = waitPhase(t, run, v1alpha1.PhaseRunning, "")
			return fmt.Errorf("stops %d, %d; peak %+v", runner.stops(pods[0]), runner.stops(pods[1]), got.Status.Peak)
		}
		return nil
	})
	failingEnd := start.Add(steps[3].To)
	for _, pod := range pods {
		if stopped := runner.firstStop(pod); stopped.Before(failingEnd) {
			t.Errorf("runner %s stopped %s before the failing step ended", pod.Name, failingEnd.Sub(stopped))
		} else {
			t.Logf("runner %s stopped %s after the failing step's hold ended", pod.Name, stopped.Sub(failingEnd).Round(time.Millisecond))
		}
	}
	for _, pod := range pods {
		logs.set(pod, tw.EnvelopeLog(tw.RunnerLoad{Runner: pod.Name, Requests: 200, Failed: 16, Start: start, Duration: 13 * time.Second}), nil)
		k.Finish(pod, decide.ExitStopped, "Error")
	}
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	p := got.Status.Peak
	if p == nil || p.BreakingPoint != v1alpha1.PeakReached || p.LastHeldDevices != 60 || p.FirstFailedDevices != 80 || len(p.Steps) != 4 {
		t.Fatalf("peak = %+v", p)
	}
	for i, st := range p.Steps {
		wantHeld := i < 3
		// Each step: both runners' requests over its 2 s hold, all judged on whole windows.
		if st.Held != wantHeld || st.Devices != int64(20*(i+1)) || st.Requests != int64(2*20*(i+1)) || st.RequestsPerSecond != ftoa(float64(20*(i+1))) {
			t.Errorf("step %d = %+v", i, st)
		}
	}
	if p.Steps[3].ErrorPercent != "20.00" || !strings.Contains(p.StopRule, "errors 20.00% > 5%") {
		t.Errorf("failing step %+v rule %q", p.Steps[3], p.StopRule)
	}
	if got.Status.Capacity == nil || got.Status.Capacity.BreakingPointDevices != 60 {
		t.Errorf("capacity %+v", got.Status.Capacity)
	}
	if !strings.Contains(got.Status.Message, "breaking point 60 devices") {
		t.Errorf("message %q", got.Status.Message)
	}
}

func ftoa(v float64) string { return fmt.Sprintf("%.2f", v) }
