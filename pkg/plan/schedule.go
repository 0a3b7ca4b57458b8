package plan

import (
	"fmt"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Child is what the world shows of one cell.
type Child struct {
	// Run is the child TestRun; nil when none exists.
	Run *v1alpha1.TestRun
	// ProfileMissing: the cell's profile does not exist; the cell fails without a child.
	ProfileMissing bool
	// TargetGone: the child's target namespace no longer exists (or it never had one).
	TargetGone bool
}

func (c Child) finished() bool {
	return c.Run != nil && (c.Run.Status.Phase == v1alpha1.PhaseSucceeded || c.Run.Status.Phase == v1alpha1.PhaseFailed)
}

// failed: the cell could not be measured (its child ended Failed, or it has no profile). A
// FAILED verdict is a measurement, often the one a sweep looks for, not a failure.
func (c Child) failed() bool {
	return c.ProfileMissing || (c.Run != nil && c.Run.Status.Phase == v1alpha1.PhaseFailed)
}

func (c Child) done() bool    { return c.ProfileMissing || c.finished() }
func (c Child) running() bool { return c.Run != nil && !c.finished() }

// Decision is what the plan does now and how it stands.
type Decision struct {
	// Create are the cells whose children are created now.
	Create []Cell
	// Phase, Reason and Message of the plan.
	Phase, Reason, Message string
	Done, Total            int
	// AllMeasured: every cell's child ran to Succeeded.
	AllMeasured bool
	// Regressed: the comparison with spec.baseline regressed.
	Regressed bool
	// Undecided is the verdict the comparison's undecided cells give a plan that would pass
	// (spec.baseline.onUndecided: INCONCLUSIVE or FAILED); "" when every cell was judged or
	// onUndecided is Pass.
	Undecided v1alpha1.Verdict
}

// Decide picks the cells to start and the plan's phase. Serial starts the next cell only when
// no child runs and every finished child's target namespace is gone; Parallel keeps up to
// maxParallel children running. StopOnFailure starts nothing after a failed cell.
func Decide(spec *v1alpha1.CapacityPlanSpec, cells []Cell, children []Child) Decision {
	d := Decision{Total: len(cells), AllMeasured: true}
	running, targetsLeft := 0, 0
	var failed *Cell
	for i := range cells {
		c := children[i]
		if c.done() {
			d.Done++
		}
		if c.running() {
			running++
		}
		if c.finished() && !c.TargetGone {
			targetsLeft++
		}
		if c.failed() && failed == nil {
			failed = &cells[i]
		}
		if c.failed() || !c.done() {
			d.AllMeasured = false
		}
	}
	switch {
	case failed != nil && spec.FailurePolicy == v1alpha1.FailureStop:
		d.Phase, d.Reason = v1alpha1.PlanFailed, v1alpha1.ReasonChildFailed
		what := fmt.Sprintf("cell %d: Profile %q does not exist", failed.Index, failed.Profile)
		if run := children[failed.Index].Run; run != nil {
			what = fmt.Sprintf("child %s failed (%s)", run.Name, run.Status.Reason)
		}
		d.Message = fmt.Sprintf("%s and failurePolicy is StopOnFailure: no further child starts; %d of %d cells done", what, d.Done, d.Total)
		return d
	case d.Done == d.Total:
		d.Phase, d.Reason = v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted
		d.Message = fmt.Sprintf("all %d cells done", d.Total)
		if !d.AllMeasured {
			d.Message += "; some could not be measured: see the rows with phase Failed"
		}
		return d
	}

	slots := 1
	if spec.Concurrency == v1alpha1.ConcurrencyParallel {
		slots = 2
		if spec.MaxParallel != nil {
			slots = int(*spec.MaxParallel)
		}
	}
	d.Phase, d.Reason = v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren
	if spec.Concurrency != v1alpha1.ConcurrencyParallel && running == 0 && targetsLeft > 0 {
		d.Reason = v1alpha1.ReasonWaitingForTargetNamespace
		d.Message = fmt.Sprintf("%d of %d cells done; the next starts once the previous child's target is deleted", d.Done, d.Total)
		return d
	}
	for i := range cells {
		if running+len(d.Create) >= slots {
			break
		}
		if children[i].Run == nil && !children[i].ProfileMissing {
			d.Create = append(d.Create, cells[i])
		}
	}
	d.Message = fmt.Sprintf("%d of %d cells done, %d running", d.Done, d.Total, running+len(d.Create))
	return d
}
