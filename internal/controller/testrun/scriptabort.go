package testrun

import (
	"context"
	"fmt"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// scriptAbortStop says why the fleet stops when the script called test.abort() on one runner:
// one k6 process stops every VU then, and teardown() still runs once (teardownOnce, after the
// others stopped). A runner other than 0 exits 108. Runner 0 lingers for teardown() and so
// never exits on its own: its load found Interrupted before the manager stopped anything is the
// script's abort. "" when nothing aborted.
func (r *Reconciler) scriptAbortStop(ctx context.Context, s *scope) string {
	if v, ok := s.summary.firstWith(func(v runnerView) bool { return v.scriptAborted }); ok {
		return fmt.Sprintf("the script called test.abort() on runner %s", v.name())
	}
	if !runners.OnceForTheFleet(len(s.runners)) || len(s.summary.views) == 0 || s.summary.views[0].class != runnerReady ||
		s.run.Status.Reason == v1alpha1.ReasonStoppingRunners {
		return ""
	}
	first := s.runners[0].pod
	// Off the worker: the answer comes with the next reconcile, which its end wakes.
	pod := first.DeepCopy()
	res, done := poll(r.calls, s.run, callInterrupted, runnerCallLimit, func(ctx context.Context) (bool, error) {
		return r.RunnerAPI.Interrupted(ctx, pod)
	})
	if !done {
		return ""
	}
	if res.err != nil {
		logf.FromContext(ctx).V(1).Info("reading runner 0's status for test.abort() failed; asking again next time", "pod", first.Name, "error", res.err.Error())
		return ""
	}
	if !res.val {
		return ""
	}
	return fmt.Sprintf("the script called test.abort() on runner %s", first.Name)
}
