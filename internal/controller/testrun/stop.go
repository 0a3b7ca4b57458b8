package testrun

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// stopRunners asks every runner still running to stop, in parallel, best effort, off the worker
// (callStop): a runner that does not answer holds its Stop to runnerCallLimit, not a worker. It
// says whether the runners were told: none runs, or the Stop call's answers are in. A failure
// ends the run only then (finish), so a manager restarted before the Stop went out finds the
// run not ended, decides again from the world and stops the runners; a stop decision sends it
// again on a later reconcile, as before.
func (r *Reconciler) stopRunners(ctx context.Context, s *scope) bool {
	var pods []*corev1.Pod
	for _, rs := range s.runners {
		if rs.pod != nil && !terminated(rs.pod) && rs.pod.Status.PodIP != "" {
			pods = append(pods, rs.pod.DeepCopy()) // the cache's pods must not be read after this reconcile
		}
	}
	if len(pods) == 0 {
		return true
	}
	if _, ok := r.calls.take(s.run.UID, callStop); ok {
		return true
	}
	log := logf.FromContext(ctx)
	// An action: it reaches the runners even once the run ended and was forgotten.
	r.calls.start(s.run, callStop, runnerCallLimit, true, func(ctx context.Context) (any, error) {
		onRunners(pods, func(_ int, pod *corev1.Pod) {
			if err := r.RunnerAPI.Stop(ctx, pod); err != nil {
				log.Info("could not stop runner", "pod", pod.Name, "error", err.Error())
			}
		})
		return nil, nil
	})
	return false
}
