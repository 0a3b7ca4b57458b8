package testrun

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// runnerReadsAtOnce bounds the progress reads of one run's live envelopes in flight: their
// timing does not matter, and 5,000 runners read at once held 5,000 goroutines' stacks and
// read buffers together (the scale benchmark's peak RSS). The start and the stop still call
// every runner at once (onRunners).
const runnerReadsAtOnce = 256

// onRunnersAtMost is onRunners with at most limit calls in flight.
func onRunnersAtMost(pods []*corev1.Pod, limit int, call func(i int, pod *corev1.Pod)) {
	slots := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i, pod := range pods {
		if pod == nil {
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			call(i, pod)
		})
	}
	wg.Wait()
}
