package testrun

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// liveEnvelopes returns every running runner's envelope so far, read at notBefore or later, for
// the progress, peak and abortOnFail judgements, which share one read per reconcile. The read
// runs off the worker (callLive): while it is in flight, or the last one began before
// notBefore, the error is errPending and the read's end wakes the run. One missing runner
// would leave its share out of the merge, so any failure fails the read.
func (r *Reconciler) liveEnvelopes(_ context.Context, s *scope, notBefore time.Time) ([]measure.Envelope, error) {
	if !s.live.read {
		s.live.read = true
		if res, ok := r.calls.take(s.run.UID, callLive); ok {
			s.live.envs, _ = res.val.([]measure.Envelope)
			s.live.err, s.live.at = res.err, res.at
			for _, err := range joined(s.live.err) {
				if errors.Is(err, measure.ErrRejected) {
					s.rejectResult(nil, err)
					break
				}
			}
		}
	}
	if !s.live.at.IsZero() && !s.live.at.Before(notBefore) {
		return s.live.envs, s.live.err
	}
	return nil, r.startLive(s)
}

// startLive starts the read of the running runners' live envelopes unless one is in flight;
// errPending, or why nothing can be read.
func (r *Reconciler) startLive(s *scope) error {
	var running []*corev1.Pod
	var slots [][2]int // each running pod's runner index and replacement number, for r.seen
	for _, v := range s.summary.views {
		if v.class == runnerReady {
			running = append(running, v.pod.DeepCopy()) // the cache's pods must not be read after this reconcile
			slots = append(slots, [2]int{v.index, v.replacement})
		}
	}
	if len(running) == 0 {
		return errors.New("no runner is running")
	}
	limits := envelopeLimits(len(s.runners))
	run, keep := s.run.UID, s.replaces()
	r.calls.start(s.run, callLive, liveLimit, false, func(ctx context.Context) (any, error) {
		envs := make([]measure.Envelope, len(running))
		errs := make([]error, len(running))
		ctx = withEnvelopeLimits(ctx, limits)
		onRunnersAtMost(running, runnerReadsAtOnce, func(i int, pod *corev1.Pod) {
			envs[i], errs[i] = r.RunnerAPI.Envelope(ctx, pod)
			if keep && errs[i] == nil {
				r.seen.put(run, slots[i][0], slots[i][1], envs[i], time.Now()) // what is left of it if it is lost (replace.go)
			}
		})
		return envs, errors.Join(errs...)
	})
	return errPending
}
