package runners

import (
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// How finely a run is measured over time follows its length (measure.WindowFor), so that a
// 30 s run still draws a curve (30 windows, 15 target samples) and a long one stays bounded.
const (
	// DefaultWindow is the runners' window when the spec does not give the run's length (the
	// runner then chooses from its script's plan, output.New) or gives a long one; it is the
	// runner output's own default (measure.DefaultCollectorConfig).
	DefaultWindow = measure.DefaultWindow
	// windowsPerRun is how many windows a run of known length aims at (measure.WindowsPerRun).
	windowsPerRun = measure.WindowsPerRun
	// DefaultSampleInterval is how often the target is sampled when the run's length is
	// unknown or long.
	DefaultSampleInterval = 30 * time.Second
	// minDefaultSampleInterval bounds the default from below: each sample is a kubelet summary
	// call per target node, a result ConfigMap update and a status write, and wakes the run.
	minDefaultSampleInterval = 2 * time.Second
	// samplesPerRun is how many target samples a run of known length aims at.
	samplesPerRun = 30
)

// RunLength is how long the runners measure, when the spec says: the load (ExpectedDuration)
// and a benchmark's warm-up before it; zero when only the script knows.
func RunLength(spec *v1alpha1.TestRunSpec) time.Duration {
	expected := ExpectedDuration(spec)
	if expected <= 0 {
		return 0
	}
	warmUp, _ := time.ParseDuration(string(WarmUp(spec)))
	return expected + max(warmUp, 0)
}

// WindowFor is the runners' window for a run of that length (measure.WindowFor): between 20
// and 40 windows for a run of 2 s to 400 s; DefaultWindow when the length is unknown or 400 s
// and more (past 600 s the runners double it, as they always have).
func WindowFor(length time.Duration) time.Duration { return measure.WindowFor(length) }

// Window is the runners' window for the run: a peak test's own (PeakWindow), else WindowFor
// its length.
func Window(spec *v1alpha1.TestRunSpec) time.Duration {
	if spec.Type == v1alpha1.TestTypePeak && spec.Peak != nil {
		return PeakWindow(spec)
	}
	return WindowFor(RunLength(spec))
}

// SampleIntervalFor is how often the target is sampled, when spec.stability.sampleInterval
// does not say, for a run of that length: about samplesPerRun samples, whole seconds between
// minDefaultSampleInterval and DefaultSampleInterval; DefaultSampleInterval when the length is
// unknown.
func SampleIntervalFor(length time.Duration) time.Duration {
	if length <= 0 {
		return DefaultSampleInterval
	}
	return min(max((length/samplesPerRun).Truncate(time.Second), minDefaultSampleInterval), DefaultSampleInterval)
}
