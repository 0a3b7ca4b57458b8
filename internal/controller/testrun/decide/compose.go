package decide

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

// The compose step: a reconcile's status is composed here, once, from the scope (what was
// loaded) and its decision (what the phases and finish decided), as Cluster API's machine
// controller composes a Machine's status in updateStatus. internal/controller/statusshape holds
// all other code of the controller to that, on types: none writes a status but through here.

// ComposeStatus is the TestRun's status after this reconcile: the identity (testID), the
// Profile fixed at the first provisioning step, where the target is, the runner counts, the
// standing the phases moved the run to, how it ended, and the summary conditions derived from
// all that. It reads only s and its decision, and writes nothing.
func ComposeStatus(s *Scope) v1alpha1.TestRunStatus {
	run, d := s.Run, &s.Decided
	st := *run.Status.DeepCopy()
	if st.TestID == "" {
		st.TestID = naming.TestID(run.Name, string(run.UID))
	}
	if d.Profile != nil {
		st.Profile = d.Profile.DeepCopy()
	}
	if d.TargetNamespace != "" {
		st.TargetNamespace = d.TargetNamespace
	}
	if d.Admission != nil {
		st.Admission = d.Admission.DeepCopy()
	}
	composeDecided(&st, d)
	if s.Summary.Counts != nil { // the runners were loaded
		skew := d.StartSkew
		if skew == "" && st.Runners != nil {
			skew = st.Runners.StartSkew
		}
		var memory *v1alpha1.RunnerMemory
		if st.Runners != nil {
			memory = st.Runners.Memory // not the pods': kept from when the results were merged
		}
		st.Runners = s.Summary.status(skew)
		st.Runners.Memory = memory
	}
	if d.RunnerMemory != nil {
		if st.Runners == nil {
			st.Runners = &v1alpha1.RunnerCounts{}
		}
		st.Runners.Memory = d.RunnerMemory.DeepCopy()
	}
	switch {
	case d.Ending != nil:
		composeEnding(&st, s.Started(), *d.Ending, metav1.NewTime(s.Now))
	case d.standing() != nil:
		setStanding(&st, *d.standing())
	case st.Phase == "":
		setStanding(&st, standingChange{v1alpha1.PhasePending, v1alpha1.ReasonAccepted, v1alpha1.MessageAccepted})
	}
	composeSummary(&st, run.Generation)
	return st
}

// composeEnding ends the run as e says: its verdict, completion time, phase, reason and
// message; the results of a run that failed after its start cover only part of the load.
func composeEnding(st *v1alpha1.TestRunStatus, started bool, e Ending, now metav1.Time) {
	st.Verdict = e.Verdict
	if e.Phase == v1alpha1.PhaseFailed && st.Results != nil && started {
		st.Results.Partial = true
	}
	st.CompletionTime = &now
	setStanding(st, standingChange{e.Phase, e.Reason, e.Message})
}

// setStanding moves the run to a phase, reason and message (within status.message's bound).
func setStanding(st *v1alpha1.TestRunStatus, c standingChange) {
	st.Phase, st.Reason, st.Message = c.Phase, c.Reason, rc.Truncate(c.Message, rc.MaxStatusMessage)
}

// composeSummary derives observedGeneration and the summary conditions (Ready, Reconciling,
// Stalled, Complete) from the rest of the status.
func composeSummary(st *v1alpha1.TestRunStatus, generation int64) {
	st.ObservedGeneration = generation
	rc.SetSummaryConditions(&st.Conditions, generation, standing(st))
}

// ComposeFinished is the status of a run that had ended already: only what is derived, and
// how long it keeps its target when it does (KeepOf: kept, whether keepFor was cut, released).
func ComposeFinished(run *v1alpha1.TestRun, kept *KeptTarget) v1alpha1.TestRunStatus {
	st := *run.Status.DeepCopy()
	if kept != nil {
		c := kept.Condition(run.Generation)
		c.LastTransitionTime = metav1.Now()
		meta.SetStatusCondition(&st.Conditions, c)
	}
	composeSummary(&st, run.Generation)
	return st
}

// ComposeRejected is what is kept of a status the API server refused even cut to the CRD's
// bounds (statusbound.Short): the run ends Failed StatusRejected, saying why.
func ComposeRejected(st *v1alpha1.TestRunStatus, generation int64, refusal string, now metav1.Time) v1alpha1.TestRunStatus {
	short := statusbound.Short(st)
	short.Verdict = v1alpha1.VerdictFailed
	short.CompletionTime = &now
	setStanding(&short, standingChange{v1alpha1.PhaseFailed, v1alpha1.ReasonStatusRejected,
		fmt.Sprintf(v1alpha1.MessageStatusRejected, statusbound.Cut(refusal, 1024))})
	composeSummary(&short, generation)
	return short
}

// Bounded is st cut to the CRD's bounds (statusbound.TestRun), the last step before it is
// written. It cuts st's lists in place: the caller stores the result back over st.
func Bounded(st v1alpha1.TestRunStatus) v1alpha1.TestRunStatus {
	statusbound.TestRun(&st)
	return st
}

// Announced are the standing changes of this reconcile that an event and the phase metric
// record (the act step sends them): each change of phase or reason from the one before, the
// ending last. A Failed run, and one that succeeded without passing, are warnings.
func Announced(before *v1alpha1.TestRunStatus, d *Decision, after *v1alpha1.TestRunStatus) []Announcement {
	changes := d.standings
	if e := d.Ending; e != nil {
		changes = append(changes[:len(changes):len(changes)], standingChange{e.Phase, e.Reason, e.Message})
	}
	var out []Announcement
	phase, reason := before.Phase, before.Reason
	for _, c := range changes {
		if c.Phase == phase && c.Reason == reason {
			continue
		}
		phase, reason = c.Phase, c.Reason
		typ := corev1.EventTypeNormal
		if c.Phase == v1alpha1.PhaseFailed || (c.Phase == v1alpha1.PhaseSucceeded && after.Verdict != v1alpha1.VerdictPassed) {
			typ = corev1.EventTypeWarning
		}
		out = append(out, Announcement{EventType: typ, standingChange: standingChange{c.Phase, c.Reason, rc.Truncate(c.Message, rc.MaxStatusMessage)}})
	}
	return out
}

// Announcement is one standing change as an event.
type Announcement struct {
	EventType string
	standingChange
}

// composeDecided sets the status fields and conditions decided in this reconcile.
func composeDecided(st *v1alpha1.TestRunStatus, d *Decision) {
	if d.StartTime != nil {
		st.StartTime = d.StartTime.DeepCopy()
	}
	if d.Results != nil {
		st.Results = d.Results.DeepCopy()
	}
	if g := d.GeneratorBound; g != nil {
		st.GeneratorBound, st.GeneratorBoundReason = g.Bound, g.Reason
	}
	if d.Progress != nil {
		st.Progress = d.Progress.DeepCopy()
	}
	if d.Capacity != nil {
		st.Capacity = d.Capacity.DeepCopy()
	}
	if d.Peak != nil {
		st.Peak = d.Peak.DeepCopy()
	}
	if d.Target != nil {
		st.Target = d.Target.DeepCopy()
	}
	if d.AbortOnFail != nil {
		st.AbortOnFail = d.AbortOnFail.DeepCopy()
	}
	if d.Gaps != nil {
		st.Gaps = slices.Clone(*d.Gaps)
	}
	composeComparison(&st.Comparison, d.Comparison)
	composeComparison(&st.ReferenceComparison, d.Reference)
	if d.ScriptDigest != "" && st.ScriptDigest == "" {
		st.ScriptDigest = d.ScriptDigest
	}
	if d.PlannedDuration != "" && st.PlannedDuration == "" {
		st.PlannedDuration = d.PlannedDuration
	}
	if d.Trend != nil && st.Trend == nil {
		st.Trend = d.Trend.DeepCopy()
	}
	if d.Zones != nil {
		st.Zones = composeZones(d.Zones)
	}
	if d.ZoneRun != nil {
		st.ZoneRun = d.ZoneRun.DeepCopy()
	}
	composeParallelism(st, d)
	applyConditions(&st.Conditions, d.conditions)
}

// composeParallelism writes status.parallelism once, when chosen, and never changes the
// choice; a generator-bound run adds the runners it needs.
func composeParallelism(st *v1alpha1.TestRunStatus, d *Decision) {
	if d.Parallelism != nil && st.Parallelism == nil {
		st.Parallelism = d.Parallelism.DeepCopy()
	}
	if d.SuggestedParallelism > 0 && st.Parallelism != nil {
		st.Parallelism.Suggested = d.SuggestedParallelism
	}
}

// composeComparison writes a comparison (status.comparison, status.referenceComparison) when
// the baseline is pinned (or found missing), when its shape is checked, and once when it is
// decided; a decided comparison is never rewritten.
func composeComparison(st **v1alpha1.Comparison, c *v1alpha1.Comparison) {
	if c == nil || (*st != nil && (*st).Decision != "") {
		return
	}
	*st = c.DeepCopy()
}

// applyConditions sets the decided conditions on conds, in order.
func applyConditions(conds *[]metav1.Condition, decided []metav1.Condition) {
	for _, c := range decided {
		meta.SetStatusCondition(conds, c)
	}
}
