package provision

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
)

// slotRule is what one per-namespace cap counts: which runs hold a share (read from the runs
// themselves, so it survives a restart), how much, and the reason a run waits for one with.
type slotRule struct {
	holds  func(*v1alpha1.TestRun) bool
	weight func(*v1alpha1.TestRun) int
	reason string
}

// slotQueue remembers the runs let through that the cache does not show holding their share yet:
// its copy of a TestRun lags the status the last reconcile wrote, and a second run must not
// take the same share meanwhile.
type slotQueue struct {
	rule    slotRule
	mu      sync.Mutex
	granted map[types.NamespacedName]int
}

// Take grants run its share (weight) when the runs ahead of it leave room for it under limit,
// and returns what those hold. Counting and granting hold one lock: with several workers, two
// runs of a namespace reconciled at once must not both take the last share.
func (t *slotQueue) Take(run *v1alpha1.TestRun, weight int, cached []v1alpha1.TestRun, limit int) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ahead := t.ahead(run, cached)
	if ahead+weight > limit {
		return ahead, false
	}
	if t.granted == nil {
		t.granted = map[types.NamespacedName]int{}
	}
	t.granted[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}] = weight
	return ahead, true
}

// ahead is what the runs of run's namespace hold or wait for before it; t.mu held.
func (t *slotQueue) ahead(run *v1alpha1.TestRun, cached []v1alpha1.TestRun) int {
	n := 0
	listed := map[string]bool{}
	for i := range cached {
		other := &cached[i]
		if other.Name == run.Name {
			continue
		}
		listed[other.Name] = true
		key := types.NamespacedName{Namespace: other.Namespace, Name: other.Name}
		granted, ok := t.granted[key]
		switch {
		case t.rule.holds(other):
			n += t.rule.weight(other)
			delete(t.granted, key) // the cache caught up
		case decide.IsFinished(other) || !other.DeletionTimestamp.IsZero():
			delete(t.granted, key)
		case ok:
			n += granted
		case t.queuedBefore(other, run):
			n += t.rule.weight(other)
		}
	}
	for key := range t.granted {
		if key.Namespace == run.Namespace && key.Name != run.Name && !listed[key.Name] {
			delete(t.granted, key) // deleted
		}
	}
	return n
}

// queuedBefore: other waits for a share and came first, so it gets the next one.
func (t *slotQueue) queuedBefore(other, run *v1alpha1.TestRun) bool {
	if other.Status.Reason != t.rule.reason || decide.IsFinished(other) || !other.DeletionTimestamp.IsZero() {
		return false
	}
	if !other.CreationTimestamp.Equal(&run.CreationTimestamp) {
		return other.CreationTimestamp.Before(&run.CreationTimestamp)
	}
	return other.Name < run.Name
}
