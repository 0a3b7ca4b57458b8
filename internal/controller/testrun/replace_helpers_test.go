package testrun

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// startTwoLive starts run with 2 runners whose live endpoints answer 40 and 50 requests, and
// waits until the operator has read them (progress 90), so that runner 1 has results to keep.
func startTwoLive(t *testing.T, run *v1alpha1.TestRun) (*kubelet, []*corev1.Pod) {
	t.Helper()
	k, pods := startRunning(t, run, 2)
	start := time.Now()
	runner.serveLive(pods[0], func() measure.Envelope { return liveEnvelope(t, pods[0], 40, start) })
	runner.serveLive(pods[1], func() measure.Envelope { return liveEnvelope(t, pods[1], 50, start) })
	eventually(t, "a live read", func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.Progress == nil || got.Status.Progress.Requests != 90 {
			return fmt.Errorf("progress %+v", got.Status.Progress)
		}
		return nil
	})
	return k, pods
}

// holdTerminating makes a deletion of pod leave it Terminating, as the kubelet does until its
// k6 exits; letGo ends it.
func holdTerminating(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	controllerutil.AddFinalizer(pod, kubeletFinalizer)
	if err := env.Client.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// letGo ends the k6 of a pod held Terminating (SIGTERM, 105) and lets the kubelet remove it.
func letGo(t *testing.T, k *kubelet, pod *corev1.Pod) {
	t.Helper()
	k.Finish(pod, decide.ExitExternalAbort, "Error")
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	controllerutil.RemoveFinalizer(pod, kubeletFinalizer)
	if err := env.Client.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// waitReplaced waits until run's one gap says its replacement runs.
func waitReplaced(t *testing.T, run *v1alpha1.TestRun) *v1alpha1.TestRun {
	t.Helper()
	return waitGap(t, run, func(g v1alpha1.RunnerGap) error {
		if g.ReplacedAt == nil {
			return errors.New("not replaced yet")
		}
		return nil
	})
}

// finishReplaced ends runner 0 and runner 1's replacement with 100 requests each and waits
// for the run to succeed with those and the 50 startTwoLive's runner 1 measured before its loss.
func finishReplaced(t *testing.T, k *kubelet, run *v1alpha1.TestRun, survivor, replacement *corev1.Pod) *v1alpha1.TestRun {
	t.Helper()
	end := time.Now()
	logs.set(survivor, load(survivor, end), nil)
	logs.set(replacement, load(replacement, end), nil)
	k.Finish(survivor, 0, "Completed")
	k.Finish(replacement, 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := got.Status.Results; r == nil || r.Requests.Total != 250 {
		t.Errorf("results: %+v, want 100 + 100 + the 50 runner 1 measured before its loss", got.Status.Results)
	}
	return got
}
