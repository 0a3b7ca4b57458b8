//go:build e2e && chaos

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// Issue 28's rows: a runner of a stability run lost mid-run is replaced (spec.runnerLoss
// Replace, the stability default) and the run Succeeds with the gap in status.gaps. Each row
// measures the time from the fault to the replacement's start and the share of the planned
// requests the results miss, and samples every 50 ms that no segment ever has two live
// runners (Ready, not being deleted). Run them alone with
//   sudo CHAOS_FAULTS='replaced' make chaos
// (CHAOS_FAULTS is a regexp on the names below).

// replaceRate and replaceLength: 200 devices once a second for replaceLength, from 2 runners.
const replaceRate = 200

// replaceRun is a stability run of the device model, which a replacement can resume.
func replaceRun(length string, drain v1alpha1.DrainPolicy) func(ns string) *v1alpha1.TestRun {
	return func(ns string) *v1alpha1.TestRun {
		run := tw.MakeTestRun("chaos", ns).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(replaceRate, "1s").Duration(v1alpha1.Duration(length)).
			Threshold("http_req_failed", "rate<0.01").TTL(30).Obj()
		run.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{Drain: drain}
		return run
	}
}

// oomScript makes the original runner 1 grow without bound 20 s after its VUs start; its
// replacement (FLEETBENCH_REPLACEMENT set) and runner 0 do not.
const oomScript = `import http from 'k6/http';
const hog = [];
const t0 = Date.now();
const leak = __ENV.FLEETBENCH_RUNNER_INDEX === '1' && !__ENV.FLEETBENCH_REPLACEMENT;
export default function () {
  http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `);
  if (leak && Date.now() - t0 > 20000) { hog.push('x'.repeat(8 << 20) + __VU + Date.now()); }
}
`

func replaceFaults() []fault {
	return []fault{
		{name: "runner pod deleted, replaced", expect: "Succeeded, gap accounted, 0 duplicate runners per segment",
			build: replaceRun("90s", ""), inject: withSegmentWatch(func(t *testing.T, e *env, run *v1alpha1.TestRun) {
				if err := e.c.Delete(e.ctx, e.runnerPod(t, run, 1)); err != nil {
					t.Fatal(err)
				}
			}), check: replaced(90 * time.Second)},
		{name: "runner's node drained, replaced", expect: "Succeeded, gap accounted, 0 duplicate runners per segment",
			build: replaceRun("90s", v1alpha1.DrainReplace), inject: withSegmentWatch(func(t *testing.T, e *env, run *v1alpha1.TestRun) {
				drainRunner(t, e, run, true)
			}), check: replaced(90 * time.Second)},
		{name: "runner's node drained, drain waits", expect: "Succeeded, eviction refused, no gap",
			build: replaceRun("40s", v1alpha1.DrainWait), inject: withSegmentWatch(func(t *testing.T, e *env, run *v1alpha1.TestRun) {
				drainRunner(t, e, run, false)
			}), check: gapless(40 * time.Second)},
		{name: "runner's node lost, replaced", expect: "Succeeded, gap accounted, 0 duplicate runners per segment",
			build: replaceRun("240s", ""), inject: withSegmentWatch(loseRunnerNode), check: replaced(240 * time.Second)},
		{name: "runner OOM-killed, replaced", expect: "Succeeded, gap accounted, 0 duplicate runners per segment",
			build: func(ns string) *v1alpha1.TestRun {
				run := replaceRun("90s", "")(ns)
				run.Spec.Script = v1alpha1.ScriptSpec{Inline: oomScript}
				run.Spec.Runner = &v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("300Mi")}}}
				return run
			}, inject: func(t *testing.T, e *env, run *v1alpha1.TestRun, w *runWatch) time.Time {
				startSegmentWatch(t, e, run, w)
				w.waitFor(t, v1alpha1.PhaseRunning)
				pod := e.runnerPod(t, run, 1)
				var lost time.Time
				e.eventually(t, "runner 1 OOM-killed", 2*time.Minute, func() (bool, string) {
					cur := &corev1.Pod{}
					if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
						return false, err.Error()
					}
					for _, cs := range cur.Status.ContainerStatuses {
						if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
							lost = t.FinishedAt.Time
							return true, ""
						}
					}
					return false, string(cur.Status.Phase)
				})
				return lost
			}, check: replaced(90 * time.Second)},
	}
}

// withSegmentWatch strikes 15 s into the load, with the per-segment watch running.
func withSegmentWatch(strike func(t *testing.T, e *env, run *v1alpha1.TestRun)) injector {
	return func(t *testing.T, e *env, run *v1alpha1.TestRun, w *runWatch) time.Time {
		startSegmentWatch(t, e, run, w)
		w.waitFor(t, v1alpha1.PhaseRunning)
		time.Sleep(15 * time.Second)
		lost := time.Now()
		strike(t, e, run)
		return lost
	}
}

// startSegmentWatch samples the runner pods every 50 ms until the run ends and fails the test
// if a segment ever had two live runners: Ready and not being deleted.
func startSegmentWatch(t *testing.T, e *env, run *v1alpha1.TestRun, w *runWatch) *sync.WaitGroup {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	worst := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var pods corev1.PodList
			if err := e.c.List(e.ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
				continue
			}
			live := map[string]int{}
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp == nil && podReady(p) {
					live[p.Labels[naming.LabelRunnerIndex]]++
				}
			}
			for _, n := range live {
				worst = max(worst, n)
			}
		}
	})
	var once sync.Once
	end := func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			t.Logf("most live runners of one segment at once: %d", worst)
			if worst > 1 {
				t.Errorf("a segment had %d live runners at once", worst)
			}
		})
	}
	prev := w.afterEnd
	w.afterEnd = func() {
		end()
		if prev != nil {
			prev()
		}
	}
	t.Cleanup(end)
	return &wg
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// drainRunner does what kubectl drain --pod-selector=<the run's runners> does to runner 1's
// node: cordon it, then evict its runner pod through the Eviction API, which honours the run's
// PodDisruptionBudgets. expectEvicted: drain Replace (no budget on the runners); otherwise the
// eviction must be refused. The node is uncordoned when the run ends.
func drainRunner(t *testing.T, e *env, run *v1alpha1.TestRun, expectEvicted bool) {
	pod := e.runnerPod(t, run, 1)
	node := &corev1.Node{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.Unschedulable = true
	if err := e.c.Patch(e.ctx, node, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Unschedulable = false
		_ = e.c.Patch(e.ctx, node, patch)
	})
	err := e.cs.PolicyV1().Evictions(pod.Namespace).Evict(e.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}})
	switch {
	case expectEvicted:
		if err != nil {
			t.Fatalf("evicting %s: %v", pod.Name, err)
		}
	case err == nil:
		t.Errorf("%s was evicted although its PodDisruptionBudget allows no disruption", pod.Name)
	case !apierrors.IsTooManyRequests(err):
		// 429 is the budget's refusal, what kubectl drain waits on; anything else (a hang, as
		// when the budget could not be computed) is not the budget working.
		t.Errorf("evicting %s answered %v, want 429 (its PodDisruptionBudget refuses)", pod.Name, err)
	default:
		after := &corev1.Pod{}
		if gerr := e.c.Get(e.ctx, client.ObjectKeyFromObject(pod), after); gerr != nil || !after.DeletionTimestamp.IsZero() {
			t.Errorf("%s was evicted although its PodDisruptionBudget refused", pod.Name)
		}
		t.Logf("eviction refused as the budget says: %v", err)
	}
}

// loseRunnerNode loses runner 1's node as a dead machine would: its kubelet stops, the runner's
// container is killed through containerd, then containerd stops too. Both start again once
// the run ended.
func loseRunnerNode(t *testing.T, e *env, run *v1alpha1.TestRun) {
	pod := e.runnerPod(t, run, 1)
	node := pod.Spec.NodeName
	suffix := strings.TrimPrefix(node, "fleetbench-node")
	kubelet, containerd := "kubelet"+suffix, "containerd"+suffix
	runFault(t, "stop", kubelet)
	killContainer(t, pod, runners.ContainerName)
	runFault(t, "stop", containerd)
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			runFault(t, "start", containerd)
			startKubelet(t, e, kubelet, node)
		})
	})
}

// replaced: the run Succeeded with every loss replaced; the counts plus the gaps' estimates
// make the planned load within 3 % (counts exact outside the gaps). It logs the measurements.
func replaced(length time.Duration) func(got *v1alpha1.TestRun, lost time.Time) string {
	return func(got *v1alpha1.TestRun, lost time.Time) string {
		if got.Status.Phase != v1alpha1.PhaseSucceeded {
			return fmt.Sprintf("ended %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		if len(got.Status.Gaps) == 0 {
			return "no gap in status.gaps"
		}
		r := got.Status.Results
		if r == nil || r.Requests == nil {
			return "no results"
		}
		planned := int64(replaceRate * length.Seconds())
		var unobserved int64
		for _, g := range got.Status.Gaps {
			if g.ReplacedAt == nil {
				return fmt.Sprintf("gap not replaced: %+v", g)
			}
			unobserved += g.EstimatedUnobserved
			fmt.Printf("REPLACEMENT runner %d cause %s: fault → replaced %s, loss seen → replaced %s, %d requests unobserved (%.2f %% of %d)\n", g.Runner, g.Cause,
				g.ReplacedAt.Sub(lost).Round(100*time.Millisecond), g.ReplacedAt.Sub(g.LostAt.Time).Round(100*time.Millisecond),
				g.EstimatedUnobserved, 100*float64(g.EstimatedUnobserved)/float64(planned), planned)
		}
		if c := condition(got, v1alpha1.ConditionGapless); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Sprintf("Gapless %+v, want False", c)
		}
		if off := float64(r.Requests.Total+unobserved-planned) / float64(planned); off > 0.03 || off < -0.03 {
			return fmt.Sprintf("%d requests + %d unobserved, planned %d: off by %.1f %%", r.Requests.Total, unobserved, planned, 100*off)
		}
		return ""
	}
}

// gapless: the run Succeeded with every planned request and no gap.
func gapless(length time.Duration) func(got *v1alpha1.TestRun, lost time.Time) string {
	return func(got *v1alpha1.TestRun, _ time.Time) string {
		planned := int64(replaceRate * length.Seconds())
		r := got.Status.Results
		switch {
		case got.Status.Phase != v1alpha1.PhaseSucceeded || len(got.Status.Gaps) > 0:
			return fmt.Sprintf("ended %s/%s with %d gaps: %s", got.Status.Phase, got.Status.Reason, len(got.Status.Gaps), got.Status.Message)
		case r == nil || r.Requests == nil || r.Requests.Total < planned-planned/50:
			return fmt.Sprintf("results %s, want about %d", requestsOf(r), planned)
		}
		return ""
	}
}

func condition(run *v1alpha1.TestRun, typ string) *metav1.Condition {
	for i := range run.Status.Conditions {
		if run.Status.Conditions[i].Type == typ {
			return &run.Status.Conditions[i]
		}
	}
	return nil
}
