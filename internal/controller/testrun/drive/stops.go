package drive

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// abortInterval is how often the runners' merged live data is judged against the script's
// abortOnFail thresholds (k6 judges its own every 2 s).
const abortInterval = 5 * time.Second

// evaluateAbort reads the runners' live results, learns the script's abortOnFail thresholds
// from them once, and judges those on the merged data; it returns why the fleet must stop when
// one failed, and when to judge again.
func (r *Stage) evaluateAbort(ctx context.Context, s *decide.Scope) (stop string, next time.Duration) {
	run := s.Run
	w := s.AbortOnFail()
	switch {
	case s.StartTime() == nil:
		return "", 0
	case w != nil && w.Aborted != "":
		return abortMessage(w), 0
	case w != nil && len(w.Thresholds) == 0:
		return "", 0 // the script marks none: nothing to watch
	}
	envs, err := r.liveEnvelopes(ctx, s, s.Now.Add(-abortInterval))
	if errors.Is(err, runio.ErrPending) {
		return "", runio.LiveLimit // its end wakes the run
	}
	if err != nil {
		logf.FromContext(ctx).Info("reading the runners' live results for abortOnFail failed; trying again", "error", err.Error())
		return "", abortInterval
	}
	watched := abortThresholds(envs)
	if w == nil {
		w = &v1alpha1.AbortWatch{}
		for _, t := range watched {
			w.Thresholds = append(w.Thresholds, t.Metric+" "+t.Expression)
		}
		s.Decided.AbortOnFail = w
		if len(watched) == 0 {
			return "", 0
		}
	}
	summary, err := measure.Merge(envs...)
	if err != nil {
		logf.FromContext(ctx).Info("merging the runners' live results failed", "error", err.Error())
		return "", abortInterval
	}
	// Merge judged every script threshold (abortOnFail ones among them) on the merged data.
	judged := map[string]measure.ThresholdResult{}
	for _, res := range summary.Thresholds {
		judged[res.Metric+" "+res.Expression] = res
	}
	ran := s.Now.Sub(s.StartTime().Time)
	for _, t := range watched {
		if ran < time.Duration(t.DelayNanos) {
			continue // delayAbortEval
		}
		res, ok := judged[t.Metric+" "+t.Expression]
		if ok && !res.Passed && !res.Skipped {
			at := metav1.NewTime(s.Now)
			w = w.DeepCopy() // the loaded status is not written: the abort is decided
			w.Aborted, w.AbortTime = fmt.Sprintf("%s %s (was %g)", t.Metric, t.Expression, res.Value), &at
			s.Decided.AbortOnFail = w
			r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "ThresholdAbort", "Abort", "%s", abortMessage(w))
			return abortMessage(w), 0
		}
	}
	return "", abortInterval
}

func abortMessage(w *v1alpha1.AbortWatch) string {
	return "the abortOnFail threshold " + w.Aborted + " failed on the merged data of all runners; stopping the test"
}

// abortThresholds are the abortOnFail thresholds the runners report, each once.
func abortThresholds(envs []measure.Envelope) []measure.AbortThreshold {
	seen := map[measure.AbortThreshold]bool{}
	var out []measure.AbortThreshold
	for _, e := range envs {
		for _, t := range e.AbortOnFail {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// scriptAbortStop says why the fleet stops when the script called test.abort() on one runner:
// one k6 process stops every VU then, and teardown() still runs once (teardownOnce, after the
// others stopped). A runner other than 0 exits 108. Runner 0 lingers for teardown() and so
// never exits on its own: its load found Interrupted before the manager stopped anything is the
// script's abort. "" when nothing aborted.
func (r *Stage) scriptAbortStop(ctx context.Context, s *decide.Scope) string {
	if v, ok := s.Summary.FirstWith(func(v decide.RunnerView) bool { return v.ScriptAborted }); ok {
		return fmt.Sprintf("the script called test.abort() on runner %s", v.Name())
	}
	if !runners.OnceForTheFleet(len(s.Runners)) || len(s.Summary.Views) == 0 || s.Summary.Views[0].Class != decide.RunnerReady ||
		s.Run.Status.Reason == v1alpha1.ReasonStoppingRunners {
		return ""
	}
	first := s.Runners[0].Pod
	// Off the worker: the answer comes with the next reconcile, which its end wakes.
	pod := first.DeepCopy()
	res, done := runio.Poll(r.Calls, s.Run, runio.CallInterrupted, runio.RunnerCallLimit, func(ctx context.Context) (bool, error) {
		return r.RunnerAPI.Interrupted(ctx, pod)
	})
	if !done {
		return ""
	}
	if res.Err != nil {
		logf.FromContext(ctx).V(1).Info("reading runner 0's status for test.abort() failed; asking again next time", "pod", first.Name, "error", res.Err.Error())
		return ""
	}
	if !res.Val {
		return ""
	}
	return fmt.Sprintf("the script called test.abort() on runner %s", first.Name)
}

// StopRunners asks every runner still running to stop, in parallel, best effort, off the worker
// (callStop): a runner that does not answer holds its Stop to runnerCallLimit, not a worker. It
// says whether the runners were told: none runs, or the Stop call's answers are in. A failure
// ends the run only then (finish), so a manager restarted before the Stop went out finds the
// run not ended, decides again from the world and stops the runners; a stop decision sends it
// again on a later reconcile, as before.
func (r *Stage) StopRunners(ctx context.Context, s *decide.Scope) bool {
	var pods []*corev1.Pod
	for _, rs := range s.Runners {
		if rs.Pod != nil && !decide.Terminated(rs.Pod) && rs.Pod.Status.PodIP != "" {
			pods = append(pods, rs.Pod.DeepCopy()) // the cache's pods must not be read after this reconcile
		}
	}
	if len(pods) == 0 {
		return true
	}
	if _, ok := r.Calls.Take(s.Run.UID, runio.CallStop); ok {
		return true
	}
	log := logf.FromContext(ctx)
	// An action: it reaches the runners even once the run ended and was forgotten.
	r.Calls.Begin(s.Run, runio.CallStop, runio.RunnerCallLimit, true, func(ctx context.Context) (any, error) {
		runio.OnRunners(pods, func(_ int, pod *corev1.Pod) {
			if err := r.RunnerAPI.Stop(ctx, pod); err != nil {
				log.Info("could not stop runner", "pod", pod.Name, "error", err.Error())
			}
		})
		return nil, nil
	})
	return false
}
