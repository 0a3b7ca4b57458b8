//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// The reduced chaos matrix of `make e2e` (issue 16): faults a long run meets, on the real
// cluster, one run each.

// TestManagerForceDeletedWhileRunning: the manager pod is force-deleted mid-load; its
// replacement picks the run up from the world: the run ends Succeeded with every request
// counted, no runner Job made twice and no second start.
func TestManagerForceDeletedWhileRunning(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-chaos-manager")
	run := tw.MakeTestRun("survivor", ns).Inline(arrivalScript).Parallelism(2).Threshold("http_req_failed", "rate<0.01").Obj()
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	running := e.waitPhase(t, run, v1alpha1.PhaseRunning, 3*time.Minute)
	started := running.Status.StartTime.DeepCopy()
	time.Sleep(3 * time.Second) // well inside the 20 s load
	e.forceDeleteManager(t)

	got, took := e.waitFinished(t, run, 3*time.Minute)
	t.Logf("finished %s/%s verdict %s %s after the manager was deleted", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second))
	requirePassed(t, got)
	if !got.Status.StartTime.Equal(started) {
		t.Errorf("startTime moved from %s to %s: the load was started twice", started, got.Status.StartTime)
	}
	if r := got.Status.Results; r == nil || r.Requests == nil || r.Requests.Total < 3900 || r.Partial {
		t.Errorf("results %+v, want about 4000 requests, not partial", r)
	}
	var jobs batchv1.JobList
	if err := e.c.List(e.ctx, &jobs, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 2 {
		t.Errorf("%d runner Jobs, want 2: none made twice", len(jobs.Items))
	}
}

// TestRunnerPodDeletedWhileRunning: a runner pod deleted mid-load ends the run Failed
// RunnerLost within a minute of the loss, with the results the runners had as partial.
func TestRunnerPodDeletedWhileRunning(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-chaos-runner")
	run := tw.MakeTestRun("lossy", ns).Inline(arrivalScript).Parallelism(2).Obj()
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	e.waitPhase(t, run, v1alpha1.PhaseRunning, 3*time.Minute)
	time.Sleep(3 * time.Second)
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels{naming.LabelRunnerIndex: "1"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("runner 1's pod: %v (%d)", err, len(pods.Items))
	}
	lost := time.Now()
	if err := e.c.Delete(e.ctx, &pods.Items[0], client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	got, _ := e.waitFinished(t, run, 2*time.Minute)
	after := got.Status.CompletionTime.Sub(lost)
	t.Logf("BENCH runner pod deleted → %s/%s in %s (goal ≤ 60 s): %s", got.Status.Phase, got.Status.Reason, after.Round(time.Second), got.Status.Message)
	if got.Status.Phase != v1alpha1.PhaseFailed || got.Status.Reason != v1alpha1.ReasonRunnerLost {
		t.Errorf("%s/%s, want Failed/RunnerLost", got.Status.Phase, got.Status.Reason)
	}
	if after > time.Minute {
		t.Errorf("the run ended %s after the loss, want within a minute", after)
	}
	if r := got.Status.Results; r != nil && !r.Partial {
		t.Errorf("results of a run that lost a runner are not marked partial")
	}
}

// waitPhase waits until the TestRun reaches phase (or ends).
func (e *env) waitPhase(t *testing.T, run *v1alpha1.TestRun, phase v1alpha1.TestRunPhase, timeout time.Duration) *v1alpha1.TestRun {
	t.Helper()
	got := &v1alpha1.TestRun{}
	e.eventually(t, fmt.Sprintf("TestRun %s in phase %s", run.Name, phase), timeout, func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		if got.Status.Phase == v1alpha1.PhaseFailed {
			t.Fatalf("failed before %s: %s %s", phase, got.Status.Reason, got.Status.Message)
		}
		return got.Status.Phase == phase, string(got.Status.Phase)
	})
	return got
}

// forceDeleteManager deletes the manager's pod without grace, as a node loss would end it, and
// waits for its replacement to be Ready.
func (e *env) forceDeleteManager(t *testing.T) {
	t.Helper()
	pods, err := e.cs.CoreV1().Pods(managerNamespace).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("manager pod: %v", err)
	}
	old := pods.Items[0].Name
	if err := e.cs.CoreV1().Pods(managerNamespace).Delete(e.ctx, old, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "a new manager pod Ready", 2*time.Minute, func() (bool, string) {
		pods, err := e.cs.CoreV1().Pods(managerNamespace).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if p.Name != old && c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d manager pods, none new and Ready", len(pods.Items))
	})
}
