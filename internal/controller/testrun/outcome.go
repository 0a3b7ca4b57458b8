package testrun

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// collected is what the collection phase gathered once every runner ended.
type collected struct {
	runners runnerSummary
	// report is the merged results, nil when no runner's envelope could be read or merged.
	report *judge.Outcome
	// problems name the envelopes that could not be read or merged.
	problems []string
	// runDeadline is when the load had to end; zero where the run never started.
	runDeadline time.Time
	now         time.Time
	// targetProblems fail the verdict: restarts, memory growth, log findings.
	targetProblems []string
	// peak is a peak test's climb, for the message.
	peak *v1alpha1.PeakResult
	// abort, when it says what was aborted, fails the verdict as k6's abortOnFail does.
	abort *v1alpha1.AbortWatch
	// targetLost says how the target went away while the load ran; "" if it did not.
	targetLost string
	// gaps are the runners lost and replaced; maxGaps, when set, is how many may pass.
	gaps    []v1alpha1.RunnerGap
	maxGaps *int32
	// runnerLeak says that a runner's own memory leaks: the generator's fault, said in the
	// message and never a failure of the target (judge.RunnerLeakWarning).
	runnerLeak string
}

// ending is how a run ends.
type ending struct {
	phase           v1alpha1.TestRunPhase
	reason, message string
	verdict         v1alpha1.Verdict
	// partial marks results that do not cover the whole load.
	partial bool
	// thresholds is the ThresholdsPassed condition, for a run that has results to judge.
	thresholds *metav1.Condition
}

// failedEnding ends a run Failed: whatever results exist are kept, but the verdict is FAILED.
func failedEnding(f failure) ending {
	return ending{phase: v1alpha1.PhaseFailed, reason: f.reason, message: f.message, verdict: v1alpha1.VerdictFailed}
}

// outcome decides how a run that reached collection ends. A runner failure fails the run
// (thresholds only judge a run that worked); no result at all fails it too; otherwise the
// merged results, the script's test.fail() and the target's health give the verdict.
func outcome(c collected) ending {
	f := c.runners.runFailure()
	if c.targetLost != "" { // the cause of whatever the runners then did
		f = &failure{v1alpha1.ReasonTargetLost, c.targetLost}
	}
	if _, stopped := c.runners.first(runnerStopped); f == nil && stopped && !c.runDeadline.IsZero() && ctrlkit.Expired(c.now, c.runDeadline) {
		f = &failure{v1alpha1.ReasonRunTimeout, fmt.Sprintf("the load ran past its deadline %s and was stopped; raise spec.timeouts.run",
			c.runDeadline.UTC().Format(time.RFC3339))}
	}
	if f != nil {
		e := failedEnding(*f)
		e.message += "; the results cover what the runners measured until then and are marked partial"
		e.partial = true
		return e
	}
	if c.report == nil {
		return failedEnding(failure{v1alpha1.ReasonNoResults, "no runner left a readable result envelope: " + strings.Join(c.problems, "; ")})
	}

	r := c.report
	e := ending{phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: r.Verdict, partial: len(c.problems) > 0}
	// Beyond the thresholds (which judge.Build judged), these fail the verdict too.
	also := append([]string{}, c.targetProblems...)
	if c.abort != nil && c.abort.Aborted != "" {
		also = append(also, "aborted early: the abortOnFail threshold "+c.abort.Aborted+" failed on the merged data")
	}
	for _, v := range c.runners.views {
		if v.markedFailed {
			also = append(also, fmt.Sprintf("the script marked the test failed on %s (test.fail())", v.name()))
		}
		if v.scriptAborted {
			also = append(also, fmt.Sprintf("the script aborted the test on %s (test.abort())", v.name()))
		}
	}
	if len(also) > 0 {
		e.verdict = v1alpha1.VerdictFailed
	}
	failed := append(append([]string{}, r.FailedThresholds...), also...)
	if len(failed) > 0 {
		e.thresholds = &metav1.Condition{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionFalse,
			Reason: "ThresholdsFailed", Message: strings.Join(failed, "; ")}
	} else {
		e.thresholds = &metav1.Condition{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionTrue,
			Reason: "Passed", Message: fmt.Sprintf("%d thresholds held on the merged results", len(r.Results.Thresholds))}
	}

	res := r.Results
	e.message = fmt.Sprintf("verdict %s: %d requests, %s req/s", e.verdict, res.Requests.Total, res.Throughput.RequestsPerSecond)
	if it := res.Iterations; res.Requests.Total == 0 && it != nil && it.Total > 0 {
		// A script that speaks no HTTP (XMPP over WebSocket, say): its unit of work is the iteration.
		e.message = fmt.Sprintf("verdict %s: %d iterations, no HTTP requests", e.verdict, it.Total)
		if ch := res.Checks; ch != nil {
			e.message += fmt.Sprintf(", checks %d passed / %d failed", ch.Passed, ch.Failed)
		}
	}
	if len(failed) > 0 {
		e.message += "; failed: " + strings.Join(failed, "; ")
	}
	switch p := c.peak; {
	case p == nil:
	case p.BreakingPoint == v1alpha1.PeakReached:
		e.message += fmt.Sprintf("; breaking point %d devices (%d broke: %s)", p.LastHeldDevices, p.FirstFailedDevices, p.StopRule)
	case p.BreakingPoint == v1alpha1.PeakNotReached:
		e.message += fmt.Sprintf("; breaking point not reached: %d devices held", p.LastHeldDevices)
	}
	if r.GeneratorBound {
		e.message += "; the load generator was the limit: " + r.GeneratorBoundReason
	}
	if c.runnerLeak != "" {
		e.message += "; " + c.runnerLeak
	}
	if len(c.gaps) > 0 {
		// A run with gaps never passes silently: the message says what the results cover.
		if c.maxGaps != nil && len(c.gaps) > int(*c.maxGaps) && e.verdict == v1alpha1.VerdictPassed {
			e.verdict = v1alpha1.VerdictInconclusive
			e.message = strings.Replace(e.message, "verdict "+string(v1alpha1.VerdictPassed), "verdict "+string(v1alpha1.VerdictInconclusive), 1)
			e.message += fmt.Sprintf("; %d gaps, more than spec.runnerLoss.maxGaps %d", len(c.gaps), *c.maxGaps)
		}
		e.message += "; " + gapsSummary(c.gaps)
	}
	return e
}

// standing is what the summary conditions say of a run's status.
func standing(st *v1alpha1.TestRunStatus) ctrlkit.Standing {
	return ctrlkit.Standing{Ended: st.Phase == v1alpha1.PhaseSucceeded || st.Phase == v1alpha1.PhaseFailed,
		Failed: st.Phase == v1alpha1.PhaseFailed, Verdict: st.Verdict, Phase: string(st.Phase), Reason: st.Reason, Message: st.Message}
}

// runnerLeak is the warning of a leaking runner in the merged results; "" without one.
func runnerLeak(merged *judge.Outcome) string {
	if merged == nil {
		return ""
	}
	return judge.RunnerLeakWarning(merged.RunnerMemory)
}
