package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// setup() and teardown() run once for the whole fleet, as one k6 would run them, not once per
// runner (k6-operator #223): every runner starts with --no-setup --no-teardown; the operator
// runs setup() on runner 0 through k6's REST API before the start and hands its data to the
// others; runner 0 lingers after its load, and once every runner's load ended the operator
// runs teardown() there and releases it. A single runner runs both itself.
//
// An operator that crashes between running setup() and recording it runs it again on restart:
// k6's API cannot say whether setup() ran. That is the only way it runs twice.

// setupOnce runs setup() on runner 0 and hands its data to the other runners, off the reconcile
// worker (scriptCalls); proceed is true once that is done. While it runs, result says when to
// look again at the latest (its return wakes the run sooner); when it failed, s.failure says why.
func (r *Stage) setupOnce(s *decide.Scope) (result ctrl.Result, proceed bool) {
	run := s.Run
	if !runners.OnceForTheFleet(len(s.Runners)) || s.ConditionTrue(v1alpha1.ConditionSetupDone) {
		return ctrl.Result{}, true
	}
	if c := s.Condition(v1alpha1.ConditionSetupDone); c != nil && c.Reason == v1alpha1.ReasonNotRequested {
		return ctrl.Result{}, true // --no-setup: the runners' VUs get no data, as with k6 run --no-setup
	}
	// Copies: the cache's pods must not be read after this reconcile.
	pods := make([]*corev1.Pod, len(s.Runners))
	for i, rs := range s.Runners {
		pods[i] = rs.Pod.DeepCopy()
	}
	first := pods[0]
	note, fail, done := r.Scripts.Call(run, "setup", func(ctx context.Context) (string, *decide.Failure) {
		data, err := r.RunnerAPI.Setup(ctx, first)
		if err != nil {
			return "", &decide.Failure{Reason: v1alpha1.ReasonSetupFailed, Message: fmt.Sprintf("setup() failed on runner %s: %v; fix the script's setup()", first.Name, err)}
		}
		if len(data) > runio.MaxSetupData {
			return "", &decide.Failure{Reason: v1alpha1.ReasonSetupFailed, Message: fmt.Sprintf("setup() returned %d bytes of data; every runner gets a copy, so at most %d are handed over: return less (e.g. ids, not payloads)",
				len(data), runio.MaxSetupData)}
		}
		if err := r.handOver(ctx, pods, data); err != nil {
			// Running setup() again would run it twice: a runner that cannot take its data fails the run.
			return "", &decide.Failure{Reason: v1alpha1.ReasonStartFailed, Message: "could not hand setup()'s data to " + err.Error()}
		}
		return fmt.Sprintf("setup() ran once, on runner %s; its data (%d bytes) went to all %d runners", first.Name, len(data), len(pods)), nil
	})
	switch {
	case !done:
		s.RecordCondition(v1alpha1.ConditionSetupDone, metav1.ConditionFalse, v1alpha1.ReasonStepRunning, "setup() is running on runner "+first.Name)
		return rc.After(runio.ScriptCallLimit), false
	case fail != nil:
		s.Fail(fail.Reason, fail.Message)
		return ctrl.Result{}, false
	}
	s.RecordCondition(v1alpha1.ConditionSetupDone, metav1.ConditionTrue, v1alpha1.ReasonRanOnce, note)
	return ctrl.Result{}, true
}

// handOver gives setup()'s data to runners 1..n-1, runnerReadsAtOnce at a time, each with a
// few attempts. Not all at once: 5,000 runners' calls held 18 MB and 15,000 goroutines (the
// call and its connection's loops) together. Its timing does not matter to the start skew: it
// ends before the start (setupOnce), whose Warm calls open fresh connections for the Resumes.
func (r *Stage) handOver(ctx context.Context, pods []*corev1.Pod, data json.RawMessage) error {
	others := append([]*corev1.Pod{nil}, pods[1:]...)
	errs := make([]error, len(pods))
	runio.OnRunnersAtMost(others, runio.RunnerReadsAtOnce, func(i int, pod *corev1.Pod) {
		for attempt := range 3 {
			if errs[i] = r.RunnerAPI.SetSetupData(ctx, pod, data); errs[i] == nil {
				return
			}
			select {
			case <-ctx.Done(): // past scriptCallLimit: the runners still queued fail at once
				return
			case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
			}
		}
	})
	return errors.Join(errs...)
}

// endPollInterval is how often a lingering runner 0 is asked whether its load ended, right
// after the others ended; maxEndPollInterval is where the asking slows down to.
const (
	endPollInterval    = 250 * time.Millisecond
	maxEndPollInterval = 5 * time.Second
)

// EndPoll is when to ask runner 0 again: often at first (runner 0 usually ends within moments
// of the others, and each moment of waiting is added to the run's end), then less and less:
// as often as it has waited so far, up to maxEndPollInterval. A runner 0 that never ends is
// asked a few dozen times until the run deadline, not four times a second.
func EndPoll(waited time.Duration) time.Duration {
	return min(max(waited, endPollInterval), maxEndPollInterval)
}

// teardownOnce runs teardown() on runner 0 once every runner's load ended, then releases
// runner 0 from its linger. waiting is true while runner 0 is polled, teardown() runs (off the
// worker) or the release is retried.
func (r *Stage) teardownOnce(ctx context.Context, s *decide.Scope) (result ctrl.Result, waiting bool) {
	run := s.Run
	if !runners.OnceForTheFleet(len(s.Runners)) || s.Summary.Views[0].Class != decide.RunnerReady {
		return ctrl.Result{}, false
	}
	for _, v := range s.Summary.Views[1:] {
		if !v.Class.Ended() {
			return ctrl.Result{}, false
		}
	}
	first := s.Runners[0].Pod
	// Set already: teardown() ran, failed, or is not requested (--no-teardown, recorded by the
	// pre-flight); runner 0 is only released.
	if s.Condition(v1alpha1.ConditionTeardownDone) == nil {
		if !r.Scripts.Started(run.UID, "teardown") {
			// Asked off the worker: the answer's arrival wakes the run.
			pod := first.DeepCopy()
			res, done := runio.Poll(r.Calls, run, runio.CallEnded, runio.RunnerCallLimit, func(ctx context.Context) (bool, error) { return r.RunnerAPI.Ended(ctx, pod) })
			if !done || res.Err != nil || !res.Val {
				// Runner 0 is finishing its own share; nothing else tells when it is done. The run
				// deadline, checked before this wait (reconcileRun), bounds it.
				return rc.After(EndPoll(s.Now.Sub(decide.LastEnd(s)))), true
			}
		}
		// Off the worker, as setup(): the run deadline and scriptCallLimit bound the wait.
		pod, n := first.DeepCopy(), len(s.Runners)
		note, fail, done := r.Scripts.Call(run, "teardown", func(ctx context.Context) (string, *decide.Failure) {
			if err := r.RunnerAPI.Teardown(ctx, pod); err != nil {
				return "", &decide.Failure{Reason: v1alpha1.ReasonTeardownFailed, Message: fmt.Sprintf("teardown() failed on runner %s: %v", pod.Name, err)}
			}
			return fmt.Sprintf("teardown() ran once, on runner %s, after all %d runners ended", pod.Name, n), nil
		})
		switch {
		case !done:
			return rc.After(runio.ScriptCallLimit), true
		case fail != nil:
			s.RecordCondition(v1alpha1.ConditionTeardownDone, metav1.ConditionFalse, fail.Reason, fail.Message)
			r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, fail.Reason, "Teardown", "%s", fail.Message)
		default:
			s.RecordCondition(v1alpha1.ConditionTeardownDone, metav1.ConditionTrue, v1alpha1.ReasonRanOnce, note)
		}
	}
	res, done := r.release(run, first)
	if !done {
		return rc.After(runio.RunnerCallLimit), true // its answer wakes the run
	}
	if err := res.Err; err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
		// Refused: the live endpoint closed, which it does only once k6's linger ended (an
		// earlier release reached it, and pod status does not show the exit yet).
		logf.FromContext(ctx).Info("could not release runner 0 from its linger; retrying", "pod", first.Name, "error", err.Error())
		return rc.After(2 * time.Second), true
	}
	return ctrl.Result{}, false
}

// release ends runner 0's linger off the worker: the answer comes with a later reconcile. It is
// an action (callRelease): it reaches the runner even if the run ends meanwhile.
func (r *Stage) release(run *v1alpha1.TestRun, first *corev1.Pod) (res runio.CallResult, done bool) {
	if res, ok := r.Calls.Take(run.UID, runio.CallRelease); ok {
		return res, true
	}
	pod := first.DeepCopy()
	r.Calls.Begin(run, runio.CallRelease, runio.RunnerCallLimit, true, func(ctx context.Context) (any, error) {
		return nil, r.RunnerAPI.Release(ctx, pod)
	})
	return runio.CallResult{}, false
}

// ReleaseOnFailure ends runner 0's linger when the run fails: teardown() does not run then.
func (r *Stage) ReleaseOnFailure(ctx context.Context, s *decide.Scope) {
	if !runners.OnceForTheFleet(len(s.Runners)) || len(s.Runners) == 0 {
		return
	}
	if pod := s.Runners[0].Pod; pod != nil && !decide.Terminated(pod) && pod.Status.PodIP != "" {
		// Best effort, off the worker; the runner's Job deadline ends a linger this misses.
		log := logf.FromContext(ctx)
		pod := pod.DeepCopy()
		r.Calls.Begin(s.Run, runio.CallRelease, runio.RunnerCallLimit, true, func(ctx context.Context) (any, error) {
			err := r.RunnerAPI.Release(ctx, pod)
			if err != nil {
				log.Info("could not release runner 0", "pod", pod.Name, "error", err.Error())
			}
			return nil, err
		})
	}
}
