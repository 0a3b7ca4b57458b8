// Package verdict decides how a TestRun ends: its phase, verdict, reason and message, and the
// ThresholdsPassed condition. The controller's stages only gather Facts; Decide is the one place
// a verdict is chosen, so a new rule is one case here and one row in its table test. Pure: no
// client calls.
package verdict

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Failure is a cause that ends a run Failed: a reason (a constant of api/v1alpha1) and a
// message that says what to do.
type Failure struct {
	Reason, Message string
}

// Facts are what a run's ending is decided from.
type Facts struct {
	// Failed is a failure an earlier phase recorded (the profile, the script, the runners before
	// the start, …): the run ends Failed with it, whatever else is known.
	Failed *Failure

	// Runner is the failure of a runner during the load, TargetLost how the target went away
	// while the load ran, and RunTimeout the deadline (RFC 3339) the load ran past and was
	// stopped at; each stops the load, and the results cover what was measured until then.
	Runner     *Failure
	TargetLost string
	RunTimeout string

	// Merged says the runners' results were merged; Problems name the envelopes that could not
	// be read or merged.
	Merged   bool
	Problems []string
	// Results are the merged results' facts (judge.Outcome.Facts).
	Results Results

	// The run's own failures beyond the thresholds.
	TargetProblems []string
	// Uncounted are the log patterns with failAbove whose count covers only part of the
	// target's logs (judge.UncountedPatterns): not judged, so not passed.
	Uncounted []string
	// Aborted is the abortOnFail threshold that failed on the merged data; "" if none did.
	Aborted string
	// MarkedFailed and ScriptAborted name the runners whose script called test.fail() and
	// test.abort().
	MarkedFailed, ScriptAborted []string

	// Notes for the message: a peak test's climb, a runner's own memory leak.
	Peak       *v1alpha1.PeakResult
	RunnerLeak string
	// Gaps is how many runners were lost and replaced, GapsSummary says which, and MaxGaps is
	// spec.runnerLoss.maxGaps (nil: any number may pass).
	Gaps        int
	GapsSummary string
	MaxGaps     *int32

	// Comparison is the comparison with a baseline, once decided; nil without one. Reference
	// is the comparison with spec.baseline.reference, the fixed bar; nil without one.
	Comparison *v1alpha1.Comparison
	Reference  *v1alpha1.Comparison
	// TrendWorse is the first change for the worse within the trend's last runs (spec.trend;
	// shift.Worst), "" when none; TrendRegresses is spec.trend.onShift Regressed, which makes
	// it turn the verdict. Either way the message says it.
	TrendWorse     string
	TrendRegresses bool
	// Undecided names what the comparison could not judge (compare.Undecided): rows that are
	// TooFewSamples or NoData, or the whole comparison when it had no row (the baseline's
	// record unreadable). OnUndecided is spec.baseline.onUndecided ("" is Inconclusive).
	Undecided   []string
	OnUndecided v1alpha1.BaselineOnUndecided
}

// Results are the facts of the merged results that the verdict reads.
type Results struct {
	// FailedThresholds are the thresholds that did not hold on the merged data; Judged is how
	// many were judged.
	FailedThresholds []string
	Judged           int
	// Partial: the results do not cover the whole load (an envelope missing or cut short).
	Partial bool
	// GeneratorBound says why the load generator, not the target, was the limit; "" if it was not.
	GeneratorBound string
	// For the message: requests and their rate, or, for a script with no HTTP, iterations and checks.
	Requests                   int64
	RequestsPerSecond          string
	Iterations                 int64
	Checks                     bool
	ChecksPassed, ChecksFailed int64
}

// Ending is how a run ends.
type Ending struct {
	Phase           v1alpha1.TestRunPhase
	Reason, Message string
	Verdict         v1alpha1.Verdict
	// Partial marks results that do not cover the whole load.
	Partial bool
	// Thresholds is the ThresholdsPassed condition, for a run that has results to judge.
	Thresholds *metav1.Condition
}

// Regressed says the comparison with the baseline turned the verdict.
func (e Ending) Regressed() bool { return e.Verdict == v1alpha1.VerdictRegressed }

// Passed says whether a verdict accepts the run: a PASSED run may be the next one's baseline.
func Passed(v v1alpha1.Verdict) bool { return v == v1alpha1.VerdictPassed }

// Decide is the verdict. In order: a failure recorded earlier ends the run as it says; a failure
// during the load ends it Failed with partial results; no results end it Failed NoResults;
// otherwise the run Succeeded and the merged results give the verdict: FAILED when a threshold,
// the target, abortOnFail or the script failed it, INCONCLUSIVE when the results are partial, the
// generator was the limit, a log pattern with failAbove was counted on part of the logs only,
// or more runners were lost than spec.runnerLoss.maxGaps allows,
// REGRESSED when the comparison regressed, else PASSED; but a run that would pass while its
// comparison could not judge a row ends as spec.baseline.onUndecided says (INCONCLUSIVE by
// default): what was not judged never passes silently.
func Decide(f Facts) Ending {
	if f.Failed != nil {
		return failed(*f.Failed)
	}
	if stop := stopped(f); stop != nil {
		e := failed(*stop)
		e.Message += "; the results cover what the runners measured until then and are marked partial"
		e.Partial = true
		return e
	}
	if !f.Merged {
		return failed(Failure{Reason: v1alpha1.ReasonNoResults, Message: "no runner left a readable result envelope: " + strings.Join(f.Problems, "; ")})
	}

	r := f.Results
	e := Ending{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted, Partial: len(f.Problems) > 0}
	failedBy := append(append([]string{}, r.FailedThresholds...), runFailures(f)...)
	e.Thresholds = thresholdsCondition(failedBy, r.Judged)

	e.Verdict = v1alpha1.VerdictPassed
	var notes []string
	switch {
	case len(failedBy) > 0:
		e.Verdict = v1alpha1.VerdictFailed
	case r.Partial || r.GeneratorBound != "":
		e.Verdict = v1alpha1.VerdictInconclusive
	case len(f.Uncounted) > 0:
		e.Verdict = v1alpha1.VerdictInconclusive
		notes = append(notes, "not judged: "+strings.Join(f.Uncounted, "; "))
	case f.MaxGaps != nil && f.Gaps > int(*f.MaxGaps):
		e.Verdict = v1alpha1.VerdictInconclusive
		notes = append(notes, fmt.Sprintf("%d gaps, more than spec.runnerLoss.maxGaps %d", f.Gaps, *f.MaxGaps))
	case regressed(f.Comparison) || regressed(f.Reference) || (f.TrendRegresses && f.TrendWorse != ""):
		e.Verdict = v1alpha1.VerdictRegressed
	case len(f.Undecided) > 0:
		var note string
		e.Verdict, note = undecided(f.Undecided, f.OnUndecided)
		notes = append(notes, note)
	}

	e.Message = headline(e.Verdict, r)
	if len(failedBy) > 0 {
		e.Message += "; failed: " + strings.Join(failedBy, "; ")
	}
	e.Message += peakNote(f.Peak)
	if r.GeneratorBound != "" {
		e.Message += "; the load generator was the limit: " + r.GeneratorBound
	}
	if f.RunnerLeak != "" {
		e.Message += "; " + f.RunnerLeak
	}
	for _, n := range notes {
		e.Message += "; " + n
	}
	if f.Gaps > 0 {
		// A run with gaps never passes silently: the message says what the results cover.
		e.Message += "; " + f.GapsSummary
	}
	if f.TrendWorse != "" && e.Verdict != v1alpha1.VerdictFailed {
		e.Message += "; shifted for the worse over its kept runs (status.trend): " + f.TrendWorse
	}
	if e.Regressed() {
		for _, c := range []struct {
			what string
			c    *v1alpha1.Comparison
		}{{"baseline", f.Comparison}, {"the fixed reference", f.Reference}} {
			if !regressed(c.c) {
				continue
			}
			name := ""
			if c.c.Baseline != nil {
				name = " " + c.c.Baseline.Name
			}
			e.Message += fmt.Sprintf("; regressed against %s%s: %s", c.what, name, c.c.Worst)
		}
	}
	return e
}

func regressed(c *v1alpha1.Comparison) bool {
	return c != nil && c.Decision == v1alpha1.ComparisonRegressed
}

// maxUndecidedNamed bounds the rows the message names (it is cut at 32 KiB, and 32 rows of
// notes would fill it); the rest are counted.
const maxUndecidedNamed = 5

// runTodo is what a TestRun whose comparison could not judge rows can do about it.
const runTodo = "run longer (more windows), name the metric in the baseline run too, or judge it with a threshold"

// undecided is the verdict of a run that would pass but whose comparison could not judge
// rows, and the note that names them and what to do.
func undecided(rows []string, policy v1alpha1.BaselineOnUndecided) (v1alpha1.Verdict, string) {
	return Undecided(rows, policy, "status.comparison.metrics", runTodo)
}

// Undecided applies spec.baseline.onUndecided to a comparison that would pass but left rows
// undecided (a TestRun's metrics, a CapacityPlan's cells): PASSED, FAILED or, by default,
// INCONCLUSIVE, and the note that names the first rows, counts the rest (listed in where),
// and says what to do (todo). One rule for both kinds: not judged is not passed.
func Undecided(rows []string, policy v1alpha1.BaselineOnUndecided, where, todo string) (v1alpha1.Verdict, string) {
	named := rows[:min(len(rows), maxUndecidedNamed)]
	note := fmt.Sprintf("the comparison could not judge %d: %s", len(rows), strings.Join(named, "; "))
	if len(rows) > len(named) {
		note += fmt.Sprintf("; and %d more (%s)", len(rows)-len(named), where)
	}
	switch policy {
	case v1alpha1.BaselineUndecidedPass:
		return v1alpha1.VerdictPassed, note + "; passed as spec.baseline.onUndecided: Pass says"
	case v1alpha1.BaselineUndecidedFail:
		return v1alpha1.VerdictFailed, note + "; failed as spec.baseline.onUndecided: Fail says: " + todo
	}
	return v1alpha1.VerdictInconclusive, note + "; not judged is not passed: " + todo +
		" (spec.baseline.onUndecided: Pass accepts it)"
}

// failed ends a run Failed: whatever results exist are kept, but the verdict is FAILED.
func failed(f Failure) Ending {
	return Ending{Phase: v1alpha1.PhaseFailed, Reason: f.Reason, Message: f.Message, Verdict: v1alpha1.VerdictFailed}
}

// stopped is what stopped the load early, if anything: the target lost is the cause of whatever
// the runners then did, so it comes first.
func stopped(f Facts) *Failure {
	switch {
	case f.TargetLost != "":
		return &Failure{Reason: v1alpha1.ReasonTargetLost, Message: f.TargetLost}
	case f.Runner != nil:
		return f.Runner
	case f.RunTimeout != "":
		return &Failure{Reason: v1alpha1.ReasonRunTimeout, Message: fmt.Sprintf("the load ran past its deadline %s and was stopped; raise spec.timeouts.run", f.RunTimeout)}
	}
	return nil
}

// runFailures are what fails the verdict beyond the thresholds: the target's health, an
// abortOnFail threshold, and the script's own test.fail() and test.abort().
func runFailures(f Facts) []string {
	out := append([]string{}, f.TargetProblems...)
	if f.Aborted != "" {
		out = append(out, "aborted early: the abortOnFail threshold "+f.Aborted+" failed on the merged data")
	}
	for _, name := range f.MarkedFailed {
		out = append(out, fmt.Sprintf("the script marked the test failed on %s (test.fail())", name))
	}
	for _, name := range f.ScriptAborted {
		out = append(out, fmt.Sprintf("the script aborted the test on %s (test.abort())", name))
	}
	return out
}

func thresholdsCondition(failedBy []string, judged int) *metav1.Condition {
	if len(failedBy) > 0 {
		return &metav1.Condition{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionFalse,
			Reason: "ThresholdsFailed", Message: strings.Join(failedBy, "; ")}
	}
	return &metav1.Condition{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionTrue,
		Reason: "Passed", Message: fmt.Sprintf("%d thresholds held on the merged results", judged)}
}

// headline opens the message: the verdict and the run's unit of work.
func headline(v v1alpha1.Verdict, r Results) string {
	if r.Requests == 0 && r.Iterations > 0 {
		// A script that speaks no HTTP (XMPP over WebSocket, say): its unit of work is the iteration.
		msg := fmt.Sprintf("verdict %s: %d iterations, no HTTP requests", v, r.Iterations)
		if r.Checks {
			msg += fmt.Sprintf(", checks %d passed / %d failed", r.ChecksPassed, r.ChecksFailed)
		}
		return msg
	}
	return fmt.Sprintf("verdict %s: %d requests, %s req/s", v, r.Requests, r.RequestsPerSecond)
}

func peakNote(p *v1alpha1.PeakResult) string {
	switch {
	case p == nil:
	case p.BreakingPoint == v1alpha1.PeakReached:
		return fmt.Sprintf("; breaking point %d devices (%d broke: %s)", p.LastHeldDevices, p.FirstFailedDevices, p.StopRule)
	case p.BreakingPoint == v1alpha1.PeakNotReached:
		return fmt.Sprintf("; breaking point not reached: %d devices held", p.LastHeldDevices)
	}
	return ""
}
