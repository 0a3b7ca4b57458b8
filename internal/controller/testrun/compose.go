package testrun

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
// controller composes a Machine's status in updateStatus. shape_test.go holds every other
// file of the package to that: none assigns status fields or sets conditions but through here.

// composeStatus is the TestRun's status after this reconcile: the identity (testID), the
// Profile fixed at the first provisioning step, where the target is, the runner counts, the
// standing the phases moved the run to, how it ended, and the summary conditions derived from
// all that. It reads only s and its decision, and writes nothing.
func composeStatus(s *scope) v1alpha1.TestRunStatus {
	run, d := s.run, &s.d
	st := *run.Status.DeepCopy()
	if st.TestID == "" {
		st.TestID = naming.TestID(run.Name, string(run.UID))
	}
	if d.profile != nil {
		st.Profile = d.profile.DeepCopy()
	}
	if d.targetNamespace != "" {
		st.TargetNamespace = d.targetNamespace
	}
	composeDecided(&st, d)
	if s.summary.counts != nil { // the runners were loaded
		skew := d.startSkew
		if skew == "" && st.Runners != nil {
			skew = st.Runners.StartSkew
		}
		var memory *v1alpha1.RunnerMemory
		if st.Runners != nil {
			memory = st.Runners.Memory // not the pods': kept from when the results were merged
		}
		st.Runners = s.summary.status(skew)
		st.Runners.Memory = memory
	}
	if d.runnerMemory != nil {
		if st.Runners == nil {
			st.Runners = &v1alpha1.RunnerCounts{}
		}
		st.Runners.Memory = d.runnerMemory.DeepCopy()
	}
	switch {
	case d.ending != nil:
		composeEnding(&st, s.started(), *d.ending, metav1.NewTime(s.now))
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
func composeEnding(st *v1alpha1.TestRunStatus, started bool, e ending, now metav1.Time) {
	st.Verdict = e.verdict
	if e.phase == v1alpha1.PhaseFailed && st.Results != nil && started {
		st.Results.Partial = true
	}
	st.CompletionTime = &now
	setStanding(st, standingChange{e.phase, e.reason, e.message})
}

// setStanding moves the run to a phase, reason and message (within status.message's bound).
func setStanding(st *v1alpha1.TestRunStatus, c standingChange) {
	st.Phase, st.Reason, st.Message = c.phase, c.reason, rc.Truncate(c.message, rc.MaxStatusMessage)
}

// composeSummary derives observedGeneration and the summary conditions (Ready, Reconciling,
// Stalled, Complete) from the rest of the status.
func composeSummary(st *v1alpha1.TestRunStatus, generation int64) {
	st.ObservedGeneration = generation
	rc.SetSummaryConditions(&st.Conditions, generation, standing(st))
}

// composeFinished is the status of a run that had ended already: only what is derived.
func composeFinished(run *v1alpha1.TestRun) v1alpha1.TestRunStatus {
	st := *run.Status.DeepCopy()
	composeSummary(&st, run.Generation)
	return st
}

// composeRejected is what is kept of a status the API server refused even cut to the CRD's
// bounds (statusbound.Short): the run ends Failed StatusRejected, saying why.
func composeRejected(st *v1alpha1.TestRunStatus, generation int64, refusal string, now metav1.Time) v1alpha1.TestRunStatus {
	short := statusbound.Short(st)
	short.Verdict = v1alpha1.VerdictFailed
	short.CompletionTime = &now
	setStanding(&short, standingChange{v1alpha1.PhaseFailed, v1alpha1.ReasonStatusRejected,
		fmt.Sprintf(v1alpha1.MessageStatusRejected, statusbound.Cut(refusal, 1024))})
	composeSummary(&short, generation)
	return short
}

// announced are the standing changes of this reconcile that an event and the phase metric
// record (the act step sends them): each change of phase or reason from the one before, the
// ending last. A Failed run, and one that succeeded without passing, are warnings.
func announced(before *v1alpha1.TestRunStatus, d *decision, after *v1alpha1.TestRunStatus) []announcement {
	changes := d.standings
	if e := d.ending; e != nil {
		changes = append(changes[:len(changes):len(changes)], standingChange{e.phase, e.reason, e.message})
	}
	var out []announcement
	phase, reason := before.Phase, before.Reason
	for _, c := range changes {
		if c.phase == phase && c.reason == reason {
			continue
		}
		phase, reason = c.phase, c.reason
		typ := corev1.EventTypeNormal
		if c.phase == v1alpha1.PhaseFailed || (c.phase == v1alpha1.PhaseSucceeded && after.Verdict != v1alpha1.VerdictPassed) {
			typ = corev1.EventTypeWarning
		}
		out = append(out, announcement{eventType: typ, standingChange: standingChange{c.phase, c.reason, rc.Truncate(c.message, rc.MaxStatusMessage)}})
	}
	return out
}

// announcement is one standing change as an event.
type announcement struct {
	eventType string
	standingChange
}

// composeDecided sets the status fields and conditions decided in this reconcile.
func composeDecided(st *v1alpha1.TestRunStatus, d *decision) {
	if d.startTime != nil {
		st.StartTime = d.startTime.DeepCopy()
	}
	if d.results != nil {
		st.Results = d.results.DeepCopy()
	}
	if g := d.generatorBound; g != nil {
		st.GeneratorBound, st.GeneratorBoundReason = g.bound, g.reason
	}
	if d.progress != nil {
		st.Progress = d.progress.DeepCopy()
	}
	if d.capacity != nil {
		st.Capacity = d.capacity.DeepCopy()
	}
	if d.peak != nil {
		st.Peak = d.peak.DeepCopy()
	}
	if d.target != nil {
		st.Target = d.target.DeepCopy()
	}
	if d.abortOnFail != nil {
		st.AbortOnFail = d.abortOnFail.DeepCopy()
	}
	if d.gaps != nil {
		st.Gaps = slices.Clone(*d.gaps)
	}
	composeComparison(st, d.comparison)
	composeParallelism(st, d)
	applyConditions(&st.Conditions, d.conditions)
}

// composeParallelism writes status.parallelism once, when chosen, and never changes the
// choice; a generator-bound run adds the runners it needs.
func composeParallelism(st *v1alpha1.TestRunStatus, d *decision) {
	if d.parallelism != nil && st.Parallelism == nil {
		st.Parallelism = d.parallelism.DeepCopy()
	}
	if d.suggestedParallelism > 0 && st.Parallelism != nil {
		st.Parallelism.Suggested = d.suggestedParallelism
	}
}

// composeComparison writes status.comparison once when the baseline is pinned (or found
// missing) and once when the comparison is decided; a decided comparison is never rewritten.
func composeComparison(st *v1alpha1.TestRunStatus, c *v1alpha1.Comparison) {
	if c == nil || (st.Comparison != nil && (st.Comparison.Decision != "" || c.Decision == "")) {
		return
	}
	st.Comparison = c.DeepCopy()
}

// applyConditions sets the decided conditions on conds, in order.
func applyConditions(conds *[]metav1.Condition, decided []metav1.Condition) {
	for _, c := range decided {
		meta.SetStatusCondition(conds, c)
	}
}
