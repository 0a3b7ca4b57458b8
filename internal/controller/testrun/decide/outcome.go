package decide

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/judge/shift"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
)

// Collected is what the collection phase gathered once every runner ended.
type Collected struct {
	Runners RunnerSummary
	// Report is the merged results, nil when no runner's envelope could be read or merged.
	Report *judge.Outcome
	// Problems name the envelopes that could not be read or merged.
	Problems []string
	// RunDeadline is when the load had to end; zero where the run never started.
	RunDeadline time.Time
	Now         time.Time
	// TargetProblems fail the verdict: restarts, memory growth, log findings.
	TargetProblems []string
	// Uncounted are log patterns with failAbove counted on part of the logs only.
	Uncounted []string
	// Peak is a peak test's climb, for the message.
	Peak *v1alpha1.PeakResult
	// Abort, when it says what was aborted, fails the verdict as k6's abortOnFail does.
	Abort *v1alpha1.AbortWatch
	// targetLost says how the target went away while the load ran; "" if it did not.
	targetLost string
	// Gaps are the runners lost and replaced; maxGaps, when set, is how many may pass.
	Gaps    []v1alpha1.RunnerGap
	MaxGaps *int32
	// RunnerLeak says that a runner's own memory leaks: the generator's fault, said in the
	// message and never a failure of the target (judge.RunnerLeakWarning).
	RunnerLeak string
	// Comparison is the comparison with the pinned baseline, once decided; OnUndecided is
	// spec.baseline.onUndecided, what its rows that decided nothing make of a passing run.
	Comparison  *v1alpha1.Comparison
	OnUndecided v1alpha1.BaselineOnUndecided
	// Reference is the comparison with spec.baseline.reference, once decided.
	Reference *v1alpha1.Comparison
	// Trend is status.trend, and TrendOnShift spec.trend.onShift.
	Trend        *v1alpha1.TrendResult
	TrendOnShift v1alpha1.TrendOnShift
}

// Ending is how a run ends, as verdict.Decide decided it.
type Ending = verdict.Ending

// FailedEnding ends a run Failed by a failure an earlier phase recorded.
func FailedEnding(f Failure) Ending { return verdict.Decide(verdict.Facts{Failed: &f}) }

// Outcome gathers the facts of a run that reached collection for verdict.Decide: what stopped
// the load early (the target lost, a runner failed, the run deadline), the merged results, the
// script's test.fail() and test.abort(), the target's health, gaps and the comparison.
func Outcome(c Collected) Ending {
	f := verdict.Facts{Runner: c.Runners.RunFailure(), TargetLost: c.targetLost, Problems: c.Problems,
		TargetProblems: c.TargetProblems, Uncounted: c.Uncounted, Peak: c.Peak, RunnerLeak: c.RunnerLeak, Gaps: len(c.Gaps), MaxGaps: c.MaxGaps,
		Comparison: c.Comparison, Reference: c.Reference, TrendRegresses: c.TrendOnShift == v1alpha1.TrendShiftRegressed}
	if c.Trend != nil {
		f.TrendWorse = shift.Worst(*c.Trend)
	}
	if _, stopped := c.Runners.first(runnerStopped); stopped && !c.RunDeadline.IsZero() && rc.Expired(c.Now, c.RunDeadline) {
		f.RunTimeout = c.RunDeadline.UTC().Format(time.RFC3339)
	}
	if c.Report != nil {
		f.Merged, f.Results = true, c.Report.Facts()
	}
	if c.Comparison != nil {
		f.Undecided, f.OnUndecided = compare.Undecided(*c.Comparison), c.OnUndecided
	}
	if c.Reference != nil {
		for _, row := range compare.Undecided(*c.Reference) {
			f.Undecided = append(f.Undecided, "against the reference: "+row)
		}
		f.OnUndecided = c.OnUndecided
	}
	if c.Abort != nil {
		f.Aborted = c.Abort.Aborted
	}
	for _, v := range c.Runners.Views {
		if v.markedFailed {
			f.MarkedFailed = append(f.MarkedFailed, v.Name())
		}
		if v.ScriptAborted {
			f.ScriptAborted = append(f.ScriptAborted, v.Name())
		}
	}
	if len(c.Gaps) > 0 {
		f.GapsSummary = GapsSummary(c.Gaps)
	}
	return verdict.Decide(f)
}

// OnUndecided is spec.baseline.onUndecided; "" (Inconclusive, as its default) without a baseline.
func OnUndecided(spec *v1alpha1.TestRunSpec) v1alpha1.BaselineOnUndecided {
	if spec.Baseline == nil {
		return ""
	}
	return spec.Baseline.OnUndecided
}

// Partial says whether the results of the run will not cover the whole load: the load was
// stopped early, or an envelope could not be read or merged.
func (c Collected) Partial() bool {
	return Outcome(c).Partial
}

// standing is what the summary conditions say of a run's status.
func standing(st *v1alpha1.TestRunStatus) rc.Standing {
	return rc.Standing{Ended: st.Phase == v1alpha1.PhaseSucceeded || st.Phase == v1alpha1.PhaseFailed,
		Failed: st.Phase == v1alpha1.PhaseFailed, Verdict: st.Verdict, Phase: string(st.Phase), Reason: st.Reason, Message: st.Message}
}

// RunnerLeak is the warning of a leaking runner in the merged results; "" without one.
func RunnerLeak(merged *judge.Outcome) string {
	if merged == nil {
		return ""
	}
	return judge.RunnerLeakWarning(merged.RunnerMemory)
}

// AfterEnd comes back at once to a run that just ended: reconcileFinished releases its target
// (no watch need report anything first) and counts its TTL down.
func AfterEnd() ctrl.Result { return rc.After(time.Millisecond) }

// TargetPolicy is what becomes of run's target at its end: kept only under KeepUntilDeleted,
// and neither after a refused pre-flight nor once its kept time ran out (KeepOf).
func TargetPolicy(run *v1alpha1.TestRun) v1alpha1.TargetCleanupPolicy {
	if run.Spec.Cleanup == nil || run.Spec.Cleanup.Target == "" || refusedByPreflight(run) || keepExpired(run) {
		return v1alpha1.TargetDeleteAfterRun
	}
	return run.Spec.Cleanup.Target
}

// TargetLostCondition is TargetReady once it recorded the target lost, else nil.
func TargetLostCondition(s *Scope) *metav1.Condition {
	c := s.Condition(v1alpha1.ConditionTargetReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonTargetLost {
		return nil
	}
	return c
}

// WithTargetLost adds to c what TargetReady recorded of a target lost mid-run.
func (c Collected) WithTargetLost(s *Scope) Collected {
	if lost := TargetLostCondition(s); lost != nil {
		c.targetLost = lost.Message
	}
	return c
}

// refusedByPreflight: the run ended on the pre-flight's verdict (ScriptChecked False for a
// reason other than still checking), before any start. Its target, provisioned alongside the
// pre-flight, never saw a request and holds nothing to inspect: it is released even under
// spec.cleanup.target KeepUntilDeleted, as if it had never been made (it was not, before the
// pre-flight ran in parallel).
func refusedByPreflight(run *v1alpha1.TestRun) bool {
	if !IsFinished(run) || run.Status.StartTime != nil {
		return false
	}
	return RefusedBy(run.Status.Conditions)
}

// RefusedBy: ScriptChecked holds the pre-flight's refusal (False for a reason other than
// still checking).
func RefusedBy(conditions []metav1.Condition) bool {
	c := meta.FindStatusCondition(conditions, v1alpha1.ConditionScriptChecked)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason != v1alpha1.ReasonCheckingScript
}
