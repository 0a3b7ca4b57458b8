package testrun

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// hostileLine is what a runner's script, a target's image or an init container can write where
// the operator quotes it: it clears the reader's screen, sets the terminal's title, rewrites
// the line, breaks it (a Unicode line separator), reverses the text, and is not UTF-8.
const hostileLine = "\x1b[2J\x1b]0;pwned\x07PASSED\rFAILED\t\u2028\u202eSSAP\xff level=error"

// unprintableIn names the strings of v (a status, an event's note) that would act on a terminal.
func unprintableIn(v any) []string {
	raw, err := json.Marshal(v)
	if err != nil {
		return []string{err.Error()}
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []string{err.Error()}
	}
	var found []string
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		case string:
			if strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u202e' }) {
				found = append(found, n)
			}
		}
	}
	walk(doc)
	return found
}

// runEvents are the events of run's namespace about run.
func runEvents(t *testing.T, run *v1alpha1.TestRun) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(run.Namespace)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == run.Name {
			out = append(out, e)
		}
	}
	return out
}

// TestTenantTextIsPrintable: the text a runner or its init container wrote, quoted in
// status.message and in the run's events, reaches both as one printable line, what it held
// shown escaped (\x1b[2J), whichever path quoted it.
func TestTenantTextIsPrintable(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(pod *corev1.Pod)
	}{
		{"a runner's last line", func(pod *corev1.Pod) {
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName, State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: measure.ExitTargetUnreachable, Reason: "Error", Message: "dialing web\n" + hostileLine + "\n"}}}}
		}},
		{"an init container's termination message", func(pod *corev1.Pod) {
			pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "fetch-data", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", Message: hostileLine + "\npanic: boom\n" + strings.Repeat("x", 4000)}}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := setup(t)
			run := tw.MakeTestRun("text", ns).Obj()
			create(t, run)
			k := newKubelet(t, run)
			k.targetReady()
			k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
				pod.Status.Phase = corev1.PodFailed
				tc.end(pod)
			})
			got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerFailedBeforeStart)
			if bad := unprintableIn(got.Status); len(bad) > 0 || !strings.Contains(got.Status.Message, `\x1b[2J\x1b]0;pwned\x07PASSED\rFAILED \u202eSSAP`) {
				t.Errorf("status holds %q; message %q", bad, got.Status.Message)
			}
			eventually(t, "the failure's event", func() error {
				for _, e := range runEvents(t, run) {
					if e.Reason != v1alpha1.ReasonRunnerFailedBeforeStart {
						continue
					}
					if bad := unprintableIn(e.Note); len(bad) > 0 || !strings.Contains(e.Note, `\x1b[2J`) {
						t.Fatalf("event note holds %q: %q", bad, e.Note)
					}
					return nil
				}
				return fmt.Errorf("no %s event yet", v1alpha1.ReasonRunnerFailedBeforeStart)
			})
		})
	}
}

// TestLogPatternsCountedOffTheWorker: the target's log lines are counted with the after-load
// reads, off the reconcile workers, within the runtime caps. A hostile matching line reaches
// status.target.logFindings[].sample printable; a pattern admission lets through but whose
// program is beyond the cap ((a{100}){10} is 1000 copies) is not run, its finding says why, and
// as it has failAbove the verdict is INCONCLUSIVE, not PASSED on a count of nothing.
func TestLogPatternsCountedOffTheWorker(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("patterns", ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("10s").
		Stability(&v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{
			{Name: "error", Regex: "level=error"},
			{Name: "costly", Regex: "(a{100}){10}", FailAbove: ptr.To[int64](0)}}}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	stats.set(k.targetNS(), 44, 10)
	k.targetReady()
	pods := k.runnersReady(1)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	logs.set(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.targetNS(), Name: "target-stack-pod"}}, []byte("level=info\n"+hostileLine+"\n"), nil)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

	findings := map[string]v1alpha1.LogFinding{}
	for _, f := range got.Status.Target.LogFindings {
		findings[f.Pattern] = f
	}
	if e := findings["error"]; e.Count != 1 || e.Incomplete != "" || !strings.HasPrefix(e.Sample, `\x1b[2J\x1b]0;pwned\x07PASSED\rFAILED  \u202eSSAP`) {
		t.Errorf("error finding = %+v", e)
	}
	if c := findings["costly"]; c.Count != 0 || !strings.Contains(c.Incomplete, "not counted: the pattern compiles to") {
		t.Errorf("costly finding = %+v", c)
	}
	if got.Status.Verdict != v1alpha1.VerdictInconclusive || !strings.Contains(got.Status.Message, "not judged: log pattern costly (failAbove 0)") {
		t.Errorf("verdict %s: %s", got.Status.Verdict, got.Status.Message)
	}
	if bad := unprintableIn(got.Status); len(bad) > 0 {
		t.Errorf("status holds %q", bad)
	}
}
