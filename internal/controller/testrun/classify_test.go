package testrun

import (
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
			want: runnerLost, says: "runner 0 was lost: BackoffLimitExceeded"},
		{name: "scheduling", job: job, pod: runnerPod(), want: runnerPending, says: "is not Ready"},
		{name: "unschedulable", job: job, pod: runnerPod().Unschedulable("0/3 nodes are available: 3 Insufficient cpu"), want: runnerPending, says: "Insufficient cpu"},
		{name: "image never pulled", job: job, pod: runnerPod().Waiting("ErrImageNeverPull", "not present"), want: runnerPending, says: "ErrImageNeverPull"},
		{name: "ready", job: job, pod: runnerPod().Ready("10.0.0.1"), want: runnerReady},
		{name: "ready, its final envelope handed over", job: job, pod: runnerPod().Ready("10.0.0.1"), final: &measure.Envelope{Final: true},
			want: runnerSucceeded, says: "handed over its final results"},
		{name: "killed after handing over its final envelope: the exit decides", job: job, pod: runnerPod().Terminated(137, "Error"),
			final: &measure.Envelope{Final: true}, want: runnerLost, says: "killed by signal 9"},
		{name: "exit 0", job: job, pod: runnerPod().Terminated(0, "Completed"), want: runnerSucceeded},
		{name: "exit 99: its share failed a threshold", job: job, pod: runnerPod().Terminated(99, "Error"), want: runnerSucceeded},
		{name: "exit 110: test.fail()", job: job, pod: runnerPod().Terminated(110, "Error"), want: runnerSucceeded, markedFailed: true},
		{name: "exit 108: test.abort()", job: job, pod: runnerPod().Terminated(108, "Error"), want: runnerSucceeded, scriptAborted: true},
		{name: "exit 103: stopped by the operator", job: job, pod: runnerPod().Terminated(103, "Error"), want: runnerStopped, says: "stopped through the REST API"},
		{name: "exit 100: setup timeout", job: job, pod: runnerPod().Terminated(100, "Error"), want: runnerFailed, says: "setup() timed out"},
		{name: "exit 101: teardown timeout", job: job, pod: runnerPod().Terminated(101, "Error"), want: runnerFailed, says: "teardown() timed out"},
		{name: "exit 102: timeout", job: job, pod: runnerPod().Terminated(102, "Error"), want: runnerFailed, says: "timed out"},
		{name: "exit 104: invalid config", job: job, pod: runnerPod().Terminated(104, "Error"), want: runnerFailed, says: "invalid k6 configuration"},
		{name: "exit 105: SIGTERM reached k6", job: job, pod: runnerPod().Terminated(105, "Error"), want: runnerLost, says: "aborted from outside"},
		{name: "exit 106: no REST API", job: job, pod: runnerPod().Terminated(106, "Error"), want: runnerFailed, says: "REST API"},
		{name: "exit 107: script error", job: job, pod: runnerPod().Terminated(107, "Error"), want: runnerFailed, says: "script error"},
		{name: "exit 107 says k6's error", job: job, want: runnerFailed,
			pod:  runnerPod().Terminated(107, "Error").TerminationMessage(k6ScriptErrorLog),
			says: "script error), reason Error: TypeError: Cannot read property 'id' of undefined or null at default (file:///fleetbench/script/test.js:7:20(12))"},
		{name: "exit 109: k6 panicked", job: job, pod: runnerPod().Terminated(109, "Error"), want: runnerFailed, says: "panicked"},
		{name: "exit 1: unknown error", job: job, pod: runnerPod().Terminated(1, "Error"), want: runnerFailed, says: "exited with code 1"},
		{name: "OOM killed", job: job, pod: runnerPod().Terminated(137, "OOMKilled"), want: runnerOOMKilled, says: "limits.memory"},
		{name: "SIGKILL", job: job, pod: runnerPod().Terminated(137, "Error"), want: runnerLost, says: "killed by signal 9"},
		{name: "SIGTERM", job: job, pod: runnerPod().Terminated(143, "Error"), want: runnerLost, says: "killed by signal 15"},
		{name: "exit 255: k6's own error, not signal 127", job: job, pod: runnerPod().Terminated(255, "Error"), want: runnerFailed,
			says: "exited with code 255 (k6's own exit code for an error it reports, not a signal)"},
		{name: "evicted", job: job, pod: runnerPod().Evicted("Evicted"), want: runnerLost, says: "was lost"},
		{name: "exit 90: the target was never reachable", job: job, want: runnerFailed,
			pod:  runnerPod().Terminated(90, "Error").TerminationMessage("the target was not reachable from this runner within 1m0s; web.fb:80: connection refused (a NetworkPolicy or the network keeps the runner out)\n"),
			says: "could not reach the target, so k6 never started), reason Error: the target was not reachable from this runner within 1m0s; web.fb:80: connection refused"},
		{name: "an init step failed (runners made by earlier versions)", job: job, pod: runnerPod().InitFailed("reach-target", 1, "web.fb:80: connection refused"), want: runnerFailed,
			says: "reach-target exited with code 1: web.fb:80: connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := runnerState{job: tc.job, final: tc.final}
			if tc.pod != nil {
				rs.pod = tc.pod.Obj()
			}
			v := classifyRunner(rs)
			if v.class != tc.want || v.markedFailed != tc.markedFailed || v.scriptAborted != tc.scriptAborted {
				t.Errorf("class %s markedFailed %v scriptAborted %v, want %s %v %v (%s)", v.class, v.markedFailed, v.scriptAborted,
					tc.want, tc.markedFailed, tc.scriptAborted, v.why)
			}
			if !strings.Contains(v.why, tc.says) {
				t.Errorf("why %q lacks %q", v.why, tc.says)
			}
		})
	}
}

// summary classifies runners with these pods (nil: no pod yet).
func summary(pods ...*tw.PodWrapper) runnerSummary {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	var rs []runnerState
	for i, p := range pods {
		s := runnerState{index: i, job: job}
		if p != nil {
			s.pod = p.Obj()
		}
		rs = append(rs, s)
	}
	return classify(rs)
}

// TestRunnerSummaryDecisions: the failures the runners show, before and after the start.
func TestRunnerSummaryDecisions(t *testing.T) {
	reason := func(f *failure) string {
		if f == nil {
			return ""
		}
		return f.reason
	}
	ready := runnerPod().Ready("10.0.0.1")
	cases := []struct {
		name                                 string
		runners                              runnerSummary
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
			if got := reason(tc.runners.beforeStartFailure()); got != tc.beforeStart {
				t.Errorf("before the start: %q, want %q", got, tc.beforeStart)
			}
			if got := reason(tc.runners.notReadyFailure()); got != tc.notReadyAtDeadline {
				t.Errorf("not ready at the deadline: %q, want %q", got, tc.notReadyAtDeadline)
			}
			if got := reason(tc.runners.runFailure()); got != tc.run {
				t.Errorf("after the start: %q, want %q", got, tc.run)
			}
		})
	}
}

func TestRunnerCounts(t *testing.T) {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	rs := []runnerState{{index: 0}, {index: 1, job: job}, {index: 2, job: job, pod: runnerPod().Ready("10.0.0.1").Obj()},
		{index: 3, job: job, pod: runnerPod().Terminated(0, "Completed").Obj()}, {index: 4, job: job, pod: runnerPod().Terminated(99, "Error").Obj()},
		{index: 5, job: job, pod: runnerPod().Terminated(137, "OOMKilled").Obj()}}
	got := classify(rs).status("3ms")
	want := v1alpha1.RunnerCounts{Desired: 6, Ready: 1, Running: 1, Succeeded: 2, Failed: 1, StartSkew: "3ms"}
	if *got != want {
		t.Errorf("counts %+v, want %+v", *got, want)
	}
	if n := classify(rs).active(); n != 3 {
		t.Errorf("active %d, want 3", n)
	}
}

// k6ScriptErrorLog is the end of a runner log as the kubelet keeps it: k6's logfmt lines, the
// error among them.
const k6ScriptErrorLog = `time="2026-11-23T14:15:30Z" level=info msg="starting" source=console
time="2026-11-23T14:15:31Z" level=error msg="TypeError: Cannot read property 'id' of undefined or null\n\tat default (file:///fleetbench/script/test.js:7:20(12))\n" executor=shared-iterations scenario=default
`

// The pre-flight's answer, read from its Job and pod alone.
func TestJudgePreflight(t *testing.T) {
	job := tw.MakeJob("check-preflight", "ns").Obj()
	badSyntax := `time="2026-11-23T14:15:30Z" level=error msg="could not initialize 'test.js': could not load JS test 'file:///fleetbench/script/test.js': file:///fleetbench/script/test.js: Line 4:35 Unexpected token ; (and 2 more errors)"`
	for _, tc := range []struct {
		name    string
		pods    []corev1.Pod
		passed  bool
		reason  string
		says    string
		waiting string
	}{
		{name: "no pod yet", waiting: "to be created"},
		{name: "running", pods: []corev1.Pod{*runnerPod().Obj()}, waiting: "is running k6 run's checks"},
		{name: "loaded", pods: []corev1.Pod{*runnerPod().Terminated(0, "Completed").Obj()}, passed: true},
		{name: "syntax error", pods: []corev1.Pod{*runnerPod().Terminated(107, "Error").TerminationMessage(badSyntax).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "k6 could not load the script: could not initialize 'test.js'"},
		{name: "bad options", pods: []corev1.Pod{*runnerPod().Terminated(104, "Error").Obj()}, reason: v1alpha1.ReasonScriptInvalid,
			says: "k6 run refuses the test's options; change the script's options, spec.args or the runners' K6_* environment"},
		// k6 run's answer to a flag it does not know: its generic exit code, never "fix spec.script".
		{name: "bad flag", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(k6Log("unknown flag: --vuz")).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "k6 run refuses its arguments: unknown flag: --vuz; fix spec.args"},
		{name: "missing file module", pods: []corev1.Pod{*runnerPod().Terminated(107, "Error").TerminationMessage(k6Log(missingFile)).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "k6 run cannot load a module the script imports: could not initialize"},
		// However k6 ends when it cannot provision an extension (a code of its own, or -1).
		{name: "missing extension", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(k6Log(missingExtension)).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "spec.runner.image"},
		{name: "old runner image", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(k6Log(`unknown command "check" for "k6"`)).Obj()},
			reason: v1alpha1.ReasonRunnerFailedBeforeStart, says: "the runner image has no pre-flight"},
		{name: "image missing", pods: []corev1.Pod{*runnerPod().Waiting("ErrImageNeverPull", "not present").Obj()},
			reason: v1alpha1.ReasonRunnerImageNotPresent, says: "ErrImageNeverPull"},
		{name: "killed", pods: []corev1.Pod{*runnerPod().Terminated(137, "OOMKilled").Obj()}, reason: v1alpha1.ReasonRunnerFailedBeforeStart, says: "OOMKilled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := judgePreflight(job, tc.pods)
			if p.passed != tc.passed || p.failReason != tc.reason || !strings.Contains(p.failMessage+p.waiting, tc.says+tc.waiting) {
				t.Errorf("got %+v, want passed=%v reason=%q saying %q%q", p, tc.passed, tc.reason, tc.says, tc.waiting)
			}
		})
	}
	if p := judgePreflight(job, []corev1.Pod{*runnerPod().Terminated(107, "Error").TerminationMessage(badSyntax).Obj()}); !strings.Contains(p.failMessage, "Line 4:35 Unexpected token") {
		t.Errorf("the message must carry k6's line: %q", p.failMessage)
	}
	report := `{"fleetbenchCheck":"passed","noSetup":false,"noTeardown":true,"totalDuration":"40s","segments":[{"segment":"0:1","maxVUs":1,"scenarios":[{"name":"default","executor":"constant-vus","vus":1,"maxVUs":1}]}]}`
	p := judgePreflight(job, []corev1.Pod{*runnerPod().Terminated(0, "Completed").TerminationMessage(report).Obj()})
	if !p.passed || p.report == nil || !p.report.NoTeardown || len(p.report.Segments) != 1 || p.report.Segments[0].MaxVUs != 1 {
		t.Errorf("k6's plan must be read from a passed check: %+v", p.report)
	}
}

// Errors as k6 logs them, and as the runner's check leaves them in the termination message.
const (
	missingFile = `could not initialize 'test.js': could not load JS test 'file:///fleetbench/script/test.js': ` +
		`The moduleSpecifier "./lib/users.js" couldn't be found on local disk. Make sure that you've specified the right path to the file.`
	missingExtension = `could not initialize 'test.js': could not load JS test 'file:///fleetbench/script/test.js': unknown modules ` +
		`["k6/x/faker"] were tried to be loaded, but couldn't - this likely means automatic extension resolution is required or a custom k6 binary with the required extensions is used`
)

func k6Log(msg string) string {
	return `time="2026-11-26T01:01:18Z" level=error msg=` + strconv.Quote(msg) + "\n"
}

func TestExportsHandleSummary(t *testing.T) {
	for script, want := range map[string]bool{
		"export function handleSummary(data) { return {}; }":          true,
		"export async function handleSummary(d) {}":                   true,
		"export const handleSummary = (d) => ({});":                   true,
		"function handleSummary(d) {}\nexport { handleSummary };":     true,
		"export default function () {}":                               false,
		"// handleSummary is not used\nexport default function () {}": false,
	} {
		if got := exportsHandleSummary(script); got != want {
			t.Errorf("%q: %v, want %v", script, got, want)
		}
	}
}

// A spec.separate run fails at once when a runner is unschedulable and the cluster has fewer
// nodes than runners; otherwise it waits for room as any run does.
func TestSeparateFailure(t *testing.T) {
	ready := runnerPod().Ready("10.0.0.1")
	stuck := runnerPod().Unschedulable("0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules")
	for _, tc := range []struct {
		name     string
		separate bool
		runners  runnerSummary
		nodes    int
		want     string
	}{
		{"too few nodes", true, summary(ready, ready, stuck), 2, "each of the 3 runners on its own node, but the cluster has 2 schedulable nodes"},
		{"enough nodes: waits for room", true, summary(ready, ready, stuck), 3, ""},
		{"nothing unschedulable", true, summary(ready, ready), 1, ""},
		{"not separate", false, summary(ready, stuck), 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.runners.separateFailure(tc.separate, tc.nodes)
			switch {
			case tc.want == "" && f != nil:
				t.Errorf("failure %+v, want none", f)
			case tc.want != "" && (f == nil || f.reason != v1alpha1.ReasonRunnerUnschedulable || !strings.Contains(f.message, tc.want) ||
				!strings.Contains(f.message, "anti-affinity")):
				t.Errorf("failure %+v, want RunnerUnschedulable saying %q and the scheduler's message", f, tc.want)
			}
		})
	}
}

func TestSchedulableNodes(t *testing.T) {
	node := func(name string, ready bool, mutate func(n *corev1.Node)) corev1.Node {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "load"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
		if mutate != nil {
			mutate(&n)
		}
		return n
	}
	nodes := []corev1.Node{
		node("a", true, nil),
		node("b", false, nil),
		node("c", true, func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("d", true, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("e", true, func(n *corev1.Node) { n.Labels = nil }),
		node("f", true, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
		}),
	}
	for _, tc := range []struct {
		name   string
		runner *v1alpha1.RunnerSpec
		want   int
	}{
		{"no rules: ready, uncordoned, untainted", nil, 3},
		{"nodeSelector", &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"pool": "load"}}, 2},
		{"tolerated taint", &v1alpha1.RunnerSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db"}}}, 4},
	} {
		if got := schedulableNodes(nodes, tc.runner); got != tc.want {
			t.Errorf("%s: %d schedulable nodes, want %d", tc.name, got, tc.want)
		}
	}
}

// A 1,000-runner fleet's waiting message names a few runners and counts the rest, so status
// stays within the API's limits.
func TestNotReadyNamesAFewRunners(t *testing.T) {
	pods := make([]*tw.PodWrapper, 1000)
	for i := range pods {
		pods[i] = runnerPod().Unschedulable("0/100 nodes are available: 100 Insufficient cpu")
	}
	pods[0] = runnerPod().Ready("10.0.0.1")
	msg := summary(pods...).notReady()
	if !strings.HasPrefix(msg, "999 of 1000 runners are not Ready: ") || !strings.HasSuffix(msg, "; and 994 more") || len(msg) > 2048 {
		t.Errorf("message of %d bytes: %.300q…", len(msg), msg)
	}
	if few := summary(runnerPod().Unschedulable("no room")).notReady(); strings.Contains(few, "of 1 runners") {
		t.Errorf("a short list is not counted: %q", few)
	}
}
