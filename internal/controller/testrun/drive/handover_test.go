package drive

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
)

// heldSetupData holds every SetSetupData call until the test lets them go, and counts the
// calls in flight.
type heldSetupData struct {
	runio.RunnerAPI // nil: the hand-over calls only SetSetupData
	letGo           chan struct{}

	mu             sync.Mutex
	inFlight, most int
	handed         map[string]int
}

func (h *heldSetupData) SetSetupData(_ context.Context, pod *corev1.Pod, _ json.RawMessage) error {
	h.mu.Lock()
	h.inFlight++
	h.most = max(h.most, h.inFlight)
	h.handed[pod.Name]++
	h.mu.Unlock()
	<-h.letGo
	h.mu.Lock()
	h.inFlight--
	h.mu.Unlock()
	return nil
}

func (h *heldSetupData) inFlightNow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight
}

// setup()'s data goes to runners 1..n-1 with at most runnerReadsAtOnce calls in flight, and
// still in parallel up to that bound: 5,000 runners at once held 15,000 goroutines and 18 MB.
// With every call held, the calls in flight stop at the bound; a hand-over without it reaches
// all n-1 (the wait for that ends at a grace, which only the bounded hand-over reaches, so the
// grace can make the test pass only where the bound holds).
func TestHandOverBoundsTheCallsInFlight(t *testing.T) {
	const n = 1000
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{}
		pods[i].Name = fmt.Sprintf("runner-%d", i)
	}
	h := &heldSetupData{letGo: make(chan struct{}), handed: map[string]int{}}
	r := New(&runenv.Env{Options: runenv.Options{RunnerAPI: h}})
	done := make(chan error, 1)
	go func() { done <- r.handOver(context.Background(), pods, json.RawMessage(`{"token":"x"}`)) }()

	hangGuard := time.After(time.Minute)
	for h.inFlightNow() < runio.RunnerReadsAtOnce {
		select {
		case <-hangGuard:
			t.Fatalf("only %d calls in flight after a minute, want %d", h.inFlightNow(), runio.RunnerReadsAtOnce)
		case <-time.After(time.Millisecond):
		}
	}
	grace := time.After(500 * time.Millisecond)
	for waiting := true; waiting && h.inFlightNow() < n-1; {
		select {
		case <-grace:
			waiting = false
		case <-time.After(time.Millisecond):
		}
	}
	close(h.letGo)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("handOver: %v", err)
		}
	case <-hangGuard:
		t.Fatal("handOver did not return within a minute")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.most != runio.RunnerReadsAtOnce {
		t.Errorf("%d calls were in flight at once, want the bound %d", h.most, runio.RunnerReadsAtOnce)
	}
	if h.handed["runner-0"] != 0 {
		t.Errorf("runner 0, which ran setup(), was handed its own data %d times", h.handed["runner-0"])
	}
	for _, p := range pods[1:] {
		if h.handed[p.Name] != 1 {
			t.Errorf("%s was handed the data %d times, want once", p.Name, h.handed[p.Name])
		}
	}
}
