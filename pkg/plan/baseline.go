package plan

import (
	"fmt"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// BaselineWait bounds how long a plan whose cells are all done waits for its baseline plan
// to end: plans run for hours, so a day, after which onMissing decides.
const BaselineWait = 24 * time.Hour

// BaselineStep is what a plan with spec.baseline does about it now.
type BaselineStep struct {
	// Write is the comparison to write now; nil when there is nothing new (none yet, or it
	// was written before: it is written once).
	Write *v1alpha1.PlanComparison
	// Missing says why there is no baseline, for an event; "" otherwise.
	Missing string
	// Deadline is set while the plan waits for its baseline plan to end.
	Deadline time.Time
}

// Baseline applies spec.baseline to the plan's decision d. base is the baseline plan (nil
// when none of that name exists); doneSince is when the last cell was done, from which the
// wait for a baseline still running is counted. The comparison is made once, when every cell
// is done and the baseline plan Succeeded; a baseline missing or Failed ends the plan Failed
// BaselineNotFound at once with onMissing Fail (before its children run when it is missing
// from the start), and keeps the table without a comparison with Warn, once the cells are
// done (the baseline may still appear until then).
func Baseline(p, base *v1alpha1.CapacityPlan, d Decision, doneSince, now time.Time) (Decision, BaselineStep) {
	spec := p.Spec.Baseline
	var step BaselineStep
	if spec == nil {
		return d, step
	}
	if c := p.Status.Comparison; c != nil {
		return applied(d, spec, c), step
	}
	if d.Phase == v1alpha1.PlanFailed {
		return d, step // StopOnFailure ended it: no table to compare
	}
	done := d.Phase == v1alpha1.PlanSucceeded
	var missing string
	switch {
	case base == nil:
		missing = fmt.Sprintf("no CapacityPlan %s in namespace %s: run the baseline plan first, or set spec.baseline.onMissing: Warn to keep the table without a comparison", spec.Name, p.Namespace)
	case base.Status.Phase == v1alpha1.PlanFailed:
		missing = fmt.Sprintf("CapacityPlan %s ended Failed (%s): its table is not a baseline; name a plan that Succeeded", spec.Name, base.Status.Reason)
	case base.Status.Phase != v1alpha1.PlanSucceeded:
		if !done {
			return d, step
		}
		deadline := doneSince.Add(BaselineWait)
		if now.Before(deadline) {
			d.Phase, d.Reason = v1alpha1.PlanRunning, v1alpha1.ReasonWaitingForBaseline
			d.Message = fmt.Sprintf("all %d cells done; waiting for the baseline CapacityPlan %s to end (progress %s), until %s",
				d.Total, spec.Name, base.Status.Progress, deadline.UTC().Format(time.RFC3339))
			step.Deadline = deadline
			return d, step
		}
		missing = fmt.Sprintf("the baseline CapacityPlan %s was still running %s after this plan's cells were done; compare again with a plan that has ended", spec.Name, BaselineWait)
	case done:
		c := ComparePlans(base, p)
		step.Write = &c
		return applied(d, spec, &c), step
	default:
		return d, step
	}
	if spec.OnMissing != v1alpha1.BaselineMissingWarn || done {
		step.Missing = missing
		step.Write = &v1alpha1.PlanComparison{Message: truncateMessage("no baseline: " + missing)}
		return applied(d, spec, step.Write), step
	}
	return d, step
}

// applied is d with a written comparison's consequence: no baseline with onMissing Fail ends
// the plan Failed; a regression marks it Regressed and says where; cells left undecided make
// it what spec.baseline.onUndecided says, and are named.
func applied(d Decision, spec *v1alpha1.PlanBaselineSpec, c *v1alpha1.PlanComparison) Decision {
	switch {
	case c.Baseline == nil && spec.OnMissing != v1alpha1.BaselineMissingWarn:
		d.Create = nil
		d.Phase, d.Reason, d.Message = v1alpha1.PlanFailed, v1alpha1.ReasonBaselineNotFound, c.Message
	case c.Baseline == nil && d.Phase == v1alpha1.PlanSucceeded:
		d.Message += "; " + c.Message
	case c.Decision == v1alpha1.ComparisonRegressed:
		d.Regressed = true
		d.Message += fmt.Sprintf("; regressed against CapacityPlan %s: %s", c.Baseline.Name, c.Worst)
	case c.Decision != "":
		d.Message += fmt.Sprintf("; compared with CapacityPlan %s: %s", c.Baseline.Name, c.Decision)
		d = undecided(d, spec.OnUndecided, c)
	}
	return d
}
