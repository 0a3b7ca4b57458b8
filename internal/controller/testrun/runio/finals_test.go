package runio

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// finalOnly is a RunnerAPI whose Final answers with answer(attempt); the rest is unused here.
type finalOnly struct {
	RunnerAPI
	attempts atomic.Int32
	answer   func(ctx context.Context, attempt int32) (measure.Envelope, error)
}

func (f *finalOnly) Final(ctx context.Context, _ *corev1.Pod) (measure.Envelope, error) {
	return f.answer(ctx, f.attempts.Add(1))
}

func heldPod(uid string) *corev1.Pod {
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "r-runner-0-x", "ns", types.UID(uid)
	return pod
}

func heldRun() *v1alpha1.TestRun {
	run := &v1alpha1.TestRun{}
	run.Name, run.Namespace, run.UID = "r", "ns", "run-uid"
	return run
}

// A runner not yet listening is asked again; its clean final envelope is kept and wakes its
// TestRun; forget drops it.
func TestFinalEnvelopeIsKeptAndWakesTheRun(t *testing.T) {
	api := &finalOnly{answer: func(_ context.Context, attempt int32) (measure.Envelope, error) {
		if attempt == 1 {
			return measure.Envelope{}, errors.New("connection refused")
		}
		return measure.Envelope{Final: true, Runner: "r-runner-0-x"}, nil
	}}
	f := NewFinalEnvelopes(api)
	f.Hold(heldRun(), heldPod("p1"), time.Now().Add(time.Minute))
	f.Hold(heldRun(), heldPod("p1"), time.Now().Add(time.Minute)) // once per pod
	select {
	case ev := <-f.Wake:
		if ev.Object.Name != "r" || ev.Object.Namespace != "ns" {
			t.Errorf("woke %s/%s, want ns/r", ev.Object.Namespace, ev.Object.Name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the TestRun was not woken")
	}
	if env := f.Final("p1"); env == nil || env.Runner != "r-runner-0-x" {
		t.Fatalf("final = %+v, want the runner's envelope", env)
	}
	if n := api.attempts.Load(); n != 2 {
		t.Errorf("%d requests, want 2: one refused, one answered, and no second hold", n)
	}
	f.Forget("run-uid")
	if f.Final("p1") != nil {
		t.Error("forget kept the envelope")
	}
}

// A final envelope with a test error is kept for its numbers, but does not end the runner:
// k6's exit code says what the error means.
func TestFinalEnvelopeWithATestErrorIsKeptForItsNumbersOnly(t *testing.T) {
	api := &finalOnly{answer: func(context.Context, int32) (measure.Envelope, error) {
		return measure.Envelope{Final: true, Runner: "r-runner-0-x", Error: "test run was marked as failed"}, nil
	}}
	f := NewFinalEnvelopes(api)
	pod := heldPod("p2")
	f.Hold(heldRun(), pod, time.Now().Add(time.Minute))
	select {
	case <-f.Wake:
	case <-time.After(10 * time.Second):
		t.Fatal("not woken")
	}
	env := f.Final("p2")
	if env == nil || env.Runner != "r-runner-0-x" {
		t.Fatalf("final = %+v, want the runner's envelope", env)
	}
	pod.Status.Phase = corev1.PodRunning
	if v := decide.ClassifyRunner(decide.RunnerState{Job: &batchv1.Job{}, Pod: pod, Final: env}); v.Class == decide.RunnerSucceeded {
		t.Errorf("a running runner whose final envelope has a test error is %v (%s), want it judged by its exit", v.Class, v.Why)
	}
}

// forget ends a held request.
func TestForgetEndsTheHeldRequest(t *testing.T) {
	ended := make(chan error, 1)
	api := &finalOnly{answer: func(ctx context.Context, _ int32) (measure.Envelope, error) {
		<-ctx.Done()
		ended <- ctx.Err()
		return measure.Envelope{}, ctx.Err()
	}}
	f := NewFinalEnvelopes(api)
	f.Hold(heldRun(), heldPod("p3"), time.Now().Add(time.Hour))
	for api.attempts.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	f.Forget("run-uid")
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("held request ended with %v, want canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("forget left the request held")
	}
}

// Past its deadline a hold drops what it kept, so a TestRun deleted without forget leaks nothing.
func TestHoldDropsItsEntriesAtItsDeadline(t *testing.T) {
	api := &finalOnly{answer: func(context.Context, int32) (measure.Envelope, error) {
		return measure.Envelope{Final: true}, nil
	}}
	f := NewFinalEnvelopes(api)
	f.Hold(heldRun(), heldPod("p4"), time.Now().Add(300*time.Millisecond))
	<-f.Wake
	if f.Final("p4") == nil {
		t.Fatal("the envelope was not kept before the deadline")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		left := len(f.held) + len(f.got) + len(f.byRun)
		f.mu.Unlock()
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d entries left 10 s after the hold's deadline", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
