package provision

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/runners"
)

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
		{name: "bad flag", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(tw.K6Log("unknown flag: --vuz")).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "k6 run refuses its arguments: unknown flag: --vuz; fix spec.args"},
		{name: "missing file module", pods: []corev1.Pod{*runnerPod().Terminated(107, "Error").TerminationMessage(tw.K6Log(tw.K6MissingFile)).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "k6 run cannot load a module the script imports: could not initialize"},
		// However k6 ends when it cannot provision an extension (a code of its own, or -1).
		{name: "missing extension", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(tw.K6Log(tw.K6MissingExtension)).Obj()},
			reason: v1alpha1.ReasonScriptInvalid, says: "spec.runner.image"},
		{name: "old runner image", pods: []corev1.Pod{*runnerPod().Terminated(255, "Error").TerminationMessage(tw.K6Log(`unknown command "check" for "k6"`)).Obj()},
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
		runners  decide.RunnerSummary
		nodes    int
		want     string
	}{
		{"too few nodes", true, summary(ready, ready, stuck), 2, "each of the 3 runners on its own node, but the cluster has 2 schedulable nodes"},
		{"enough nodes: waits for room", true, summary(ready, ready, stuck), 3, ""},
		{"nothing unschedulable", true, summary(ready, ready), 1, ""},
		{"not separate", false, summary(ready, stuck), 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.runners.SeparateFailure(tc.separate, tc.nodes)
			switch {
			case tc.want == "" && f != nil:
				t.Errorf("failure %+v, want none", f)
			case tc.want != "" && (f == nil || f.Reason != v1alpha1.ReasonRunnerUnschedulable || !strings.Contains(f.Message, tc.want) ||
				!strings.Contains(f.Message, "anti-affinity")):
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
	flavor := &v1alpha1.AdmittedPodSet{Name: "runners", NodeSelector: map[string]string{"pool": "load"},
		Tolerations: []v1alpha1.SnapshotToleration{{Key: "dedicated", Operator: "Equal", Value: "db"}}}
	for _, tc := range []struct {
		name     string
		runner   *v1alpha1.RunnerSpec
		admitted *v1alpha1.AdmittedPodSet
		want     int
	}{
		{"no rules: ready, uncordoned, untainted", nil, nil, 3},
		{"nodeSelector", &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"pool": "load"}}, nil, 2},
		{"tolerated taint", &v1alpha1.RunnerSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db"}}}, nil, 4},
		{"the Kueue flavor's label and toleration", nil, flavor, 3},
	} {
		if got := schedulableNodes(nodes, tc.runner, tc.admitted); got != tc.want {
			t.Errorf("%s: %d schedulable nodes, want %d", tc.name, got, tc.want)
		}
	}
}

func runnerPod() *tw.PodWrapper { return tw.MakePod("r-runner-0-x", "ns", runners.ContainerName) }

// summary classifies one runner per pod (nil: a runner with a Job and no pod yet).
func summary(pods ...*tw.PodWrapper) decide.RunnerSummary {
	job := tw.MakeJob("r-runner-0", "ns").Obj()
	var rs []decide.RunnerState
	for i, p := range pods {
		s := decide.RunnerState{Index: i, Job: job}
		if p != nil {
			s.Pod = p.Obj()
		}
		rs = append(rs, s)
	}
	return decide.Classify(rs)
}
