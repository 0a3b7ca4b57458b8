package measure

import (
	"context"
	"testing"
)

func tenantCtx(t string) context.Context { return WithTenant(context.Background(), t) }

// acquireAsync starts an Acquire and returns a channel of its release once granted.
func acquireAsync(b *Budget, tenant string, n int64) chan func() {
	got := make(chan func(), 1)
	go func() {
		r, err := b.Acquire(tenantCtx(tenant), n)
		if err == nil {
			got <- r
		}
	}()
	return got
}

// waitQueued waits until tenant has n acquisitions waiting.
func waitQueued(b *Budget, tenant string, n int) {
	for {
		b.mu.Lock()
		k := len(b.waiting[tenant])
		b.mu.Unlock()
		if k == n {
			return
		}
	}
}

func granted(c chan func()) bool {
	select {
	case r := <-c:
		c <- r
		return true
	default:
		return false
	}
}

// TestBudgetShareOfATenant: a tenant alone holds at most half of a NewBudget (the first
// acquisition of a tenant holding nothing is granted whatever its size); NewHeldBudget lets
// it hold all.
func TestBudgetShareOfATenant(t *testing.T) {
	b := NewBudget(100)
	r1, _ := b.Acquire(tenantCtx("a"), 40)
	if _, ok := b.TryAcquire(tenantCtx("a"), 20); ok {
		t.Fatal("a tenant alone got 60 of 100")
	}
	if r, ok := b.TryAcquire(tenantCtx("a"), 10); !ok {
		t.Fatal("a tenant alone was refused 50 of 100")
	} else {
		r()
	}
	r1()
	big, _ := b.Acquire(tenantCtx("a"), 90) // holds nothing: one of any size
	big()

	h := NewHeldBudget(100)
	r2, _ := h.Acquire(tenantCtx("a"), 40)
	if r, ok := h.TryAcquire(tenantCtx("a"), 60); !ok {
		t.Fatal("a tenant alone was refused all of a held budget")
	} else {
		r()
	}
	r2()
}

// TestBudgetServesTenantsInTurn: a tenant that queued many acquisitions first does not push
// back another's: once room is freed, the other's is granted before the first's second.
func TestBudgetServesTenantsInTurn(t *testing.T) {
	b := NewHeldBudget(100)
	hold, _ := b.Acquire(tenantCtx("a"), 100)
	a1, a2, a3 := acquireAsync(b, "a", 50), acquireAsync(b, "a", 50), acquireAsync(b, "a", 50)
	waitQueued(b, "a", 3)
	b1 := acquireAsync(b, "b", 50)
	waitQueued(b, "b", 1)
	hold() // grants under the budget's lock, before it returns
	if a, b := b.HeldBy("a"), b.HeldBy("b"); a != 50 || b != 50 {
		t.Fatalf("a holds %d, b %d: want one acquisition each (a's first, then b's in its turn)", a, b)
	}
	for _, c := range []chan func(){a1, a2, a3, b1} {
		go func() { (<-c)() }()
	}
}

// TestBudgetOverShareWaitsForOthers: a tenant over its share waits while another tenant's
// acquisition that fits is granted.
func TestBudgetOverShareWaitsForOthers(t *testing.T) {
	b := NewHeldBudget(100)
	ra, _ := b.Acquire(tenantCtx("a"), 60) // alone: all of it is its share
	rb, _ := b.Acquire(tenantCtx("b"), 10) // b holds nothing: granted
	a2 := acquireAsync(b, "a", 10)         // two tenants now: a's share is 50, it holds 60
	waitQueued(b, "a", 1)
	b2 := acquireAsync(b, "b", 30) // b within its share, and there is room
	r := <-b2
	if granted(a2) {
		t.Fatal("a, over its share, was granted while b holds some")
	}
	r()
	rb() // b holds nothing: a is alone again
	(<-a2)()
	ra()
	if b.Used() != 0 {
		t.Fatalf("used %d after every release", b.Used())
	}
}

// TestBudgetLargeWaiterIsNotOvertaken: the first tenant in turn within its share waits for
// room, and a small acquisition of another tenant arriving later does not take it.
func TestBudgetLargeWaiterIsNotOvertaken(t *testing.T) {
	b := NewBudget(100)
	hold, _ := b.Acquire(tenantCtx("c"), 30)
	big := acquireAsync(b, "a", 80) // a holds nothing: any size, once there is room
	waitQueued(b, "a", 1)
	if _, ok := b.TryAcquire(tenantCtx("b"), 10); ok {
		t.Fatal("b's small acquisition overtook a's waiting one")
	}
	small := acquireAsync(b, "b", 10)
	waitQueued(b, "b", 1)
	hold()
	(<-big)()
	(<-small)()
}
