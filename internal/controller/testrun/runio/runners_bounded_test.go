package runio

import (
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Every runner is called once, never more than the limit at a time.
func TestOnRunnersAtMostBoundsTheCallsInFlight(t *testing.T) {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		if i%10 != 3 { // nil pods are skipped, as onRunners skips them
			pods[i] = &corev1.Pod{}
		}
	}
	const limit = 8
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	called := map[int]int{}
	OnRunnersAtMost(pods, limit, func(i int, _ *corev1.Pod) {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		called[i]++
		mu.Unlock()
		inFlight.Add(-1)
	})
	if m := most.Load(); m > limit {
		t.Errorf("%d calls in flight at once, limit %d", m, limit)
	}
	for i, p := range pods {
		if want := map[bool]int{true: 1, false: 0}[p != nil]; called[i] != want {
			t.Errorf("runner %d called %d times, want %d", i, called[i], want)
		}
	}
}
