package runners

import (
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

func TestWindowFollowsTheRunsLength(t *testing.T) {
	for _, tc := range []struct {
		length time.Duration
		want   time.Duration
	}{
		{0, 10 * time.Second}, // only the script knows: the runner's default (it reads the script's plan)
		{-time.Second, 10 * time.Second},
		{time.Second, 100 * time.Millisecond}, // the runner's floor: 10 windows
		{2 * time.Second, 100 * time.Millisecond},
		{5 * time.Second, 200 * time.Millisecond},
		{10 * time.Second, 250 * time.Millisecond},
		{15 * time.Second, 500 * time.Millisecond},
		{20 * time.Second, 500 * time.Millisecond},
		{21 * time.Second, time.Second},
		{30 * time.Second, time.Second}, // the quickstart: 30 windows, not 3
		{40 * time.Second, time.Second},
		{41 * time.Second, 2 * time.Second},
		{time.Minute, 2 * time.Second},
		{2 * time.Minute, 3 * time.Second},
		{150 * time.Second, 5 * time.Second},
		{200 * time.Second, 5 * time.Second},
		{5 * time.Minute, 10 * time.Second},
		{10 * time.Minute, 10 * time.Second},
		{48 * time.Hour, 10 * time.Second}, // the runners double it past their cap
	} {
		got := WindowFor(tc.length)
		if got != tc.want {
			t.Errorf("WindowFor(%s) = %s, want %s", tc.length, got, tc.want)
		}
		if got < measure.MinWindow || time.Minute%got != 0 {
			t.Errorf("WindowFor(%s) = %s: not a width that divides a minute, at least the runner's floor", tc.length, got)
		}
		// At least 20 points on the charts; room under the runners' cap for the paused start
		// and the linger: no coarsening.
		n := int(tc.length / got)
		if tc.length >= 2*time.Second && got < DefaultWindow && (n > windowsPerRun || n < windowsPerRun/2) {
			t.Errorf("WindowFor(%s) = %s gives %d windows, want %d to %d", tc.length, got, n, windowsPerRun/2, windowsPerRun)
		}
	}
	if windowsPerRun*3/2 > measure.DefaultCollectorConfig.MaxWindows {
		t.Errorf("%d windows a run leave too little of the cap of %d for the start and the linger", windowsPerRun, measure.DefaultCollectorConfig.MaxWindows)
	}
	if DefaultWindow != measure.DefaultCollectorConfig.Window {
		t.Errorf("DefaultWindow %s is not the runner output's default %s", DefaultWindow, measure.DefaultCollectorConfig.Window)
	}
}

func TestSampleIntervalFollowsTheRunsLength(t *testing.T) {
	for length, want := range map[time.Duration]time.Duration{
		0:                30 * time.Second, // unknown: every 30 s, as before
		10 * time.Second: 2 * time.Second,  // the floor: a kubelet call per node each time
		30 * time.Second: 2 * time.Second,  // the quickstart: 15 samples, not 2
		time.Minute:      2 * time.Second,
		90 * time.Second: 3 * time.Second,
		5 * time.Minute:  10 * time.Second,
		7 * time.Minute:  14 * time.Second,
		15 * time.Minute: 30 * time.Second,
		48 * time.Hour:   30 * time.Second,
	} {
		if got := SampleIntervalFor(length); got != want {
			t.Errorf("SampleIntervalFor(%s) = %s, want %s", length, got, want)
		}
	}
}

// The runners' Jobs carry the window: a short run's, none for a long or script-only run (the
// runner's default), and a peak test keeps its own.
func TestJobWindowFollowsTheRunsLength(t *testing.T) {
	window := func(tr *v1alpha1.TestRun) string {
		return envOf(Job(tr, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0])["K6_FLEETBENCH_WINDOW"]
	}
	quick := tw.MakeTestRun("q", "ns").Devices(200, "1s").Duration("30s").Obj()
	if got := window(quick); got != "1s" {
		t.Errorf("a 30 s run's window is %q, want 1s", got)
	}
	ramped := tw.MakeTestRun("r", "ns").Devices(200, "1s").Duration("60s").Obj()
	ramped.Spec.Load.RampUp = "60s"
	if got := window(ramped); got != "3s" {
		t.Errorf("a run of 60 s ramp and 60 s hold has window %q, want 3s", got)
	}
	warm := tw.MakeTestRun("b", "ns").Type(v1alpha1.TestTypeBenchmark).Devices(100, "1s").Duration("30s").
		Benchmark(&v1alpha1.BenchmarkSpec{WarmUp: "30s"}).Obj()
	if got := window(warm); got != "2s" {
		t.Errorf("a 30 s benchmark after a 30 s warm-up has window %q, want 2s (the warm-up is measured too)", got)
	}
	for _, tr := range []*v1alpha1.TestRun{
		tw.MakeTestRun("long", "ns").Devices(1000, "200s").Duration("2h").Obj(),
		tw.MakeTestRun("script", "ns").Obj(),
	} {
		if got := window(tr); got != "" {
			t.Errorf("%s: window %q, want the runner's default", tr.Name, got)
		}
	}
}
