package drive

import (
	"context"
	"errors"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// DefaultProgressInterval bounds status.progress refreshes: one status write per interval, so
// a run of duration d costs about d/10s writes for progress, whatever wakes the reconcile.
const DefaultProgressInterval = 10 * time.Second

// refreshProgress merges the runners' live windows into status.progress when the last refresh
// is a progress interval old; it returns when the next one is due.
func (r *Stage) refreshProgress(ctx context.Context, s *decide.Scope) time.Duration {
	if s.StartTime() == nil {
		return 0
	}
	if p := s.Progress(); p != nil {
		if since := s.Now.Sub(p.UpdateTime.Time); since < r.ProgressInterval {
			return r.ProgressInterval - since
		}
	}
	envs, err := r.liveEnvelopes(ctx, s, s.Now.Add(-r.ProgressInterval))
	if errors.Is(err, runio.ErrPending) {
		return runio.LiveLimit // its end wakes the run
	}
	if err == nil {
		var summary measure.Summary
		if summary, err = measure.Merge(envs...); err == nil {
			s.Decided.Progress = ProgressOf(s, &summary, s.Now)
			return r.ProgressInterval
		}
	}
	logf.FromContext(ctx).V(1).Info("reading the runners' live results for progress failed; trying again", "error", err.Error())
	return r.ProgressInterval
}

func ProgressOf(s *decide.Scope, summary *measure.Summary, now time.Time) *v1alpha1.Progress {
	expected := runners.ExpectedDuration(&s.Run.Spec)
	if expected <= 0 {
		expected = planned(s.Run)
	}
	p := judge.Progress(summary, s.StartTime().Time, now, expected)
	return &p
}
