package decide

import (
	"sort"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// Timeouts are the defaults of spec.timeouts.
type Timeouts struct {
	Provisioning time.Duration
	RunnersReady time.Duration
	// RunGrace is added to the expected length of the load.
	RunGrace time.Duration
	// RunUnknown bounds a load whose length only the script knows.
	RunUnknown time.Duration
	Collection time.Duration
}

// DefaultTimeouts are documented on v1alpha1.TimeoutsSpec.
var DefaultTimeouts = Timeouts{
	Provisioning: 10 * time.Minute,
	RunnersReady: 5 * time.Minute,
	RunGrace:     10 * time.Minute,
	RunUnknown:   time.Hour,
	Collection:   2 * time.Minute,
}

func IsFinished(run *v1alpha1.TestRun) bool {
	return run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed
}

// RunLength is how long the load may run: spec.timeouts.run, else its expected length and a
// grace, else the bound for a load only the script knows.
func RunLength(run *v1alpha1.TestRun, t Timeouts) time.Duration {
	if run.Spec.Timeouts != nil && run.Spec.Timeouts.Run != "" {
		return rc.Timeout(run.Spec.Timeouts.Run, t.RunUnknown)
	}
	if expected := runners.ExpectedDuration(&run.Spec); expected > 0 {
		return expected + t.RunGrace
	}
	return t.RunUnknown
}

// ResolveTimeouts applies the operator's defaults to spec.timeouts, once per reconcile.
func ResolveTimeouts(run *v1alpha1.TestRun, defaults Timeouts) Timeouts {
	spec := v1alpha1.TimeoutsSpec{}
	if run.Spec.Timeouts != nil {
		spec = *run.Spec.Timeouts
	}
	t := defaults
	t.Provisioning = rc.Timeout(spec.Provisioning, defaults.Provisioning)
	t.RunnersReady = rc.Timeout(spec.RunnersReady, defaults.RunnersReady)
	t.Collection = rc.Timeout(spec.Collection, defaults.Collection)
	return t
}

// LastEnd is when the last runner's container ended, from pod status, or its load, from the
// final envelope it handed over; creation time at worst.
func LastEnd(s *Scope) time.Time {
	var ends []time.Time
	for _, rs := range s.Runners {
		if rs.Final != nil {
			ends = append(ends, time.Unix(0, rs.Final.EndUnixNano))
		}
		if rs.Pod == nil {
			continue
		}
		for _, cs := range rs.Pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				ends = append(ends, t.FinishedAt.Time)
			}
		}
	}
	if len(ends) == 0 {
		if s.StartTime() != nil {
			return s.Now
		}
		return s.Run.CreationTimestamp.Time
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	return ends[len(ends)-1]
}
