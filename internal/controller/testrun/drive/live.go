package drive

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// liveEnvelopes returns every running runner's envelope so far, read at notBefore or later, for
// the progress, peak and abortOnFail judgements, which share one read per reconcile. The read
// runs off the worker (callLive): while it is in flight, or the last one began before
// notBefore, the error is errPending and the read's end wakes the run. One missing runner
// would leave its share out of the merge, so any failure fails the read.
func (r *Stage) liveEnvelopes(_ context.Context, s *decide.Scope, notBefore time.Time) ([]measure.Envelope, error) {
	if !s.Live.Read {
		s.Live.Read = true
		if res, ok := r.Calls.Take(s.Run.UID, runio.CallLive); ok {
			s.Live.Envs, _ = res.Val.([]measure.Envelope)
			s.Live.Err, s.Live.At = res.Err, res.At
			for _, err := range decide.Joined(s.Live.Err) {
				if errors.Is(err, measure.ErrRejected) {
					s.RejectResult(nil, err)
					break
				}
			}
		}
	}
	if !s.Live.At.IsZero() && !s.Live.At.Before(notBefore) {
		return s.Live.Envs, s.Live.Err
	}
	return nil, r.startLive(s)
}

// startLive starts the read of the running runners' live envelopes unless one is in flight;
// errPending, or why nothing can be read.
func (r *Stage) startLive(s *decide.Scope) error {
	var running []*corev1.Pod
	var slots [][2]int // each running pod's runner index and replacement number, for r.seen
	for _, v := range s.Summary.Views {
		if v.Class == decide.RunnerReady {
			running = append(running, v.Pod.DeepCopy()) // the cache's pods must not be read after this reconcile
			slots = append(slots, [2]int{v.Index, v.Replacement})
		}
	}
	if len(running) == 0 {
		return errors.New("no runner is running")
	}
	limits := runio.EnvelopeLimits(len(s.Runners), s.Run.Namespace)
	run, keep := s.Run.UID, s.Replaces()
	r.Calls.Begin(s.Run, runio.CallLive, runio.LiveLimit, false, func(ctx context.Context) (any, error) {
		envs := make([]measure.Envelope, len(running))
		errs := make([]error, len(running))
		ctx = runio.WithEnvelopeLimits(ctx, limits)
		runio.OnRunnersAtMost(running, runio.RunnerReadsAtOnce, func(i int, pod *corev1.Pod) {
			envs[i], errs[i] = r.RunnerAPI.Envelope(ctx, pod)
			if keep && errs[i] == nil {
				r.Seen.Put(run, slots[i][0], slots[i][1], envs[i], time.Now()) // what is left of it if it is lost (replace.go)
			}
		})
		return envs, errors.Join(errs...)
	})
	return runio.ErrPending
}
