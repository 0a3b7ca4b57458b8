package decide

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

func runnerPod() *tw.PodWrapper { return tw.MakePod("r-runner-0-x", "ns", runners.ContainerName) }

func TestClassifyRunner(t *testing.T) {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	cases := []struct {
		name string
		job  *batchv1.Job
		pod  *tw.PodWrapper
		want runnerClass
		// says is part of why, where the user must read it.
		says         string
		markedFailed bool
		// scriptAborted: the script called test.abort().
		scriptAborted bool
		// final is the clean final envelope the runner handed over.
		final *measure.Envelope
	}{
		{name: "no Job yet", want: runnerNoJob},
		{name: "Job without pod", job: job, want: runnerNoPod, says: "kubectl describe job r-runner-0"},
		{name: "pod gone, Job failed", job: tw.MakeJob("r-runner-0", "ns").Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit").Obj(),
			want: RunnerLost, says: "runner 0 was lost: BackoffLimitExceeded"},
		{name: "scheduling", job: job, pod: runnerPod(), want: RunnerPending, says: "is not Ready"},
		{name: "unschedulable", job: job, pod: runnerPod().Unschedulable("0/3 nodes are available: 3 Insufficient cpu"), want: RunnerPending, says: "Insufficient cpu"},
		{name: "image never pulled", job: job, pod: runnerPod().Waiting("ErrImageNeverPull", "not present"), want: RunnerPending, says: "ErrImageNeverPull"},
		{name: "ready", job: job, pod: runnerPod().Ready("10.0.0.1"), want: RunnerReady},
		{name: "ready, its final envelope handed over", job: job, pod: runnerPod().Ready("10.0.0.1"), final: &measure.Envelope{Final: true},
			want: RunnerSucceeded, says: "handed over its final results"},
		{name: "killed after handing over its final envelope: the exit decides", job: job, pod: runnerPod().Terminated(137, "Error"),
			final: &measure.Envelope{Final: true}, want: RunnerLost, says: "killed by signal 9"},
		{name: "exit 0", job: job, pod: runnerPod().Terminated(0, "Completed"), want: RunnerSucceeded},
		{name: "exit 99: its share failed a threshold", job: job, pod: runnerPod().Terminated(99, "Error"), want: RunnerSucceeded},
		{name: "exit 110: test.fail()", job: job, pod: runnerPod().Terminated(110, "Error"), want: RunnerSucceeded, markedFailed: true},
		{name: "exit 108: test.abort()", job: job, pod: runnerPod().Terminated(108, "Error"), want: RunnerSucceeded, scriptAborted: true},
		{name: "exit 103: stopped by the operator", job: job, pod: runnerPod().Terminated(103, "Error"), want: runnerStopped, says: "stopped through the REST API"},
		{name: "exit 100: setup timeout", job: job, pod: runnerPod().Terminated(100, "Error"), want: runnerFailed, says: "setup() timed out"},
		{name: "exit 101: teardown timeout", job: job, pod: runnerPod().Terminated(101, "Error"), want: runnerFailed, says: "teardown() timed out"},
		{name: "exit 102: timeout", job: job, pod: runnerPod().Terminated(102, "Error"), want: runnerFailed, says: "timed out"},
		{name: "exit 104: invalid config", job: job, pod: runnerPod().Terminated(104, "Error"), want: runnerFailed, says: "invalid k6 configuration"},
		{name: "exit 105: SIGTERM reached k6", job: job, pod: runnerPod().Terminated(105, "Error"), want: RunnerLost, says: "aborted from outside"},
		{name: "exit 106: no REST API", job: job, pod: runnerPod().Terminated(106, "Error"), want: runnerFailed, says: "REST API"},
		{name: "exit 107: script error", job: job, pod: runnerPod().Terminated(107, "Error"), want: runnerFailed, says: "script error"},
		{name: "exit 107 says k6's error", job: job, want: runnerFailed,
			pod:  runnerPod().Terminated(107, "Error").TerminationMessage(k6ScriptErrorLog),
			says: "script error), reason Error: TypeError: Cannot read property 'id' of undefined or null at default (file:///fleetbench/script/test.js:7:20(12))"},
		{name: "exit 109: k6 panicked", job: job, pod: runnerPod().Terminated(109, "Error"), want: runnerFailed, says: "panicked"},
		{name: "exit 1: unknown error", job: job, pod: runnerPod().Terminated(1, "Error"), want: runnerFailed, says: "exited with code 1"},
		{name: "OOM killed", job: job, pod: runnerPod().Terminated(137, "OOMKilled"), want: RunnerOOMKilled, says: "limits.memory"},
		{name: "SIGKILL", job: job, pod: runnerPod().Terminated(137, "Error"), want: RunnerLost, says: "killed by signal 9"},
		{name: "SIGTERM", job: job, pod: runnerPod().Terminated(143, "Error"), want: RunnerLost, says: "killed by signal 15"},
		{name: "exit 255: k6's own error, not signal 127", job: job, pod: runnerPod().Terminated(255, "Error"), want: runnerFailed,
			says: "exited with code 255 (k6's own exit code for an error it reports, not a signal)"},
		{name: "evicted", job: job, pod: runnerPod().Evicted("Evicted"), want: RunnerLost, says: "was lost"},
		{name: "exit 90: the target was never reachable", job: job, want: runnerFailed,
			pod:  runnerPod().Terminated(90, "Error").TerminationMessage("the target was not reachable from this runner within 1m0s; web.fb:80: connection refused (a NetworkPolicy or the network keeps the runner out)\n"),
			says: "could not reach the target, so k6 never started), reason Error: the target was not reachable from this runner within 1m0s; web.fb:80: connection refused"},
		{name: "an init step failed (runners made by earlier versions)", job: job, pod: runnerPod().InitFailed("reach-target", 1, "web.fb:80: connection refused"), want: runnerFailed,
			says: "reach-target exited with code 1: web.fb:80: connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := RunnerState{Job: tc.job, Final: tc.final}
			if tc.pod != nil {
				rs.Pod = tc.pod.Obj()
			}
			v := ClassifyRunner(rs)
			if v.Class != tc.want || v.markedFailed != tc.markedFailed || v.ScriptAborted != tc.scriptAborted {
				t.Errorf("class %s markedFailed %v scriptAborted %v, want %s %v %v (%s)", v.Class, v.markedFailed, v.ScriptAborted,
					tc.want, tc.markedFailed, tc.scriptAborted, v.Why)
			}
			if !strings.Contains(v.Why, tc.says) {
				t.Errorf("why %q lacks %q", v.Why, tc.says)
			}
		})
	}
}

// summary classifies runners with these pods (nil: no pod yet).
func summary(pods ...*tw.PodWrapper) RunnerSummary {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	var rs []RunnerState
	for i, p := range pods {
		s := RunnerState{Index: i, Job: job}
		if p != nil {
			s.Pod = p.Obj()
		}
		rs = append(rs, s)
	}
	return Classify(rs)
}

// TestRunnerSummaryDecisions: the failures the runners show, before and after the start.
func TestRunnerSummaryDecisions(t *testing.T) {
	reason := func(f *Failure) string {
		if f == nil {
			return ""
		}
		return f.Reason
	}
	ready := runnerPod().Ready("10.0.0.1")
	cases := []struct {
		name                                 string
		runners                              RunnerSummary
		beforeStart, notReadyAtDeadline, run string
	}{
		{name: "all ready", runners: summary(ready, ready), notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady},
		{name: "one without pod", runners: summary(ready, nil), notReadyAtDeadline: v1alpha1.ReasonRunnerNotCreated},
		{name: "one unschedulable", runners: summary(ready, runnerPod().Unschedulable("no room"), nil), notReadyAtDeadline: v1alpha1.ReasonRunnerUnschedulable},
		{name: "image missing", runners: summary(runnerPod().Waiting("ErrImageNeverPull", "")), beforeStart: v1alpha1.ReasonRunnerImageNotPresent,
			notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady},
		{name: "script error", runners: summary(ready, runnerPod().Terminated(107, "Error")), beforeStart: v1alpha1.ReasonRunnerFailedBeforeStart,
			notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady, run: v1alpha1.ReasonRunnerFailed},
		{name: "started earlier, status lost", runners: summary(ready, runnerPod().Terminated(0, "Completed")), notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady},
		{name: "exit 99 beside running ones", runners: summary(ready, runnerPod().Terminated(99, "Error")), notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady},
		{name: "OOM beats lost and failed", runners: summary(runnerPod().Terminated(1, "Error"), runnerPod().Evicted("Evicted"), runnerPod().Terminated(137, "OOMKilled")),
			beforeStart: v1alpha1.ReasonRunnerFailedBeforeStart, notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady, run: v1alpha1.ReasonRunnerOOMKilled},
		{name: "lost beats failed", runners: summary(runnerPod().Terminated(1, "Error"), runnerPod().Terminated(143, "Error")),
			beforeStart: v1alpha1.ReasonRunnerFailedBeforeStart, notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady, run: v1alpha1.ReasonRunnerLost},
		{name: "stopped is a witness, not a cause", runners: summary(ready, runnerPod().Terminated(103, "Error")),
			beforeStart: v1alpha1.ReasonRunnerFailedBeforeStart, notReadyAtDeadline: v1alpha1.ReasonRunnersNotReady},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := reason(tc.runners.BeforeStartFailure()); got != tc.beforeStart {
				t.Errorf("before the start: %q, want %q", got, tc.beforeStart)
			}
			if got := reason(tc.runners.NotReadyFailure()); got != tc.notReadyAtDeadline {
				t.Errorf("not ready at the deadline: %q, want %q", got, tc.notReadyAtDeadline)
			}
			if got := reason(tc.runners.RunFailure()); got != tc.run {
				t.Errorf("after the start: %q, want %q", got, tc.run)
			}
		})
	}
}

func TestRunnerCounts(t *testing.T) {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	rs := []RunnerState{{Index: 0}, {Index: 1, Job: job}, {Index: 2, Job: job, Pod: runnerPod().Ready("10.0.0.1").Obj()},
		{Index: 3, Job: job, Pod: runnerPod().Terminated(0, "Completed").Obj()}, {Index: 4, Job: job, Pod: runnerPod().Terminated(99, "Error").Obj()},
		{Index: 5, Job: job, Pod: runnerPod().Terminated(137, "OOMKilled").Obj()}}
	got := Classify(rs).status("3ms")
	want := v1alpha1.RunnerCounts{Desired: 6, Ready: 1, Running: 1, Succeeded: 2, Failed: 1, StartSkew: "3ms"}
	if *got != want {
		t.Errorf("counts %+v, want %+v", *got, want)
	}
	if n := Classify(rs).Active(); n != 3 {
		t.Errorf("active %d, want 3", n)
	}
}

// k6ScriptErrorLog is the end of a runner log as the kubelet keeps it: k6's logfmt lines, the
// error among them.
const k6ScriptErrorLog = `time="2026-11-23T14:15:30Z" level=info msg="starting" source=console
time="2026-11-23T14:15:31Z" level=error msg="TypeError: Cannot read property 'id' of undefined or null\n\tat default (file:///fleetbench/script/test.js:7:20(12))\n" executor=shared-iterations scenario=default
`

// A 1,000-runner fleet's waiting message names a few runners and counts the rest, so status
// stays within the API's limits.
func TestNotReadyNamesAFewRunners(t *testing.T) {
	pods := make([]*tw.PodWrapper, 1000)
	for i := range pods {
		pods[i] = runnerPod().Unschedulable("0/100 nodes are available: 100 Insufficient cpu")
	}
	pods[0] = runnerPod().Ready("10.0.0.1")
	msg := summary(pods...).NotReady()
	if !strings.HasPrefix(msg, "999 of 1000 runners are not Ready: ") || !strings.HasSuffix(msg, "; and 994 more") || len(msg) > 2048 {
		t.Errorf("message of %d bytes: %.300q…", len(msg), msg)
	}
	if few := summary(runnerPod().Unschedulable("no room")).NotReady(); strings.Contains(few, "of 1 runners") {
		t.Errorf("a short list is not counted: %q", few)
	}
}
