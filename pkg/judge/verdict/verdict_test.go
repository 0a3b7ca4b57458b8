package verdict

import (
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestDecide covers every verdict and every reason Decide gives: the run's phase, verdict,
// reason, whether its results are partial, the ThresholdsPassed condition, and what the
// message must say.
func TestDecide(t *testing.T) {
	passing := Results{Judged: 2, Requests: 200, RequestsPerSecond: "20.00"}
	two := int32(2)
	regressed := &v1alpha1.Comparison{Decision: v1alpha1.ComparisonRegressed, Worst: "p95 +31%", Baseline: &v1alpha1.ComparedRun{Name: "v1"}}
	with := func(mod func(*Results)) Results { r := passing; mod(&r); return r }
	// A comparison that judged one row and could not judge another (compare.Undecided).
	partlyJudged := &v1alpha1.Comparison{Decision: v1alpha1.ComparisonSuccess, Baseline: &v1alpha1.ComparedRun{Name: "v1"}}
	tooFew := []string{"latencyP99 TooFewSamples (6 vs 6 windows in blocks of 3 cannot reach p < 0.05)"}
	gone := []string{"the whole comparison NoData (the baseline's results could not be read: the kept record of v1 is gone)"}
	many := []string{"a NoData", "b NoData", "c NoData", "d NoData", "e NoData", "f NoData", "g NoData"}

	cases := []struct {
		name       string
		facts      Facts
		phase      v1alpha1.TestRunPhase
		verdict    v1alpha1.Verdict
		reason     string
		partial    bool
		thresholds string // "": no condition; else its status
		says       []string
		never      string
	}{
		{name: "passed", facts: Facts{Merged: true, Results: passing},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict PASSED: 200 requests, 20.00 req/s"}},
		{name: "an earlier phase failed", facts: Facts{Failed: &Failure{Reason: v1alpha1.ReasonProfileNotFound, Message: "no Profile c9"}, Merged: true, Results: passing},
			phase: v1alpha1.PhaseFailed, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonProfileNotFound, says: []string{"no Profile c9"}, never: "partial"},
		{name: "a runner failed during the load", facts: Facts{Runner: &Failure{Reason: v1alpha1.ReasonRunnerFailed, Message: "runner 1 OOMKilled"}, Merged: true, Results: passing},
			phase: v1alpha1.PhaseFailed, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonRunnerFailed, partial: true,
			says: []string{"runner 1 OOMKilled", "marked partial"}},
		{name: "the target lost outranks the runners it broke", facts: Facts{TargetLost: "the target's Deployment was deleted", Runner: &Failure{Reason: v1alpha1.ReasonRunnerFailed, Message: "runner 0 failed"}},
			phase: v1alpha1.PhaseFailed, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonTargetLost, partial: true,
			says: []string{"Deployment was deleted"}, never: "runner 0"},
		{name: "stopped at the run deadline", facts: Facts{RunTimeout: "2026-11-29T03:00:00Z", Merged: true, Results: passing},
			phase: v1alpha1.PhaseFailed, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonRunTimeout, partial: true,
			says: []string{"ran past its deadline 2026-11-29T03:00:00Z", "spec.timeouts.run"}},
		{name: "no results", facts: Facts{Problems: []string{"runner 0: no envelope in its log"}},
			phase: v1alpha1.PhaseFailed, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonNoResults, says: []string{"runner 0: no envelope"}},
		{name: "a threshold failed", facts: Facts{Merged: true, Results: with(func(r *Results) { r.FailedThresholds = []string{"http_req_duration p(95)<5 (was 12)"} })},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False",
			says: []string{"verdict FAILED", "failed: http_req_duration p(95)<5 (was 12)"}},
		{name: "the target failed it", facts: Facts{Merged: true, Results: passing, TargetProblems: []string{"2 restarts"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False", says: []string{"failed: 2 restarts"}},
		{name: "abortOnFail", facts: Facts{Merged: true, Results: passing, Aborted: "http_req_failed rate<0.01"},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False",
			says: []string{"aborted early: the abortOnFail threshold http_req_failed rate<0.01"}},
		{name: "test.fail() and test.abort()", facts: Facts{Merged: true, Results: passing, MarkedFailed: []string{"r-runner-1"}, ScriptAborted: []string{"r-runner-2"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False",
			says: []string{"failed on r-runner-1 (test.fail())", "aborted the test on r-runner-2 (test.abort())"}},
		{name: "a threshold failure outranks partial results", facts: Facts{Merged: true, Results: with(func(r *Results) { r.Partial, r.FailedThresholds = true, []string{"checks rate>0.99"} })},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False"},
		{name: "partial results", facts: Facts{Merged: true, Results: with(func(r *Results) { r.Partial = true })},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True"},
		{name: "an envelope unreadable", facts: Facts{Merged: true, Results: passing, Problems: []string{"runner 2: cut short"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, partial: true, thresholds: "True"},
		{name: "the generator was the limit", facts: Facts{Merged: true, Results: with(func(r *Results) { r.GeneratorBound = "120 iterations dropped" })},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"the load generator was the limit: 120 iterations dropped"}},
		{name: "a failAbove pattern counted on part of the logs", facts: Facts{Merged: true, Results: passing, Uncounted: []string{"log pattern error (failAbove 0): 0 lines, the search ran out of time"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict INCONCLUSIVE", "not judged: log pattern error (failAbove 0): 0 lines, the search ran out of time"}},
		{name: "gaps within maxGaps", facts: Facts{Merged: true, Results: passing, Gaps: 2, MaxGaps: &two, GapsSummary: "2 runners lost and replaced"},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"2 runners lost and replaced"}, never: "more than"},
		{name: "more gaps than maxGaps", facts: Facts{Merged: true, Results: passing, Gaps: 3, MaxGaps: &two, GapsSummary: "3 runners lost and replaced"},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict INCONCLUSIVE", "3 gaps, more than spec.runnerLoss.maxGaps 2", "3 runners lost and replaced"}},
		{name: "regressed against the baseline", facts: Facts{Merged: true, Results: passing, Comparison: regressed},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictRegressed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict REGRESSED: 200 requests", "regressed against baseline v1: p95 +31%"}},
		// Issue 39, the ratchet: each release within its band of the last, the sum beyond the
		// fixed reference's (b9fbc85 had no reference: PASSED).
		{name: "regressed against the fixed reference only", facts: Facts{Merged: true, Results: passing,
			Comparison: &v1alpha1.Comparison{Decision: v1alpha1.ComparisonOK, Baseline: &v1alpha1.ComparedRun{Name: "v3"}},
			Reference:  &v1alpha1.Comparison{Decision: v1alpha1.ComparisonRegressed, Worst: "latencyP95 152.00 %", Baseline: &v1alpha1.ComparedRun{Name: "v1"}}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictRegressed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict REGRESSED", "regressed against the fixed reference v1: latencyP95 152.00 %"}, never: "against baseline"},
		{name: "what the reference could not judge is not passed", facts: Facts{Merged: true, Results: passing, Comparison: partlyJudged,
			Reference: &v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData}, Undecided: []string{"against the reference: the whole comparison NoData"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"against the reference: the whole comparison NoData"}},
		// Issue 38: the trend across releases, as a gate (spec.trend.onShift).
		{name: "a shift for the worse in the trend, onShift Regressed", facts: Facts{Merged: true, Results: passing,
			TrendWorse: "latencyP95 p95 +50.00 % from r5 (20.00 → 30.00, p 0.0050)", TrendRegresses: true},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictRegressed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict REGRESSED", "shifted for the worse over its kept runs (status.trend): latencyP95 p95 +50.00 % from r5"}},
		{name: "a shift for the worse in the trend, onShift Warn", facts: Facts{Merged: true, Results: passing,
			TrendWorse: "latencyP95 p95 +50.00 % from r5 (20.00 → 30.00, p 0.0050)"},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict PASSED", "shifted for the worse over its kept runs (status.trend): latencyP95"}},
		{name: "a failed run is not also regressed", facts: Facts{Merged: true, Results: passing, TargetProblems: []string{"OOMKilled"}, Comparison: regressed},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False", never: "regressed against"},
		{name: "no regression", facts: Facts{Merged: true, Results: passing, Comparison: &v1alpha1.Comparison{Decision: v1alpha1.ComparisonOK}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True"},
		// Issue 39: what the comparison could not judge never passes silently (b9fbc85: PASSED).
		{name: "a row with too few samples is inconclusive by default", facts: Facts{Merged: true, Results: passing, Comparison: partlyJudged, Undecided: tooFew},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict INCONCLUSIVE", "could not judge 1: latencyP99 TooFewSamples (6 vs 6 windows", "run longer", "spec.baseline.onUndecided: Pass accepts it"}},
		{name: "a baseline record gone is inconclusive", facts: Facts{Merged: true, Results: passing, Comparison: &v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData}, Undecided: gone, OnUndecided: v1alpha1.BaselineUndecidedInconclusive},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"the kept record of v1 is gone"}},
		{name: "onUndecided Fail", facts: Facts{Merged: true, Results: passing, Comparison: partlyJudged, Undecided: tooFew, OnUndecided: v1alpha1.BaselineUndecidedFail},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict FAILED", "latencyP99 TooFewSamples", "failed as spec.baseline.onUndecided: Fail says"}},
		{name: "onUndecided Pass still names the rows", facts: Facts{Merged: true, Results: passing, Comparison: partlyJudged, Undecided: tooFew, OnUndecided: v1alpha1.BaselineUndecidedPass},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict PASSED", "could not judge 1: latencyP99 TooFewSamples", "passed as spec.baseline.onUndecided: Pass says"}},
		{name: "many undecided rows are counted, not all named", facts: Facts{Merged: true, Results: passing, Comparison: partlyJudged, Undecided: many},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictInconclusive, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"could not judge 7: a NoData", "e NoData; and 2 more"}, never: "f NoData"},
		{name: "a regression outranks undecided rows", facts: Facts{Merged: true, Results: passing, Comparison: regressed, Undecided: tooFew, OnUndecided: v1alpha1.BaselineUndecidedFail},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictRegressed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"regressed against baseline v1"}, never: "could not judge"},
		{name: "a threshold failure outranks undecided rows", facts: Facts{Merged: true, Results: with(func(r *Results) { r.FailedThresholds = []string{"checks rate>0.99"} }), Comparison: partlyJudged, Undecided: tooFew},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictFailed, reason: v1alpha1.ReasonCompleted, thresholds: "False", never: "could not judge"},
		{name: "iterations where no HTTP is spoken", facts: Facts{Merged: true, Results: Results{Iterations: 40, Checks: true, ChecksPassed: 39, ChecksFailed: 1}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"verdict PASSED: 40 iterations, no HTTP requests, checks 39 passed / 1 failed"}},
		{name: "a peak's breaking point", facts: Facts{Merged: true, Results: passing, Peak: &v1alpha1.PeakResult{BreakingPoint: v1alpha1.PeakReached, LastHeldDevices: 800, FirstFailedDevices: 900, StopRule: "p95 > 1s"}},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"breaking point 800 devices (900 broke: p95 > 1s)"}},
		{name: "a runner's own leak is said, never a failure", facts: Facts{Merged: true, Results: passing, RunnerLeak: "runner r-runner-0's own memory grows"},
			phase: v1alpha1.PhaseSucceeded, verdict: v1alpha1.VerdictPassed, reason: v1alpha1.ReasonCompleted, thresholds: "True",
			says: []string{"runner r-runner-0's own memory grows"}},
	}
	seen := map[v1alpha1.Verdict]bool{}
	reasons := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Decide(tc.facts)
			if e.Phase != tc.phase || e.Verdict != tc.verdict || e.Reason != tc.reason || e.Partial != tc.partial {
				t.Errorf("got %s/%s/%s partial %v, want %s/%s/%s partial %v (%s)", e.Phase, e.Verdict, e.Reason, e.Partial,
					tc.phase, tc.verdict, tc.reason, tc.partial, e.Message)
			}
			switch {
			case tc.thresholds == "" && e.Thresholds != nil:
				t.Errorf("a ThresholdsPassed condition without results to judge: %+v", e.Thresholds)
			case tc.thresholds != "" && (e.Thresholds == nil || string(e.Thresholds.Status) != tc.thresholds):
				t.Errorf("ThresholdsPassed %+v, want %s", e.Thresholds, tc.thresholds)
			}
			for _, s := range tc.says {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q does not say %q", e.Message, s)
				}
			}
			if tc.never != "" && strings.Contains(e.Message, tc.never) {
				t.Errorf("message %q says %q", e.Message, tc.never)
			}
		})
		seen[tc.verdict] = true
		reasons[tc.reason] = true
	}
	for _, v := range []v1alpha1.Verdict{v1alpha1.VerdictPassed, v1alpha1.VerdictFailed, v1alpha1.VerdictInconclusive, v1alpha1.VerdictRegressed} {
		if !seen[v] {
			t.Errorf("no case ends %s", v)
		}
	}
	for _, r := range []string{v1alpha1.ReasonCompleted, v1alpha1.ReasonTargetLost, v1alpha1.ReasonRunTimeout, v1alpha1.ReasonNoResults} {
		if !reasons[r] {
			t.Errorf("no case ends with the reason %s Decide gives", r)
		}
	}
}
