package measure

import (
	"context"
	"errors"
	"slices"
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
	// Tenant is who the decode's share of DecodeMemory is charged to (Budget).
	Tenant string
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

// Budget is a weighted semaphore of bytes, fair by tenant (the namespace of the run an
// acquisition is for; WithTenant). The manager's memory is shared by every tenant, so:
//   - a tenant holds at most its share: the budget divided among the tenants holding or waiting
//     for some, and never more than half of it (NewBudget), so another tenant always finds room
//     once what it waits for is released; a tenant that holds nothing may take one acquisition
//     of any size;
//   - waiting acquisitions are granted in turn by tenant, first come, first served within one,
//     so a tenant queueing many cannot push another's back.
//
// One larger than the budget is cut to its size.
type Budget struct {
	mu   sync.Mutex
	size int64
	used int64
	// maxShare is the most one tenant may hold while another holds or waits (size/2, or size
	// for NewHeldBudget).
	maxShare int64
	// held and waiting by tenant; turns is the order waiting tenants are served in.
	held    map[string]int64
	waiting map[string][]*budgetWaiter
	turns   []string
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget is a Budget of size bytes.
func NewBudget(size int64) *Budget {
	return &Budget{size: size, maxShare: size / 2, held: map[string]int64{}, waiting: map[string][]*budgetWaiter{}}
}

// NewHeldBudget is a Budget for memory held until a run's step ends (envelopes kept for
// collection): one run may need all of it, so a tenant alone may hold it whole, and the others
// wait for that step's end; with others holding or waiting, each gets its share.
func NewHeldBudget(size int64) *Budget {
	b := NewBudget(size)
	b.maxShare = size
	return b
}

type tenantKey struct{}

// WithTenant has the budgets acquired under ctx charge tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantOf is the tenant ctx charges; "" for none.
func TenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// Acquire takes n bytes of the budget for ctx's tenant, waiting until they are free and within
// its share, or until ctx ends; release gives them back and must be called once.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	tenant := TenantOf(ctx)
	n = min(max(n, 1), b.size)
	b.mu.Lock()
	if len(b.turns) == 0 && b.fitsLocked(tenant, n) {
		b.takeLocked(tenant, n)
		b.mu.Unlock()
		return b.releaser(tenant, n), nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	if len(b.waiting[tenant]) == 0 {
		b.turns = append(b.turns, tenant)
	}
	b.waiting[tenant] = append(b.waiting[tenant], w)
	b.grantLocked() // its turn may be now
	b.mu.Unlock()
	select {
	case <-w.ready:
		return b.releaser(tenant, n), nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.giveBackLocked(tenant, n)
		default:
			b.dropWaiterLocked(tenant, w)
			b.grantLocked() // the head may have been this waiter
		}
		return nil, ctx.Err()
	}
}

// TryAcquire takes n bytes for ctx's tenant if they are free and within its share now,
// without waiting.
func (b *Budget) TryAcquire(ctx context.Context, n int64) (release func(), ok bool) {
	tenant := TenantOf(ctx)
	n = max(n, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.turns) > 0 || n > b.size || !b.fitsLocked(tenant, n) {
		return nil, false
	}
	b.takeLocked(tenant, n)
	return b.releaser(tenant, n), true
}

// shareLocked is what one tenant may hold now: the budget divided among the tenants holding
// or waiting for some, at most half of it.
func (b *Budget) shareLocked() int64 {
	active := len(b.turns)
	for t, h := range b.held {
		if h > 0 && len(b.waiting[t]) == 0 {
			active++
		}
	}
	return min(b.maxShare, b.size/int64(max(active, 1)))
}

// fitsLocked says whether tenant may take n more now.
func (b *Budget) fitsLocked(tenant string, n int64) bool {
	if b.used+n > b.size {
		return false
	}
	held := b.held[tenant]
	return held == 0 || held+n <= b.shareLocked()
}

func (b *Budget) takeLocked(tenant string, n int64) {
	b.used += n
	b.held[tenant] += n
}

func (b *Budget) giveBackLocked(tenant string, n int64) {
	b.used -= n
	if b.held[tenant] -= n; b.held[tenant] <= 0 {
		delete(b.held, tenant)
	}
	b.grantLocked()
}

func (b *Budget) releaser(tenant string, n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.giveBackLocked(tenant, n)
		})
	}
}

func (b *Budget) dropWaiterLocked(tenant string, w *budgetWaiter) {
	ws := b.waiting[tenant]
	if i := slices.Index(ws, w); i >= 0 {
		b.waiting[tenant] = slices.Delete(ws, i, i+1)
	}
	if len(b.waiting[tenant]) == 0 {
		delete(b.waiting, tenant)
		if i := slices.Index(b.turns, tenant); i >= 0 {
			b.turns = slices.Delete(b.turns, i, i+1)
		}
	}
}

// grantLocked wakes the head waiters in turn: a tenant over its share is passed over; the
// first within its share that does not fit waits for room, and nobody behind it overtakes it
// (a large acquisition is not starved by small ones). A tenant served that still waits goes
// to the end of the turns.
func (b *Budget) grantLocked() {
	for progress := true; progress; {
		progress = false
		for _, t := range slices.Clone(b.turns) {
			w := b.waiting[t][0]
			if held := b.held[t]; held > 0 && held+w.n > b.shareLocked() {
				continue
			}
			if b.used+w.n > b.size {
				return
			}
			b.dropWaiterLocked(t, w)
			if len(b.waiting[t]) > 0 {
				i := slices.Index(b.turns, t)
				b.turns = append(slices.Delete(b.turns, i, i+1), t)
			}
			b.takeLocked(t, w.n)
			close(w.ready)
			progress = true
		}
	}
}

// Used is the part of the budget held now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// HeldBy is the part of the budget tenant holds now.
func (b *Budget) HeldBy(tenant string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[tenant]
}
