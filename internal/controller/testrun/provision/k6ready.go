package provision

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// k6AskInterval is how often runners whose k6 container runs are asked whether k6 is up, until
// it is or the kubelet marks them Ready; k6 loads a script in about a second.
const k6AskInterval = 200 * time.Millisecond

// k6AnsweredBeforeReady asks the runners the kubelet has not yet marked Ready, but whose k6
// container runs, what their readiness probe asks (the script loaded, the target reached) and
// k6's status: the probe comes once a second, so asking at once takes up to a second off the
// start (about half of one on average). answered: every runner is Ready or answered.
// askAgain: some k6 runs and does not answer yet. Nothing is remembered: the next reconcile
// asks again.
func (r *Stage) k6AnsweredBeforeReady(s *decide.Scope) (answered, askAgain bool) {
	var asking []*corev1.Pod
	for _, v := range s.Summary.Views {
		switch {
		case v.Class == decide.RunnerReady:
		case v.Class == decide.RunnerPending && v.Pod != nil && v.Pod.Status.PodIP != "" && k6Running(v.Pod):
			asking = append(asking, v.Pod.DeepCopy())
		default:
			return false, false // a runner has no pod, or k6 has not started: a pod event comes
		}
	}
	if len(asking) == 0 {
		return false, false
	}
	// Off the worker: a tenant's runner image may accept the connection and never answer.
	res, done := runio.Poll(r.Calls, s.Run, runio.CallK6Up, runio.RunnerCallLimit, func(ctx context.Context) (bool, error) {
		var mu sync.Mutex
		all := true
		runio.OnRunnersAtMost(asking, runio.RunnerReadsAtOnce, func(_ int, pod *corev1.Pod) {
			if r.RunnerAPI.Warm(ctx, pod) != nil {
				mu.Lock()
				all = false
				mu.Unlock()
			}
		})
		return all, nil
	})
	switch {
	case !done: // the call's end wakes the run
		return false, false
	case res.Val:
		return true, false
	default:
		return false, true
	}
}

// k6Running says whether the runner's k6 container has started and not ended.
func k6Running(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == runners.ContainerName {
			return c.State.Running != nil
		}
	}
	return false
}
