package measure

import (
	"context"
	"errors"
	"sync"
)

// An envelope is written by whoever controls a runner pod: its decoded size in memory must not
// follow from its compressed size. A 66 KiB envelope of windows whose histograms name the
// lowest and the highest bucket decoded into 1.1 GiB when each histogram was a dense array over
// the span of its buckets; a decoded histogram now takes the smaller of that and its buckets
// packed, so its memory follows its data, but a large envelope still takes much. So an
// envelope's JSON is first scanned, in constant memory, for what decoding it would allocate and
// what the decoded envelope would hold; one over Limits is rejected before it is decoded, and
// decodes share a process-wide memory budget (DecodeMemory), so concurrent ones cannot add up.

// ErrRejected marks an envelope refused for its size or shape (errors.Is): a runner that
// sends one is hostile or misconfigured, not merely unreadable.
var ErrRejected = errors.New("result envelope rejected")

// Limits bound what decoding one envelope may take.
type Limits struct {
	// MaxBytes bounds the envelope's JSON after gunzip.
	MaxBytes int
	// MaxCost bounds what decoding the envelope allocates, garbage included, in bytes.
	MaxCost int64
	// MaxHeld bounds what the decoded envelope holds once the decode's garbage is gone (what
	// SizeOf says of it), in bytes: what a caller keeping envelopes must find room for. Zero
	// means MaxCost.
	MaxHeld int64
	// MaxString bounds one string (a metric name, a tag value, an error).
	MaxString int
	// MaxDepth bounds JSON nesting; an envelope's own structure is 9 deep.
	MaxDepth int
}

// DefaultLimits: a runner's envelope of 8 trends split 5 ways over 60 windows, latencies
// spread over four orders of magnitude, is 1.2 MiB of JSON; decoding it allocates 14 MiB at
// most, most of it garbage (the wire form of the histograms), and the decoded envelope holds
// 1.1 MiB (TestRealisticEnvelopeFits); three times what it allocates fits, and so does an
// envelope of 15 counters x 200 series x 60 windows (35 MiB). Sixty thousand windows of wide
// histograms (6 MiB of JSON) take 62 MiB to decode and do not.
var DefaultLimits = Limits{MaxBytes: 16 << 20, MaxCost: 48 << 20, MaxString: 16 << 10, MaxDepth: 12}

// MaxWireBytes bounds an encoded envelope as a runner serves it or a log holds it (gzip and
// base64 of at most DefaultLimits.MaxBytes of JSON compress well below it).
const MaxWireBytes = 8 << 20

// DecodeMemory is the process-wide budget of every envelope decode in flight: the JSON and the
// decoded envelope of each. A decode waits for its share, so N concurrent decodes take at most
// this much together.
var DecodeMemory = NewBudget(DecodeMemoryBytes)

// DecodeMemoryBytes is DecodeMemory's size: one decode at DefaultLimits fits whole.
const DecodeMemoryBytes = 96 << 20

// Budget is a weighted semaphore of bytes. Acquisitions are first come, first served; one
// larger than the budget is cut to its size.
type Budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget is a Budget of size bytes.
func NewBudget(size int64) *Budget { return &Budget{size: size} }

// Acquire takes n bytes of the budget, waiting until they are free or ctx ends; release gives
// them back and must be called once.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	n = min(max(n, 1), b.size)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return b.releaser(n), nil
	}
	w := budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return b.releaser(n), nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.used -= n
			b.grant()
		default:
			for i := range b.waiters {
				if b.waiters[i].ready == w.ready {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grant() // the head may have been this waiter
		}
		return nil, ctx.Err()
	}
}

func (b *Budget) releaser(n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.used -= n
			b.grant()
		})
	}
}

// grant wakes the waiters at the head that now fit; b.mu is held.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// TryAcquire takes n bytes of the budget if they are free now, without waiting.
func (b *Budget) TryAcquire(n int64) (release func(), ok bool) {
	n = max(n, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || b.used+n > b.size {
		return nil, false
	}
	b.used += n
	return b.releaser(n), true
}

// Used is the part of the budget held now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
