package drive

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// ReconcileRun waits for every runner to end, sampling the target and judging peak steps
// meanwhile. A runner that fails stops the others (the load it carried is gone, and the rest
// would measure something nobody asked for); so do the run deadline, a peak's breaking point,
// an abortOnFail threshold failing on the merged data and the script's test.abort(). A runner whose own share failed a
// threshold (exit 99) has not failed: thresholds are judged on the merged data.
func (r *Stage) ReconcileRun(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	active := s.Summary.Active()
	if active == 0 {
		return ctrl.Result{}, nil
	}
	deadline := s.RunDeadline()
	holdFrom := finalsFrom(s)
	if !s.Now.Before(holdFrom) {
		for _, v := range s.Summary.Views {
			if v.Class == decide.RunnerReady {
				r.Finals.Hold(run, v.Pod, deadline.Add(s.Timeouts.Collection))
			}
		}
	}
	// Every wait here, teardown's included, ends at the run deadline: checked first, so a runner 0
	// that never reports its end is stopped there like any runner, and the run ends RunTimeout.
	if !rc.Expired(s.Now, deadline) {
		if result, waiting := r.teardownOnce(ctx, s); waiting {
			return rc.After(result.RequeueAfter, deadline.Sub(s.Now)), nil
		}
	}
	f := s.Summary.RunFailure()
	peakStop, nextStep := r.evaluatePeak(ctx, s)
	abortStop, nextAbort := r.evaluateAbort(ctx, s)
	scriptStop := r.scriptAbortStop(ctx, s)
	if f != nil || peakStop != "" || abortStop != "" || scriptStop != "" || rc.Expired(s.Now, deadline) {
		why := fmt.Sprintf("the load ran past its deadline %s", deadline.UTC().Format(time.RFC3339))
		switch {
		case f != nil:
			why = f.Message
		case peakStop != "":
			why = peakStop
		case abortStop != "":
			why = abortStop
		case scriptStop != "":
			why = scriptStop
		}
		s.Enter(v1alpha1.PhaseRunning, v1alpha1.ReasonStoppingRunners, why+v1alpha1.MessageStopping)
		// Stopped runners flush their results and exit; a minute past the deadline they are deleted.
		s.Stop = &decide.StopDecision{Why: why, DeleteJobs: rc.Expired(s.Now, deadline.Add(time.Minute))}
		return rc.After(10 * time.Second), nil
	}
	s.Enter(v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, fmt.Sprintf(v1alpha1.MessageRunning, active, len(s.Runners)))
	r.measureDuring(ctx, s)
	nextProgress := r.refreshProgress(ctx, s)
	return rc.After(deadline.Sub(s.Now), r.nextSample(s), nextStep, nextAbort, nextProgress, holdFrom.Sub(s.Now), s.ReplaceRecheck), nil
}

// finalsLead is how long before the load's expected end the final envelopes are asked for.
const finalsLead = 30 * time.Second

// finalsFrom is when to start holding requests for the runners' final envelopes: shortly before
// the load's expected end, not for the whole of a two-hour run (a request held that long costs
// memory per runner, about 90 KiB, and idle-connection timeouts on the way may cut it); from the
// start when only the script knows the length. A runner that ends early (stopped, failed) is
// seen through pod status as before.
func finalsFrom(s *decide.Scope) time.Time {
	if s.StartTime() == nil {
		return time.Time{}
	}
	start := s.StartTime().Time
	if expected := runners.ExpectedDuration(&s.Run.Spec); expected > finalsLead {
		return start.Add(expected - finalsLead)
	}
	return start
}
