// Package decide is the TestRun reconcile's pure part: the scope one reconcile fills (the run,
// its runners classified once, what each phase decided), the classification of runner pods,
// the outcome gathered for pkg/judge/verdict, and the status composed once from the decisions
// (compose.go, the only writer of status). Every stage uses it; it calls no client.
package decide

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
)

// Decision is what one reconcile decided about its TestRun. The phases and finish record it
// here instead of writing status; composeStatus turns it, with the scope, into the status.
type Decision struct {
	// standings are the phases, reasons and messages the run moved through, in order; the
	// last is where it stands (none: it stays where it was). Each is announced by an event.
	standings []standingChange
	// Ending is how the run ended in this reconcile (finish, collection); nil while it goes on.
	Ending *Ending
	// StartSkew is the spread of the runners' start acknowledgements, once they were started.
	StartSkew string
	// Profile is the Profile's snapshot, fixed in this reconcile (reconcileProfile).
	Profile *v1alpha1.ProfileSnapshot
	// TargetNamespace is the target's namespace, once proven the run's (or the admin's shared one).
	TargetNamespace string
	// Admission is where Kueue's admission puts the pods, fixed when Kueue admitted the run
	// (ReconcileQueue).
	Admission *v1alpha1.QueueAdmission

	// conditions are the conditions set in this reconcile, in order (a later one of a type
	// replaces an earlier); each keeps the transition time of when it was decided.
	conditions []metav1.Condition
	// The status fields decided in this reconcile; nil: as it was. The readers below give a
	// later phase of the same reconcile what was decided.
	StartTime      *metav1.Time
	Results        *v1alpha1.Results
	GeneratorBound *GeneratorBound
	Progress       *v1alpha1.Progress
	Capacity       *v1alpha1.CapacityResult
	Peak           *v1alpha1.PeakResult
	Target         *v1alpha1.TargetUsage
	AbortOnFail    *v1alpha1.AbortWatch
	// RunnerMemory is status.runners.memory, decided when the results are merged.
	RunnerMemory *v1alpha1.RunnerMemory
	// Parallelism is status.parallelism, chosen once (reconcileParallelism); suggestedParallelism
	// the runners a generator-bound run needs (judgeParallelism).
	Parallelism          *v1alpha1.ParallelismStatus
	SuggestedParallelism int32
	// Gaps is status.gaps: the runners lost and replaced (replace.go).
	Gaps *[]v1alpha1.RunnerGap
	// Comparison is status.comparison: the pinned baseline (reconcileBaseline), then the
	// comparison with it (judgeBaseline); composeComparison writes each once.
	Comparison *v1alpha1.Comparison
	// Reference is status.referenceComparison, written as Comparison is.
	Reference *v1alpha1.Comparison
	// ScriptDigest is status.scriptDigest, recorded once the script is found.
	ScriptDigest string
	// PlannedDuration is status.plannedDuration, recorded from the pre-flight's report.
	PlannedDuration string
	// Trend is status.trend, decided when the results are merged (spec.trend).
	Trend *v1alpha1.TrendResult
	// Zones are a zoned run's rows, rebuilt from its zone runs every reconcile (provision/zones.go).
	Zones []ZoneRow
	// ZoneRun is status.zoneRun, what a zone run reports home: armed, started, envelopes.
	ZoneRun *v1alpha1.ZoneRunStatus
}

// GeneratorBound is whether the runners, not the target, limited the load, and why.
type GeneratorBound struct {
	Bound  bool
	Reason string
}

// standingChange is a phase, its reason (a constant of api/v1alpha1) and a message.
type standingChange struct {
	Phase           v1alpha1.TestRunPhase
	Reason, Message string
}

// Enter records that the run is in phase for reason, saying message.
func (s *Scope) Enter(phase v1alpha1.TestRunPhase, reason, message string) {
	s.Decided.standings = append(s.Decided.standings, standingChange{phase, reason, message})
}

// standing is where the run stands as decided in this reconcile; nil: unchanged.
func (d *Decision) standing() *standingChange {
	if len(d.standings) == 0 {
		return nil
	}
	return &d.standings[len(d.standings)-1]
}

// Phase is the run's phase as decided so far in this reconcile.
func (s *Scope) Phase() v1alpha1.TestRunPhase {
	switch {
	case s.Decided.Ending != nil:
		return s.Decided.Ending.Phase
	case s.Decided.standing() != nil:
		return s.Decided.standing().Phase
	case s.Run.Status.Phase == "":
		return v1alpha1.PhasePending
	}
	return s.Run.Status.Phase
}

// RecordCondition records that the condition typ is now status, for reason (a constant of
// api/v1alpha1), saying message. It is stamped now, as meta.SetStatusCondition would stamp it,
// so that a reader in this reconcile and the composed status agree on its transition time.
func (s *Scope) RecordCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	s.Decided.conditions = append(s.Decided.conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: rc.Truncate(message, rc.MaxConditionMessage), ObservedGeneration: s.Run.Generation, LastTransitionTime: metav1.Now()})
}

// Conditions are the run's conditions with those decided in this reconcile applied.
func (s *Scope) Conditions() []metav1.Condition {
	if len(s.Decided.conditions) == 0 {
		return s.Run.Status.Conditions
	}
	conds := slices.Clone(s.Run.Status.Conditions)
	applyConditions(&conds, s.Decided.conditions)
	return conds
}

// Condition is the condition typ as decided so far in this reconcile; nil: not set.
func (s *Scope) Condition(typ string) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions(), typ)
}

// ConditionTrue says whether the condition typ is True as decided so far in this reconcile.
func (s *Scope) ConditionTrue(typ string) bool {
	return meta.IsStatusConditionTrue(s.Conditions(), typ)
}

// StartTime is when the runners were started, as decided so far; nil before the start.
func (s *Scope) StartTime() *metav1.Time {
	if s.Decided.StartTime != nil {
		return s.Decided.StartTime
	}
	return s.Run.Status.StartTime
}

// Admission is where Kueue's admission puts the run's pods, as decided so far; nil for a run
// Kueue did not admit. Not to be changed in place.
func (s *Scope) Admission() *v1alpha1.QueueAdmission {
	if s.Decided.Admission != nil {
		return s.Decided.Admission
	}
	return s.Run.Status.Admission
}

// Results are the run's results as decided so far. Not to be changed in place: a change is a
// copy recorded in s.d.results.
func (s *Scope) Results() *v1alpha1.Results {
	if s.Decided.Results != nil {
		return s.Decided.Results
	}
	return s.Run.Status.Results
}

// Progress is status.progress as decided so far.
func (s *Scope) Progress() *v1alpha1.Progress {
	if s.Decided.Progress != nil {
		return s.Decided.Progress
	}
	return s.Run.Status.Progress
}

// Capacity is status.capacity as decided so far; not to be changed in place.
func (s *Scope) Capacity() *v1alpha1.CapacityResult {
	if s.Decided.Capacity != nil {
		return s.Decided.Capacity
	}
	return s.Run.Status.Capacity
}

// Peak is status.peak as decided so far; not to be changed in place.
func (s *Scope) Peak() *v1alpha1.PeakResult {
	if s.Decided.Peak != nil {
		return s.Decided.Peak
	}
	return s.Run.Status.Peak
}

// Target is status.target as decided so far; not to be changed in place.
func (s *Scope) Target() *v1alpha1.TargetUsage {
	if s.Decided.Target != nil {
		return s.Decided.Target
	}
	return s.Run.Status.Target
}

// Gaps is status.gaps as decided so far; not to be changed in place.
func (s *Scope) Gaps() []v1alpha1.RunnerGap {
	if s.Decided.Gaps != nil {
		return *s.Decided.Gaps
	}
	return s.Run.Status.Gaps
}

// AbortOnFail is status.abortOnFail as decided so far; not to be changed in place.
func (s *Scope) AbortOnFail() *v1alpha1.AbortWatch {
	if s.Decided.AbortOnFail != nil {
		return s.Decided.AbortOnFail
	}
	return s.Run.Status.AbortOnFail
}
