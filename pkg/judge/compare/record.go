// Package compare judges a run against its baseline: per metric, the ratio to the baseline,
// seed 000's bands, and a test of whether the difference is more than noise. It makes no
// client calls; the controller hands it two Records and writes what it returns.
package compare

import "time"

// Record is what a finished run keeps for later comparisons: the whole run's value and the
// per-window series of every comparable metric. It outlives its TestRun (the controller keeps
// it in a ConfigMap no TestRun owns), so a run deleted by its TTL is still a baseline.
type Record struct {
	// Run identifies the run the record was made from.
	Run RunRef `json:"run"`
	// WindowSeconds is the length of one window of Series.Windows.
	WindowSeconds float64 `json:"windowSeconds"`
	// Series has one entry per comparable metric and stat.
	Series []Series `json:"series"`
	// Shape is the experiment the run was (type, Profile, load, script); nil in a record kept
	// before records carried it, whose shape cannot be checked.
	Shape *Shape `json:"shape,omitempty"`
}

// RunRef names the run a Record was made from.
type RunRef struct {
	Name           string            `json:"name"`
	UID            string            `json:"uid"`
	CompletionTime time.Time         `json:"completionTime"`
	Labels         map[string]string `json:"labels,omitempty"`
	// Verdict is the run's verdict (PASSED, FAILED, ...), so a selector can skip failed runs.
	Verdict string `json:"verdict,omitempty"`
}

// Series is one metric's values: the whole run's, and one per window in time order (for the
// target: one per sample). Built-in names: throughput (req/s), latencyP95 and latencyP99
// (ms), targetMemory (MiB), targetCPU (cores). Any other name is a k6 metric with an optional
// tag filter, as in status.results.metrics, with Stat saying which of its numbers.
type Series struct {
	Name    string    `json:"name"`
	Stat    string    `json:"stat,omitempty"`
	Unit    string    `json:"unit,omitempty"`
	Whole   float64   `json:"whole"`
	Windows []float64 `json:"windows,omitempty"`
}
