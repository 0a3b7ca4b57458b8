package testrun

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// kubeletFinalizer holds a deleted runner pod Terminating, as a kubelet does while the
// container gets its SIGTERM, until the test ends it.
const kubeletFinalizer = "test.fleetbench.dev/kubelet"

func liveEnvelope(t *testing.T, pod *corev1.Pod, requests int, start time.Time) measure.Envelope {
	t.Helper()
	env, err := measure.ExtractEnvelope(tw.EnvelopeLog(tw.RunnerLoad{Runner: pod.Name, Requests: requests, Start: start, Duration: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// segmentWatch samples, until stopped, whether two runners of one segment were ever live at
// once: a resumed replacement while the pod it replaces has not ended.
type segmentWatch struct {
	mu         sync.Mutex
	violations []string
	stop       chan struct{}
	done       chan struct{}
}

func watchSegment(lost *corev1.Pod, replacement func() *corev1.Pod) *segmentWatch {
	w := &segmentWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			repl := replacement()
			if repl == nil || len(runner.resumedAt(repl)) == 0 {
				continue
			}
			cur := &corev1.Pod{}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(lost), cur)
			if err == nil && !decide.Terminated(cur) {
				w.mu.Lock()
				w.violations = append(w.violations, fmt.Sprintf("%s resumed while %s runs", repl.Name, lost.Name))
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *segmentWatch) end() []string {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.violations
}

// TestLostRunnerIsReplacedForTheRestOfTheLoad: a stability run's runner pod deleted mid-run
// gets a replacement for the same segment, resumed only once the deleted pod ended, with
// setup()'s data and the remaining duration; the run succeeds with the lost runner's kept
// results merged, the gap in status and the Gapless condition, and its budgets come and go.
func TestLostRunnerIsReplacedForTheRestOfTheLoad(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("soak", ns).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	k, pods := startTwoLive(t, run)
	// Budgets while the load runs: the runners (drain Wait, the default) and the target.
	var rb, tb policyv1.PodDisruptionBudget
	eventually(t, "the PodDisruptionBudgets", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.RunnerBudget(run.Name)}, &rb); err != nil {
			return err
		}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: naming.TargetBudget}, &tb)
	})
	if rb.Spec.MinAvailable == nil || rb.Spec.MinAvailable.Type != intstr.Int || rb.Spec.MinAvailable.IntValue() != run.RunnerCount() || !decide.ControlledBy(&rb, run.UID) {
		t.Errorf("runner budget: %+v, owners %v", rb.Spec, rb.OwnerReferences)
	}

	// The kubelet holds the deleted pod Terminating until its k6 exits.
	lost := pods[1]
	holdTerminating(t, lost)
	var replacement *corev1.Pod
	var mu sync.Mutex
	watch := watchSegment(lost, func() *corev1.Pod { mu.Lock(); defer mu.Unlock(); return replacement })
	if err := env.Client.Delete(ctx, lost); err != nil {
		t.Fatal(err)
	}

	// The lost Job goes, the replacement's comes, for the same segment and the rest of the load.
	name := naming.ReplacementJob(run.Name, 1, 1)
	job := &batchv1.Job{}
	eventually(t, "the replacement Job", func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job) })
	old := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.RunnerJob(run.Name, 1)}, old); !apierrors.IsNotFound(err) && old.DeletionTimestamp.IsZero() {
		t.Errorf("the lost runner's Job still stands beside its replacement: %v", err)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["k6-config.json"], `"duration":"`) || strings.Contains(cm.Data["k6-config.json"], `"duration":"1m0s"`) || cm.Data[drive.LostEnvelopeKey] == "" {
		t.Errorf("replacement ConfigMap: %v", cm.Data)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !strings.Contains(strings.Join(c.Args, " "), "--execution-segment 1/2:1") {
		t.Errorf("not the lost runner's segment: %v", c.Args)
	}
	got := waitGap(t, run, func(g v1alpha1.RunnerGap) error {
		if g.Runner != 1 || g.Replacement != 1 || g.Job != name || g.LostPod != lost.Name || g.Cause != "Deleted" || g.ObservedUntil == nil {
			return fmt.Errorf("gap %+v", g)
		}
		return nil
	})
	if c := findCondition(got, v1alpha1.ConditionGapless); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Gapless: %+v", c)
	}

	newPods := k.podsFor([]batchv1.Job{*job}, func(_ int, pod *corev1.Pod) { setRunning(pod, 7) })
	mu.Lock()
	replacement = newPods[0]
	mu.Unlock()
	// The operator sees the replacement Ready while the lost pod still runs: it must not start it.
	eventually(t, "the replacement seen Ready", func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.Runners == nil || got.Status.Runners.Ready != 2 {
			return fmt.Errorf("runners %+v", got.Status.Runners)
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // room for a wrong Resume to land before the lost pod ends
	if n := len(runner.resumedAt(newPods[0])); n != 0 {
		t.Errorf("the replacement was resumed %d times while the lost pod still ran", n)
	}
	// The lost pod's k6 ends (SIGTERM, 105) and the kubelet lets it go.
	letGo(t, k, lost)
	got = waitReplaced(t, run)
	if v := watch.end(); len(v) > 0 {
		t.Errorf("two live runners of one segment: %v", v)
	}
	_, _, _, data := runner.calls(ns)
	if want := fmt.Sprintf(`{"token":"t-%s"}`, pods[0].Name); data[newPods[0].Name] != want {
		t.Errorf("setup() data handed to the replacement: %q, want runner 0's %q", data[newPods[0].Name], want)
	}
	if g := got.Status.Gaps[0]; g.EstimatedUnobserved < 0 || g.Remaining == "" {
		t.Errorf("gap %+v", g)
	}

	// Both runners end: the results are runner 0's, the replacement's and what runner 1 kept.
	got = finishReplaced(t, k, run, pods[0], newPods[0])
	if !strings.Contains(got.Status.Message, "1 gap") || !strings.Contains(got.Status.Message, "runner 1") {
		t.Errorf("the verdict's message does not say what the results cover: %s", got.Status.Message)
	}
	eventually(t, "the budgets deleted at the end", func() error {
		for _, key := range []client.ObjectKey{{Namespace: ns, Name: naming.RunnerBudget(run.Name)}, {Namespace: k.targetNS(), Name: naming.TargetBudget}} {
			if err := env.Client.Get(ctx, key, &policyv1.PodDisruptionBudget{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		return nil
	})
}

// TestLostRunnerPastMaxReplacementsFailsTheRun: with maxReplacements 0 a loss ends the run
// RunnerLost as before, saying why it was not replaced.
func TestLostRunnerPastMaxReplacementsFailsTheRun(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("soak-max", ns).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	run.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{MaxReplacements: ptr.To[int32](0)}
	k, pods := startRunning(t, run, 2)
	k.Finish(pods[1], 137, "Error") // SIGKILL
	eventually(t, "the surviving runner stopped", func() error {
		if runner.stops(pods[0]) == 0 {
			return errors.New("not stopped")
		}
		return nil
	})
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], decide.ExitStopped, "Error")
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerLost)
	if !strings.Contains(got.Status.Message, "maxReplacements") {
		t.Errorf("message: %s", got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ReplacementJob(run.Name, 1, 1)}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("a replacement past maxReplacements: %v", err)
	}
}

// TestReplaceIsRefusedForIterations: admission refuses Replace for a load of iterations, which
// cannot be resumed exactly, and for a lone runner, whose setup() data the operator never holds.
func TestReplaceIsRefusedForIterations(t *testing.T) {
	ns := setup(t)
	bench := tw.MakeTestRun("bench-replace", ns).Type(v1alpha1.TestTypeBenchmark).Parallelism(2).Devices(20, "1s").Iterations(3).Obj()
	bench.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{Policy: v1alpha1.RunnerLossReplace}
	if err := env.Client.Create(ctx, bench); err == nil || !strings.Contains(err.Error(), "cannot be resumed exactly") {
		t.Errorf("iterations with Replace: %v", err)
	}
	lone := tw.MakeTestRun("lone-replace", ns).Devices(20, "1s").Duration("1m").Obj()
	lone.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{Policy: v1alpha1.RunnerLossReplace}
	if err := env.Client.Create(ctx, lone); err == nil || !strings.Contains(err.Error(), "parallelism 2 or more") {
		t.Errorf("one runner with Replace: %v", err)
	}
}

func waitGap(t *testing.T, run *v1alpha1.TestRun, check func(v1alpha1.RunnerGap) error) *v1alpha1.TestRun {
	t.Helper()
	got := &v1alpha1.TestRun{}
	eventually(t, "the gap in status", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if len(got.Status.Gaps) != 1 {
			return fmt.Errorf("gaps %+v (phase %s %s: %s)", got.Status.Gaps, got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		return check(got.Status.Gaps[0])
	})
	return got
}

func findCondition(run *v1alpha1.TestRun, typ string) *metav1.Condition {
	for i := range run.Status.Conditions {
		if run.Status.Conditions[i].Type == typ {
			return &run.Status.Conditions[i]
		}
	}
	return nil
}

// resumedAt is when each Resume reached pod.
func (f *fakeRunnerAPI) resumedAt(pod *corev1.Pod) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.resumed[key(pod)]...)
}
