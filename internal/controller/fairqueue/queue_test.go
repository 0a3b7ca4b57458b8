package fairqueue

import (
	"strings"
	"testing"
)

// item is "tenant/name".
func tenant(item string) string { return strings.SplitN(item, "/", 2)[0] }

// take gets n items without waiting (each must be available) and returns them in order.
func take(t *testing.T, q *Queue[string], n int) []string {
	t.Helper()
	var out []string
	for range n {
		q.mu.Lock()
		item, ok := q.pickLocked()
		q.mu.Unlock()
		if !ok {
			t.Fatalf("after %v: no item could be handed out (waiting %d)", out, q.Len())
		}
		out = append(out, item)
	}
	return out
}

// blocked says Get would wait now.
func blocked(q *Queue[string]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.pickLocked()
	return !ok
}

// take stands for free workers calling Get; done for their reconciles ending.
func TestTenantsTakeTurns(t *testing.T) {
	q := New(3, tenant)
	for _, it := range []string{"a/1", "a/2", "a/3", "a/4", "a/5", "b/1", "c/1", "b/2"} {
		q.Add(it)
	}
	got := take(t, q, 3)
	if want := []string{"a/1", "b/1", "c/1"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("first three %v, want one of each tenant %v although a queued five first", got, want)
	}
	q.Done("c/1") // a and b wait: a share of 3/2 = 1 each; a and b hold one
	if got := take(t, q, 1); got[0] != "a/2" {
		t.Fatalf("got %s, want a's turn", got[0]) // nobody is under the share: the next in turn
	}
	q.Done("a/1")
	q.Done("a/2") // a holds none, b one, its share: a's item although b's is next in turn
	if got := take(t, q, 1); got[0] != "a/3" {
		t.Fatalf("got %s, want a/3: a is under its share, b is not", got[0])
	}
}

func TestOneTenantAloneUsesEveryWorker(t *testing.T) {
	q := New(4, tenant)
	for _, it := range []string{"a/1", "a/2", "a/3", "a/4", "a/5"} {
		q.Add(it)
	}
	if got := take(t, q, 4); len(got) != 4 {
		t.Fatalf("got %v", got)
	}
	if !blocked(q) {
		t.Fatal("more items out than workers")
	}
}

// TestNewTenantWaitsForOneReconcile: a tenant holding every worker gives one up as soon as one
// of its reconciles ends, although it queued many more first.
func TestNewTenantWaitsForOneReconcile(t *testing.T) {
	q := New(4, tenant)
	for i := range 20 {
		q.Add("a/" + string(rune('a'+i)))
	}
	take(t, q, 4)
	q.Add("b/1")
	q.Done("a/a")
	if got := take(t, q, 1); got[0] != "b/1" {
		t.Fatalf("the freed worker went to %s, want b's item", got[0])
	}
	q.Add("b/2")
	q.Add("b/3")
	q.Done("a/b") // a holds 2 of its share of 2, b 1: b's turn
	if got := take(t, q, 1); got[0] != "b/2" {
		t.Fatalf("the freed worker went to %s, want b's item while a is at its share", got[0])
	}
	q.Done("b/1") // a holds 2, its share; b 1
	if got := take(t, q, 1); got[0] != "b/3" {
		t.Fatalf("the freed worker went to %s, want b's, under its share", got[0])
	}
	q.Done("b/2") // b waits for nothing: the free worker is not left idle
	if got := take(t, q, 1); got[0] != "a/e" {
		t.Fatalf("the freed worker went to %s, want a's next", got[0])
	}
}

func TestUrgentGoesFirstBeyondTheShare(t *testing.T) {
	q := New(2, tenant)
	for _, it := range []string{"a/1", "a/2", "a/3", "b/1"} {
		q.Add(it)
	}
	take(t, q, 2) // a/1, b/1
	q.Add("b/2")
	q.AddUrgent("a/3")
	q.Done("b/1")
	if got := take(t, q, 1); got[0] != "a/3" {
		t.Fatalf("got %s, want the urgent a/3 although a already holds its share", got[0])
	}
	q.AddUrgent("c/9") // not queued before
	q.Done("a/1")
	if got := take(t, q, 1); got[0] != "c/9" {
		t.Fatalf("got %s, want the urgent c/9 before b/2", got[0])
	}
}

func TestAnItemIsQueuedOnce(t *testing.T) {
	q := New(2, tenant)
	q.Add("a/1")
	q.Add("a/1")
	if q.Len() != 1 {
		t.Fatalf("Len %d after adding one item twice", q.Len())
	}
	take(t, q, 1)
	q.Add("a/1") // while processed: again once done, not now
	if !blocked(q) {
		t.Fatal("an item being processed was handed out again")
	}
	q.AddUrgent("a/1")
	if !blocked(q) {
		t.Fatal("an urgent item being processed was handed out again")
	}
	q.Done("a/1")
	if got := take(t, q, 1); got[0] != "a/1" {
		t.Fatalf("got %v", got)
	}
	if q.markUrgent["a/1"] || len(q.urgent) != 0 {
		t.Fatal("the urgent mark outlived the item's hand-out")
	}
}

func TestShutDown(t *testing.T) {
	q := New(1, tenant)
	q.Add("a/1")
	q.ShutDown()
	q.Add("a/2")
	if item, down := q.Get(); down || item != "a/1" {
		t.Fatalf("Get = %q, %v: the item queued before the shutdown is still handed out", item, down)
	}
	if _, down := q.Get(); !down {
		t.Fatal("Get after the shutdown with nothing left did not say so")
	}
	drained := make(chan struct{})
	go func() { q.ShutDownWithDrain(); close(drained) }()
	q.Done("a/1")
	<-drained
}
