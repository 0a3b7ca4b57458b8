package decide

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// RejectResult ends the run Failed because a runner's result envelope was refused for its size
// or shape (measure.ErrRejected): decoding it would have taken more of the manager's memory
// than any run may, so its results are lost, and no other run pays for them.
func (s *Scope) RejectResult(pod *corev1.Pod, err error) {
	if s.Failure != nil {
		return
	}
	who := "a runner"
	if pod != nil {
		who = "runner " + pod.Name
	}
	s.Fail(v1alpha1.ReasonRunnerResultRejected, fmt.Sprintf("the result envelope of %s was refused: %s; a runner with the default "+
		"settings stays far below the limits: check spec.runner.env (K6_FLEETBENCH_MAX_SERIES, K6_FLEETBENCH_MAX_WINDOWS) and how many "+
		"custom metrics and tag values the script makes", who, Excerpt(err.Error(), 2*MaxExcerpt)))
}

// Joined lists the errors errors.Join put together, or err alone.
func Joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
