package runenv

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

// Event reasons of the warnings where a split fleet differs from one k6 process. The events
// API folds events of one reason and action into a series whatever their notes, so each kind
// has its own reason and one event.
const (
	EventZeroVUSegment      = "ZeroVUSegment"
	EventPerRunnerNumbering = "PerRunnerNumbering"
	EventThresholdNoData    = "ThresholdOnNoData"
	// EventRunnerMemoryLeak: a runner's own memory leaks (status.runners.memory.trend).
	EventRunnerMemoryLeak = "RunnerMemoryLeak"
	maxEventNote          = 1000 // events.k8s.io refuses a note of 1 KiB or more
	PreflightLogLines     = 2000
	MaxPreflightLogBytes  = 1 << 20
	PerRunnerNumberingFix = "each k6 process numbers its own VUs from 1 and each VU its iterations from 0, so with %d runners " +
		"these numbers repeat across runners and do not match one k6 process; use exec.vu.idInTest and " +
		"exec.scenario.iterationInTest (import exec from 'k6/execution') for numbers unique in the whole test"
)

// Warn records warnings of one kind as one Warning event on the TestRun (status has each whole).
func (r *Env) Warn(run *v1alpha1.TestRun, reason, action string, warnings []string) {
	if len(warnings) > 0 {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, reason, action, "%s", statusbound.Cut(strings.Join(warnings, "; "), maxEventNote))
	}
}
