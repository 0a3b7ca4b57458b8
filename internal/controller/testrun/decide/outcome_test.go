package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// mergedReport is judge.Build over fake runners' envelopes, as collection makes it.
func mergedReport(t *testing.T, thresholds map[string]v1alpha1.ThresholdList, runners int, loads ...tw.RunnerLoad) *judge.Outcome {
	t.Helper()
	s, err := tw.Merged(loads...)
	if err != nil {
		t.Fatal(err)
	}
	o := judge.Build(&s, thresholds, runners)
	return &o
}

func TestOutcome(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	now := time.Now()
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	runnersOf := func(pods ...*tw.PodWrapper) RunnerSummary {
		var rs []RunnerState
		for i, p := range pods {
			rs = append(rs, RunnerState{Index: i, Job: job, Pod: p.Obj()})
		}
		return Classify(rs)
	}
	done := runnerPod().Terminated(0, "Completed")
	load := tw.RunnerLoad{Runner: "r0", Requests: 100, Start: start, Duration: 10 * time.Second}
	fast := map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<200"}}
	tooFast := map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<5"}}
	undecided := &v1alpha1.Comparison{Decision: v1alpha1.ComparisonSuccess, Baseline: &v1alpha1.ComparedRun{Name: "v1"}, Metrics: []v1alpha1.MetricComparison{
		{Name: "throughput", Decision: v1alpha1.ComparisonSuccess},
		{Name: "latencyP99", Decision: v1alpha1.ComparisonTooFewSamples, Note: "3 vs 3 windows"}}}

	cases := []struct {
		name    string
		in      Collected
		phase   v1alpha1.TestRunPhase
		reason  string
		verdict v1alpha1.Verdict
		partial bool
		says    string
	}{
		{name: "passed", in: Collected{Runners: runnersOf(done, done), Report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictPassed, says: "verdict PASSED: 200 requests"},
		{name: "threshold failed on the merged data", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, tooFast, 1, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "failed: http_req_duration p(95)<5"},
		{name: "a runner's own share failed (99): merged data passes", in: Collected{Runners: runnersOf(done, runnerPod().Terminated(99, "Error")),
			Report: mergedReport(t, fast, 2, load, load)}, phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictPassed},
		{name: "test.fail() (110)", in: Collected{Runners: runnersOf(done, runnerPod().Terminated(110, "Error")), Report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "test.fail()"},
		{name: "test.abort() (108), the others stopped", in: Collected{Runners: runnersOf(done, runnerPod().Terminated(108, "Error")), Report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "aborted the test on"},
		{name: "generator-bound", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, fast, 1,
			tw.RunnerLoad{Runner: "r0", Requests: 100, DroppedIterations: 7, Start: start, Duration: 10 * time.Second})},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictInconclusive, says: "the load generator was the limit"},
		{name: "an envelope unreadable", in: Collected{Runners: runnersOf(done, done), Report: mergedReport(t, fast, 2, load), Problems: []string{"runner r1: no envelope"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictInconclusive, partial: true},
		{name: "aborted on the merged data", in: Collected{Runners: runnersOf(runnerPod().Terminated(103, "Error")), Report: mergedReport(t, fast, 1, load),
			Abort: &v1alpha1.AbortWatch{Aborted: "http_req_failed rate<0.1 (was 0.2)"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "aborted early: the abortOnFail threshold http_req_failed"},
		{name: "target restarted", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, fast, 1, load), TargetProblems: []string{"target restarted 2 times"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "target restarted 2 times"},
		{name: "OOM", in: Collected{Runners: runnersOf(done, runnerPod().Terminated(137, "OOMKilled"), runnerPod().Terminated(103, "Error")), Report: mergedReport(t, fast, 3, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerOOMKilled, verdict: v1alpha1.VerdictFailed, partial: true, says: "marked partial"},
		{name: "lost", in: Collected{Runners: runnersOf(runnerPod().Evicted("Evicted"), runnerPod().Terminated(103, "Error")), Report: mergedReport(t, fast, 2, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerLost, verdict: v1alpha1.VerdictFailed, partial: true},
		{name: "script error mid-run", in: Collected{Runners: runnersOf(runnerPod().Terminated(107, "Error"), done), Report: mergedReport(t, fast, 2, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerFailed, verdict: v1alpha1.VerdictFailed, partial: true, says: "script error"},
		{name: "stopped at the run deadline", in: Collected{Runners: runnersOf(runnerPod().Terminated(103, "Error")), Report: mergedReport(t, fast, 1, load),
			RunDeadline: now.Add(-time.Second), Now: now},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunTimeout, verdict: v1alpha1.VerdictFailed, partial: true, says: "raise spec.timeouts.run"},
		// Issue 39: the policy is gathered with the comparison, and a row it could not judge
		// does not pass (b9fbc85: PASSED).
		{name: "a comparison row with too few samples", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, fast, 1, load), Comparison: undecided},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictInconclusive, says: "could not judge 1: latencyP99 TooFewSamples (3 vs 3 windows)"},
		{name: "onUndecided Fail", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, fast, 1, load), Comparison: undecided,
			OnUndecided: OnUndecided(&v1alpha1.TestRunSpec{Baseline: &v1alpha1.BaselineSpec{OnUndecided: v1alpha1.BaselineUndecidedFail}})},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "spec.baseline.onUndecided: Fail"},
		{name: "onUndecided Pass", in: Collected{Runners: runnersOf(done), Report: mergedReport(t, fast, 1, load), Comparison: undecided,
			OnUndecided: v1alpha1.BaselineUndecidedPass},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictPassed, says: "latencyP99 TooFewSamples"},
		{name: "no envelope at all", in: Collected{Runners: runnersOf(done), Problems: []string{"runner r0: no envelope in the log"}},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonNoResults, verdict: v1alpha1.VerdictFailed, says: "no envelope in the log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Outcome(tc.in)
			if e.Phase != tc.phase || e.Reason != tc.reason || e.Verdict != tc.verdict || e.Partial != tc.partial {
				t.Errorf("got %s/%s %s partial=%v, want %s/%s %s partial=%v: %s", e.Phase, e.Reason, e.Verdict, e.Partial,
					tc.phase, tc.reason, tc.verdict, tc.partial, e.Message)
			}
			if !strings.Contains(e.Message, tc.says) {
				t.Errorf("message %q lacks %q", e.Message, tc.says)
			}
		})
	}
}

// TestEveryReasonEndsFailedAndStalled: whatever reason a run fails with, GitOps sees it
// Complete, not Ready, and Stalled with that reason; kstatus computes Failed.
func TestEveryReasonEndsFailedAndStalled(t *testing.T) {
	for _, reason := range v1alpha1.FailureReasons {
		t.Run(reason, func(t *testing.T) {
			e := FailedEnding(Failure{Reason: reason, Message: "what went wrong; what to do"})
			run := tw.MakeTestRun("r", "ns").Generation(3).Phase(e.Phase, e.Reason, e.Message).Verdict(e.Verdict).Obj()
			summarize(run)
			want := map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionStalled: "True/" + reason,
				v1alpha1.ConditionComplete: "True/" + reason, v1alpha1.ConditionReconciling: "False/" + reason,
			}
			tw.WantConditions(t, run, want)
			if s := tw.KstatusOf(t, run); s != status.FailedStatus {
				t.Errorf("kstatus %s, want Failed", s)
			}
		})
	}
	if len(v1alpha1.FailureReasons) != len(slicesCompact(v1alpha1.FailureReasons)) {
		t.Errorf("FailureReasons repeats a reason: %v", v1alpha1.FailureReasons)
	}
}

// TestSummaryConditions: the four summary conditions and kstatus' reading of them, for each
// way a run stands.
func TestSummaryConditions(t *testing.T) {
	base := tw.MakeTestRun("r", "ns").Generation(2)
	cases := []struct {
		name    string
		run     *v1alpha1.TestRun
		want    map[string]string
		kstatus status.Status
	}{
		{name: "waiting for the target", run: base.Clone().Phase(v1alpha1.PhaseProvisioning, v1alpha1.ReasonWaitingForTarget, "not Ready").Obj(),
			kstatus: status.InProgressStatus, want: map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionReconciling: "True/" + v1alpha1.ReasonWaitingForTarget,
				v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionComplete: "False/" + v1alpha1.ReasonInProgress}},
		{name: "passed", run: base.Clone().Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "verdict PASSED").Verdict(v1alpha1.VerdictPassed).Obj(),
			kstatus: status.CurrentStatus, want: map[string]string{
				v1alpha1.ConditionReady: "True/" + v1alpha1.ReasonPassed, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonCompleted,
				v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonPassed, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted}},
		{name: "verdict FAILED", run: base.Clone().Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "verdict FAILED").Verdict(v1alpha1.VerdictFailed).Obj(),
			kstatus: status.FailedStatus, want: map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionStalled: "True/" + v1alpha1.ReasonVerdictFailed,
				v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted}},
		{name: "verdict INCONCLUSIVE", run: base.Clone().Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "partial").Verdict(v1alpha1.VerdictInconclusive).Obj(),
			kstatus: status.FailedStatus, want: map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonInconclusive, v1alpha1.ConditionStalled: "True/" + v1alpha1.ReasonVerdictInconclusive,
				v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			summarize(tc.run)
			tw.WantConditions(t, tc.run, tc.want)
			if s := tw.KstatusOf(t, tc.run); s != tc.kstatus {
				t.Errorf("kstatus %s, want %s", s, tc.kstatus)
			}
		})
	}
	// A spec newer than the status is InProgress to kstatus, whatever the conditions say.
	stale := base.Clone().Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "").Verdict(v1alpha1.VerdictPassed).Obj()
	summarize(stale)
	stale.Generation = 3
	if s := tw.KstatusOf(t, stale); s != status.InProgressStatus {
		t.Errorf("kstatus of a stale status %s, want InProgress", s)
	}
}

func slicesCompact(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// summarize composes what is derived of a run's status (composeFinished), in place.
func summarize(run *v1alpha1.TestRun) { run.Status = ComposeFinished(run, nil) }
