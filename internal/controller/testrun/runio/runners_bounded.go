package runio

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// RunnerReadsAtOnce bounds the reads of one run's runners in flight where their timing does not
// matter (asking k6 whether it is up, which opens the connection the start reuses; progress;
// setup()'s data, handOver):
// 5,000 runners read at once held 5,000 goroutines' stacks and read buffers together. The
// start and the stop still call every runner at once (onRunners).
const RunnerReadsAtOnce = 256

// OnRunnersAtMost is onRunners with at most limit calls in flight.
func OnRunnersAtMost(pods []*corev1.Pod, limit int, call func(i int, pod *corev1.Pod)) {
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
