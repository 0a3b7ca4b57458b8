package runio

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestLastSeenIsBounded: the manager's memory of runners' last envelopes holds entries only for
// open runs, one per runner index below the run's runner count, within a total entry count and
// byte budget; a run finished or deleted keeps nothing, even from
// a read that ends after that; a kept envelope stays until the record that keeps it is written.
func TestLastSeenIsBounded(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	env := measure.Envelope{Runner: "r"}
	type step func(l *LastSeen) (got, want any)
	put := func(run types.UID, i, k int, want seenPut) step {
		return func(l *LastSeen) (any, any) { return l.Put(run, i, k, env, at), want }
	}
	open := func(run types.UID, runners int) step {
		return func(l *LastSeen) (any, any) { l.Open(run, "tenant", runners); return nil, nil }
	}
	has := func(run types.UID, i, k int, want bool) step {
		return func(l *LastSeen) (any, any) { _, _, ok := l.Peek(run, i, k); return ok, want }
	}
	size := func(runs, entries int) step {
		return func(l *LastSeen) (any, any) { r, e := l.size(); return [2]int{r, e}, [2]int{runs, entries} }
	}
	for _, tc := range []struct {
		name       string
		maxEntries int
		budget     int64
		steps      []step
	}{
		{name: "a run never opened keeps nothing", steps: []step{put("a", 0, 0, seenClosed), size(0, 0)}},
		{name: "one entry per runner index, within the runner count", steps: []step{
			open("a", 2), put("a", 0, 0, seenKept), put("a", 0, 0, seenKept), put("a", 1, 0, seenKept),
			put("a", 2, 0, seenNoRunner), put("a", -1, 0, seenNoRunner), size(1, 2)}},
		{name: "a replacement takes its lost runner's place; a late read of the lost one is refused", steps: []step{
			open("a", 2), put("a", 1, 0, seenKept), put("a", 1, 1, seenKept), put("a", 1, 0, seenStale),
			has("a", 1, 0, false), has("a", 1, 1, true), size(1, 1)}},
		{name: "peek keeps, drop of the kept one forgets, drop of another is a no-op", steps: []step{
			open("a", 2), put("a", 1, 0, seenKept), has("a", 1, 0, true), has("a", 1, 0, true),
			func(l *LastSeen) (any, any) { l.Drop("a", 1, 1); return nil, nil }, has("a", 1, 0, true),
			func(l *LastSeen) (any, any) { l.Drop("a", 1, 0); return nil, nil }, has("a", 1, 0, false), size(1, 0)}},
		{name: "a finished run is forgotten, and a read ending after keeps nothing", steps: []step{
			open("a", 2), put("a", 0, 0, seenKept),
			func(l *LastSeen) (any, any) { l.Forget("a"); return nil, nil },
			put("a", 1, 0, seenClosed), size(0, 0)}},
		{name: "a run whose runner count shrinks drops the entries beyond it", steps: []step{
			open("a", 3), put("a", 2, 0, seenKept), put("a", 0, 0, seenKept), open("a", 2),
			has("a", 2, 0, false), size(1, 1)}},
		{name: "the total entry cap refuses new entries, not updates", maxEntries: 2, steps: []step{
			open("a", 2), open("b", 2),
			put("a", 0, 0, seenKept), put("a", 1, 0, seenKept), put("b", 0, 0, seenFull), put("a", 1, 0, seenKept),
			size(2, 2)}},
		{name: "an envelope past the byte budget is not kept; the runner's older one stays", budget: 1, steps: []step{
			open("a", 2), put("a", 0, 0, seenKept), put("a", 0, 0, seenNoBudget), has("a", 0, 0, true),
			func(l *LastSeen) (any, any) { l.Forget("a"); return l.budget.Used(), int64(0) }}},
	} {
		l := NewLastSeen()
		if tc.maxEntries > 0 {
			l.maxEntries = tc.maxEntries
		}
		if tc.budget > 0 {
			// Room for exactly one envelope.
			l.budget = measure.NewBudget(measure.SizeOf(&env))
		}
		for i, s := range tc.steps {
			if got, want := s(l); got != want {
				t.Errorf("%s: step %d: got %v, want %v", tc.name, i, got, want)
			}
		}
	}
}
