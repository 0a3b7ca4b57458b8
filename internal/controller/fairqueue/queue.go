// Package fairqueue is the TestRun controller's work queue, fair by tenant (namespace): the
// reconcile workers are shared by every tenant, so one tenant's many runs must not hold them
// all. Items wait in a FIFO per tenant; a free worker takes the next tenant's item in turn, and
// no tenant holds more than its share of the workers (the workers divided among the tenants
// with work, at least one each). A deleted object's item is urgent: it goes first, whatever
// its tenant holds, so a deletion is processed within one reconcile of a worker coming free.
// The queue is work-conserving: a tenant holds more than its share only of workers no other
// tenant is waiting for, and gives one back when its reconcile ends.
//
// Per-tenant concurrency alone would leave the order first come, first served: a tenant that
// queued 500 items ahead of another would still be served 500 reconciles first. Round robin
// alone would let a tenant whose reconciles are slow hold every worker. Both together bound a
// tenant's wait for a worker by one reconcile of each other tenant.
//
// It implements client-go's workqueue.TypedInterface, so client-go's delaying and rate-limiting
// queues wrap it as they wrap their own: an item is queued at most once, and an item added
// while it is processed is queued again when it is done.
package fairqueue

import (
	"slices"
	"sync"
)

// Queue is a fair work queue; see the package comment.
type Queue[T comparable] struct {
	mu       sync.Mutex
	cond     *sync.Cond
	tenantOf func(T) string
	workers  int

	// waiting are the items to hand out, per tenant, oldest first; urgent ones go before all.
	waiting map[string][]T
	urgent  []T
	// turns is the order tenants with waiting items are served in; next is whose turn it is.
	turns []string
	next  int
	// dirty items are waiting, or will wait again once done; processing are out at a worker.
	dirty      map[T]bool
	processing map[T]bool
	markUrgent map[T]bool
	inFlight   map[string]int

	shuttingDown bool
}

// New is a queue for workers workers; tenantOf names an item's tenant.
func New[T comparable](workers int, tenantOf func(T) string) *Queue[T] {
	q := &Queue[T]{tenantOf: tenantOf, workers: max(workers, 1), waiting: map[string][]T{},
		dirty: map[T]bool{}, processing: map[T]bool{}, markUrgent: map[T]bool{}, inFlight: map[string]int{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues item unless it is queued already.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item, false)
}

// AddUrgent queues item ahead of every tenant's turn, or moves it there if it waits already.
func (q *Queue[T]) AddUrgent(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item, true)
}

func (q *Queue[T]) addLocked(item T, urgent bool) {
	if q.shuttingDown {
		return
	}
	if urgent {
		q.markUrgent[item] = true
	}
	if q.dirty[item] {
		if urgent && !slices.Contains(q.urgent, item) && !q.processing[item] {
			q.removeWaiting(item)
			q.urgent = append(q.urgent, item)
			q.cond.Signal()
		}
		return
	}
	q.dirty[item] = true
	if q.processing[item] {
		return // queued again when it is done
	}
	q.enqueue(item)
}

// enqueue puts a dirty item where Get finds it; q.mu is held.
func (q *Queue[T]) enqueue(item T) {
	if q.markUrgent[item] {
		q.urgent = append(q.urgent, item)
	} else {
		t := q.tenantOf(item)
		if len(q.waiting[t]) == 0 {
			q.turns = append(q.turns, t)
		}
		q.waiting[t] = append(q.waiting[t], item)
	}
	q.cond.Signal()
}

// removeWaiting takes a non-urgent item out of its tenant's FIFO; q.mu is held.
func (q *Queue[T]) removeWaiting(item T) {
	t := q.tenantOf(item)
	w := q.waiting[t]
	i := slices.Index(w, item)
	if i < 0 {
		return
	}
	q.waiting[t] = slices.Delete(w, i, i+1)
	if len(q.waiting[t]) == 0 {
		q.dropTurn(t)
	}
}

func (q *Queue[T]) dropTurn(t string) {
	delete(q.waiting, t)
	i := slices.Index(q.turns, t)
	if i < 0 {
		return
	}
	q.turns = slices.Delete(q.turns, i, i+1)
	if q.next > i {
		q.next--
	}
	if q.next >= len(q.turns) {
		q.next = 0
	}
}

// Share is how many workers one tenant may hold now: the workers divided among the tenants
// with work waiting or in flight, at least one.
func (q *Queue[T]) Share() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shareLocked()
}

func (q *Queue[T]) shareLocked() int {
	active := len(q.turns)
	for t, n := range q.inFlight {
		if n > 0 && len(q.waiting[t]) == 0 {
			active++
		}
	}
	return max(1, q.workers/max(active, 1))
}

// Get waits for the next item: an urgent one, else the first waiting item of the next tenant
// in turn that holds less than its share, else of the next tenant in turn. It is called by a
// free worker only. shutdown is true once the queue is shut down.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if it, ok := q.pickLocked(); ok {
			return it, false
		}
		if q.shuttingDown {
			var zero T
			return zero, true
		}
		q.cond.Wait()
	}
}

func (q *Queue[T]) pickLocked() (T, bool) {
	var item T
	switch {
	case len(q.urgent) > 0:
		item, q.urgent = q.urgent[0], q.urgent[1:]
	default:
		// Tenants under their share first; then, as Get is only called by a free worker, the
		// next in turn: a worker nobody else waits for is not left idle.
		i, ok := q.turnLocked(q.shareLocked())
		if !ok {
			i, ok = q.turnLocked(q.workers)
		}
		if !ok {
			return item, false
		}
		t := q.turns[i]
		item, q.waiting[t] = q.waiting[t][0], q.waiting[t][1:]
		q.next = i + 1
		if len(q.waiting[t]) == 0 {
			q.dropTurn(t)
		}
		if q.next >= len(q.turns) {
			q.next = 0
		}
	}
	delete(q.dirty, item)
	delete(q.markUrgent, item)
	q.processing[item] = true
	q.inFlight[q.tenantOf(item)]++
	return item, true
}

// turnLocked is the index in turns of the next tenant in turn holding fewer than limit workers.
func (q *Queue[T]) turnLocked(limit int) (int, bool) {
	for k := range len(q.turns) {
		i := (q.next + k) % len(q.turns)
		if q.inFlight[q.turns[i]] < limit {
			return i, true
		}
	}
	return 0, false
}

// Done says a worker finished item: it waits again if it was added meanwhile.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.processing[item] {
		return
	}
	delete(q.processing, item)
	t := q.tenantOf(item)
	if q.inFlight[t]--; q.inFlight[t] <= 0 {
		delete(q.inFlight, t)
	}
	if q.dirty[item] {
		q.enqueue(item)
	}
	q.cond.Broadcast() // a tenant's share, and every tenant's, may have grown
}

// Len is how many items wait.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.urgent)
	for _, w := range q.waiting {
		n += len(w)
	}
	return n
}

// ShutDown makes Get return shutdown once nothing is left to hand out; nothing is added after.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain shuts down and waits for the items being processed to be done.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.cond.Broadcast()
	for len(q.processing) > 0 {
		q.cond.Wait()
	}
}

// ShuttingDown says whether ShutDown was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
