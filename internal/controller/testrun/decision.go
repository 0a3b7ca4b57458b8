package testrun

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
)

// decision is what one reconcile decided about its TestRun. The phases and finish record it
// here instead of writing status; composeStatus turns it, with the scope, into the status.
type decision struct {
	// standings are the phases, reasons and messages the run moved through, in order; the
	// last is where it stands (none: it stays where it was). Each is announced by an event.
	standings []standingChange
	// ending is how the run ended in this reconcile (finish, collection); nil while it goes on.
	ending *ending
	// startSkew is the spread of the runners' start acknowledgements, once they were started.
	startSkew string
	// profile is the Profile's snapshot, fixed in this reconcile (reconcileProfile).
	profile *v1alpha1.ProfileSnapshot
	// targetNamespace is the target's namespace, once proven the run's (or the admin's shared one).
	targetNamespace string

	// conditions are the conditions set in this reconcile, in order (a later one of a type
	// replaces an earlier); each keeps the transition time of when it was decided.
	conditions []metav1.Condition
	// The status fields decided in this reconcile; nil: as it was. The readers below give a
	// later phase of the same reconcile what was decided.
	startTime      *metav1.Time
	results        *v1alpha1.Results
	generatorBound *generatorBound
	progress       *v1alpha1.Progress
	capacity       *v1alpha1.CapacityResult
	peak           *v1alpha1.PeakResult
	target         *v1alpha1.TargetUsage
	abortOnFail    *v1alpha1.AbortWatch
	// runnerMemory is status.runners.memory, decided when the results are merged.
	runnerMemory *v1alpha1.RunnerMemory
	// parallelism is status.parallelism, chosen once (reconcileParallelism); suggestedParallelism
	// the runners a generator-bound run needs (judgeParallelism).
	parallelism          *v1alpha1.ParallelismStatus
	suggestedParallelism int32
	// gaps is status.gaps: the runners lost and replaced (replace.go).
	gaps *[]v1alpha1.RunnerGap
	// comparison is status.comparison: the pinned baseline (reconcileBaseline), then the
	// comparison with it (judgeBaseline); composeComparison writes each once.
	comparison *v1alpha1.Comparison
}

// generatorBound is whether the runners, not the target, limited the load, and why.
type generatorBound struct {
	bound  bool
	reason string
}

// standingChange is a phase, its reason (a constant of api/v1alpha1) and a message.
type standingChange struct {
	phase           v1alpha1.TestRunPhase
	reason, message string
}

// enter records that the run is in phase for reason, saying message.
func (s *scope) enter(phase v1alpha1.TestRunPhase, reason, message string) {
	s.d.standings = append(s.d.standings, standingChange{phase, reason, message})
}

// standing is where the run stands as decided in this reconcile; nil: unchanged.
func (d *decision) standing() *standingChange {
	if len(d.standings) == 0 {
		return nil
	}
	return &d.standings[len(d.standings)-1]
}

// phase is the run's phase as decided so far in this reconcile.
func (s *scope) phase() v1alpha1.TestRunPhase {
	switch {
	case s.d.ending != nil:
		return s.d.ending.phase
	case s.d.standing() != nil:
		return s.d.standing().phase
	case s.run.Status.Phase == "":
		return v1alpha1.PhasePending
	}
	return s.run.Status.Phase
}

// recordCondition records that the condition typ is now status, for reason (a constant of
// api/v1alpha1), saying message. It is stamped now, as meta.SetStatusCondition would stamp it,
// so that a reader in this reconcile and the composed status agree on its transition time.
func (s *scope) recordCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	s.d.conditions = append(s.d.conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: rc.Truncate(message, rc.MaxConditionMessage), ObservedGeneration: s.run.Generation, LastTransitionTime: metav1.Now()})
}

// conditions are the run's conditions with those decided in this reconcile applied.
func (s *scope) conditions() []metav1.Condition {
	if len(s.d.conditions) == 0 {
		return s.run.Status.Conditions
	}
	conds := slices.Clone(s.run.Status.Conditions)
	applyConditions(&conds, s.d.conditions)
	return conds
}

// condition is the condition typ as decided so far in this reconcile; nil: not set.
func (s *scope) condition(typ string) *metav1.Condition {
	return meta.FindStatusCondition(s.conditions(), typ)
}

// conditionTrue says whether the condition typ is True as decided so far in this reconcile.
func (s *scope) conditionTrue(typ string) bool {
	return meta.IsStatusConditionTrue(s.conditions(), typ)
}

// startTime is when the runners were started, as decided so far; nil before the start.
func (s *scope) startTime() *metav1.Time {
	if s.d.startTime != nil {
		return s.d.startTime
	}
	return s.run.Status.StartTime
}

// results are the run's results as decided so far. Not to be changed in place: a change is a
// copy recorded in s.d.results.
func (s *scope) results() *v1alpha1.Results {
	if s.d.results != nil {
		return s.d.results
	}
	return s.run.Status.Results
}

// progress is status.progress as decided so far.
func (s *scope) progress() *v1alpha1.Progress {
	if s.d.progress != nil {
		return s.d.progress
	}
	return s.run.Status.Progress
}

// capacity is status.capacity as decided so far; not to be changed in place.
func (s *scope) capacity() *v1alpha1.CapacityResult {
	if s.d.capacity != nil {
		return s.d.capacity
	}
	return s.run.Status.Capacity
}

// peak is status.peak as decided so far; not to be changed in place.
func (s *scope) peak() *v1alpha1.PeakResult {
	if s.d.peak != nil {
		return s.d.peak
	}
	return s.run.Status.Peak
}

// target is status.target as decided so far; not to be changed in place.
func (s *scope) target() *v1alpha1.TargetUsage {
	if s.d.target != nil {
		return s.d.target
	}
	return s.run.Status.Target
}

// gaps is status.gaps as decided so far; not to be changed in place.
func (s *scope) gaps() []v1alpha1.RunnerGap {
	if s.d.gaps != nil {
		return *s.d.gaps
	}
	return s.run.Status.Gaps
}

// abortOnFail is status.abortOnFail as decided so far; not to be changed in place.
func (s *scope) abortOnFail() *v1alpha1.AbortWatch {
	if s.d.abortOnFail != nil {
		return s.d.abortOnFail
	}
	return s.run.Status.AbortOnFail
}
