package runio

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// LastSeen keeps, for runs that replace lost runners, each runner's envelope from the last live
// read: what a runner measured until then is all that is left of it once its pod is deleted
// with its log. Memory only: after a manager restart a runner lost before the next live read
// has no results kept, and its gap starts at the start.
//
// It is bounded whatever tenants do. A run holds entries only while open: reconcileReplace
// opens it on every reconcile of a started Replace run, and it is forgotten when the run
// finishes, is being deleted, or is found gone (runUIDs); a read that ends after that finds the
// run closed and keeps nothing. An open run holds one entry per runner index below its runner count (a replacement's
// entry takes its lost runner's place). Over all runs, at most maxSeenEntries entries holding
// at most seenBudget of decoded envelopes: a new entry that does not fit is not kept (the
// runner's last kept entry, if any, stays), and a loss then keeps what was kept before, or
// nothing, and its gap says so.
type LastSeen struct {
	mu      sync.Mutex
	byRun   map[types.UID]*seenRun
	entries int
	// maxEntries and budget bound every run's entries together.
	maxEntries int
	budget     *measure.Budget
}

type seenRun struct {
	runners int
	tenant  string
	byIndex map[int]seenEnvelope
}

type seenEnvelope struct {
	replacement int
	env         measure.Envelope
	at          time.Time
	release     func()
}

// maxSeenEntries bounds the entries of every run together: 5 runs of 4,000 runners each.
const maxSeenEntries = 20000

// seenBudget bounds the decoded envelopes kept over every run: one run's worth (runEnvelopeBudget).
const seenBudget = runEnvelopeBudget

func NewLastSeen() *LastSeen {
	return &LastSeen{byRun: map[types.UID]*seenRun{},
		maxEntries: maxSeenEntries, budget: measure.NewBudget(seenBudget)}
}

// seenPut is what put did with an envelope.
type seenPut string

const (
	seenKept     seenPut = "kept"
	seenClosed   seenPut = "run not open"    // finished, deleted, or never opened: nothing is kept
	seenStale    seenPut = "stale"           // an earlier runner of that index than the one held
	seenNoRunner seenPut = "no such runner"  // an index outside the run's runner count
	seenFull     seenPut = "entries full"    // maxEntries reached over every run
	seenNoBudget seenPut = "budget exceeded" // the envelope does not fit the budget now
)

// Open lets run, of namespace tenant (charged for what it keeps), with runners runners, keep entries.
func (l *LastSeen) Open(run types.UID, tenant string, runners int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byRun[run]
	if r == nil {
		r = &seenRun{byIndex: map[int]seenEnvelope{}, tenant: tenant}
		l.byRun[run] = r
	}
	r.runners = runners
	for i := range r.byIndex {
		if i >= runners {
			l.dropLocked(r, i)
		}
	}
}

// Put keeps runner index's envelope (of its replacement number replacement, 0 for the
// original) as read at; the end of its windows, when it says, is when it covers to. That end
// is the runner's own clock: one past the read would hide a gap, so it is not taken.
func (l *LastSeen) Put(run types.UID, index, replacement int, env measure.Envelope, at time.Time) seenPut {
	if env.EndUnixNano > 0 && env.EndUnixNano < at.UnixNano() {
		at = time.Unix(0, env.EndUnixNano)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byRun[run]
	switch {
	case r == nil:
		return seenClosed
	case index < 0 || index >= r.runners:
		return seenNoRunner
	}
	old, had := r.byIndex[index]
	if had && old.replacement > replacement {
		return seenStale
	}
	if !had && l.entries >= l.maxEntries {
		return seenFull
	}
	release, ok := l.budget.TryAcquire(measure.WithTenant(context.Background(), r.tenant), measure.SizeOf(&env))
	if !ok {
		return seenNoBudget
	}
	if had {
		old.release()
	} else {
		l.entries++
	}
	r.byIndex[index] = seenEnvelope{replacement: replacement, env: env, at: at, release: release}
	return seenKept
}

// Peek returns runner index's last envelope while it is that of its replacement number
// replacement, and keeps it: it is dropped only once the record that keeps it is written.
func (l *LastSeen) Peek(run types.UID, index, replacement int) (measure.Envelope, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byRun[run]
	if r == nil {
		return measure.Envelope{}, time.Time{}, false
	}
	e, ok := r.byIndex[index]
	if !ok || e.replacement != replacement {
		return measure.Envelope{}, time.Time{}, false
	}
	return e.env, e.at, true
}

// Drop forgets runner index's envelope if it is that of replacement: the record keeps it now.
func (l *LastSeen) Drop(run types.UID, index, replacement int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byRun[run]; r != nil {
		if e, ok := r.byIndex[index]; ok && e.replacement == replacement {
			l.dropLocked(r, index)
		}
	}
}

// Forget closes run and drops its entries.
func (l *LastSeen) Forget(run types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(run)
}

// size is the open runs and the entries they hold.
func (l *LastSeen) size() (runs, entries int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byRun), l.entries
}

func (l *LastSeen) forgetLocked(run types.UID) {
	r := l.byRun[run]
	if r == nil {
		return
	}
	for i := range r.byIndex {
		l.dropLocked(r, i)
	}
	delete(l.byRun, run)
}

func (l *LastSeen) dropLocked(r *seenRun, index int) {
	if e, ok := r.byIndex[index]; ok {
		e.release()
		delete(r.byIndex, index)
		l.entries--
	}
}

// Held is how many envelopes the manager keeps for run, and whether run is open.
func (l *LastSeen) Held(run types.UID) (envelopes int, open bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.byRun[run]
	if r == nil {
		return 0, false
	}
	return len(r.byIndex), true
}
