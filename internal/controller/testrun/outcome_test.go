package testrun

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
	runnersOf := func(pods ...*tw.PodWrapper) runnerSummary {
		var rs []runnerState
		for i, p := range pods {
			rs = append(rs, runnerState{index: i, job: job, pod: p.Obj()})
		}
		return classify(rs)
	}
	done := runnerPod().Terminated(0, "Completed")
	load := tw.RunnerLoad{Runner: "r0", Requests: 100, Start: start, Duration: 10 * time.Second}
	fast := map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<200"}}
	tooFast := map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<5"}}

	cases := []struct {
		name    string
		in      collected
		phase   v1alpha1.TestRunPhase
		reason  string
		verdict v1alpha1.Verdict
		partial bool
		says    string
	}{
		{name: "passed", in: collected{runners: runnersOf(done, done), report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictPassed, says: "verdict PASSED: 200 requests"},
		{name: "threshold failed on the merged data", in: collected{runners: runnersOf(done), report: mergedReport(t, tooFast, 1, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "failed: http_req_duration p(95)<5"},
		{name: "a runner's own share failed (99): merged data passes", in: collected{runners: runnersOf(done, runnerPod().Terminated(99, "Error")),
			report: mergedReport(t, fast, 2, load, load)}, phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictPassed},
		{name: "test.fail() (110)", in: collected{runners: runnersOf(done, runnerPod().Terminated(110, "Error")), report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "test.fail()"},
		{name: "test.abort() (108), the others stopped", in: collected{runners: runnersOf(done, runnerPod().Terminated(108, "Error")), report: mergedReport(t, fast, 2, load, load)},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "aborted the test on"},
		{name: "generator-bound", in: collected{runners: runnersOf(done), report: mergedReport(t, fast, 1,
			tw.RunnerLoad{Runner: "r0", Requests: 100, DroppedIterations: 7, Start: start, Duration: 10 * time.Second})},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictInconclusive, says: "the load generator was the limit"},
		{name: "an envelope unreadable", in: collected{runners: runnersOf(done, done), report: mergedReport(t, fast, 2, load), problems: []string{"runner r1: no envelope"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictInconclusive, partial: true},
		{name: "aborted on the merged data", in: collected{runners: runnersOf(runnerPod().Terminated(103, "Error")), report: mergedReport(t, fast, 1, load),
			abort: &v1alpha1.AbortWatch{Aborted: "http_req_failed rate<0.1 (was 0.2)"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "aborted early: the abortOnFail threshold http_req_failed"},
		{name: "target restarted", in: collected{runners: runnersOf(done), report: mergedReport(t, fast, 1, load), targetProblems: []string{"target restarted 2 times"}},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, verdict: v1alpha1.VerdictFailed, says: "target restarted 2 times"},
		{name: "OOM", in: collected{runners: runnersOf(done, runnerPod().Terminated(137, "OOMKilled"), runnerPod().Terminated(103, "Error")), report: mergedReport(t, fast, 3, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerOOMKilled, verdict: v1alpha1.VerdictFailed, partial: true, says: "marked partial"},
		{name: "lost", in: collected{runners: runnersOf(runnerPod().Evicted("Evicted"), runnerPod().Terminated(103, "Error")), report: mergedReport(t, fast, 2, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerLost, verdict: v1alpha1.VerdictFailed, partial: true},
		{name: "script error mid-run", in: collected{runners: runnersOf(runnerPod().Terminated(107, "Error"), done), report: mergedReport(t, fast, 2, load)},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunnerFailed, verdict: v1alpha1.VerdictFailed, partial: true, says: "script error"},
		{name: "stopped at the run deadline", in: collected{runners: runnersOf(runnerPod().Terminated(103, "Error")), report: mergedReport(t, fast, 1, load),
			runDeadline: now.Add(-time.Second), now: now},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonRunTimeout, verdict: v1alpha1.VerdictFailed, partial: true, says: "raise spec.timeouts.run"},
		{name: "no envelope at all", in: collected{runners: runnersOf(done), problems: []string{"runner r0: no envelope in the log"}},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonNoResults, verdict: v1alpha1.VerdictFailed, says: "no envelope in the log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := outcome(tc.in)
			if e.phase != tc.phase || e.reason != tc.reason || e.verdict != tc.verdict || e.partial != tc.partial {
				t.Errorf("got %s/%s %s partial=%v, want %s/%s %s partial=%v: %s", e.phase, e.reason, e.verdict, e.partial,
					tc.phase, tc.reason, tc.verdict, tc.partial, e.message)
			}
			if !strings.Contains(e.message, tc.says) {
				t.Errorf("message %q lacks %q", e.message, tc.says)
			}
		})
	}
}

// TestEveryReasonEndsFailedAndStalled: whatever reason a run fails with, GitOps sees it
// Complete, not Ready, and Stalled with that reason; kstatus computes Failed.
func TestEveryReasonEndsFailedAndStalled(t *testing.T) {
	for _, reason := range v1alpha1.FailureReasons {
		t.Run(reason, func(t *testing.T) {
			e := failedEnding(failure{reason, "what went wrong; what to do"})
			run := tw.MakeTestRun("r", "ns").Generation(3).Phase(e.phase, e.reason, e.message).Verdict(e.verdict).Obj()
			summarize(run)
			want := map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionStalled: "True/" + reason,
				v1alpha1.ConditionComplete: "True/" + reason, v1alpha1.ConditionReconciling: "False/" + reason,
			}
			wantConditions(t, run, want)
			if s := kstatusOf(t, run); s != status.FailedStatus {
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
			wantConditions(t, tc.run, tc.want)
			if s := kstatusOf(t, tc.run); s != tc.kstatus {
				t.Errorf("kstatus %s, want %s", s, tc.kstatus)
			}
		})
	}
	// A spec newer than the status is InProgress to kstatus, whatever the conditions say.
	stale := base.Clone().Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "").Verdict(v1alpha1.VerdictPassed).Obj()
	summarize(stale)
	stale.Generation = 3
	if s := kstatusOf(t, stale); s != status.InProgressStatus {
		t.Errorf("kstatus of a stale status %s, want InProgress", s)
	}
}

func slicesCompact(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// summarize composes what is derived of a run's status (composeFinished), in place.
func summarize(run *v1alpha1.TestRun) { run.Status = composeFinished(run) }
