package runio

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// ScriptCallLimit bounds one setup() or teardown() call with its hand-over: the runner's own
// answer is bounded by scriptTimeout, the rest by a few short calls.
const ScriptCallLimit = scriptTimeout + 30*time.Second

// scriptCall is one setup() or teardown() call; done once it returned.
type scriptCall struct {
	done bool
	// fail is why the call failed (a reason and message for the run or the condition); nil when it worked.
	fail *decide.Failure
	// note says what the call did, for the condition.
	note string
}

// ScriptCalls runs setup() and teardown() off the reconcile worker: a call takes as long as
// the script makes it (up to scriptTimeout, 2 minutes), and a worker waiting on it would hold
// up every other run. A reconcile starts the call, and the next one (woken through wake when
// it returns) records its result; the result is kept until the run ends, so a status write
// lost in between does not run the script twice. Like the runners' final envelopes, the calls
// live in memory: after an operator restart a call in flight is made again (see once.go).
type ScriptCalls struct {
	Wake chan event.TypedGenericEvent[*v1alpha1.TestRun]

	mu   sync.Mutex
	base context.Context
	// calls by TestRun UID and what they run ("setup", "teardown").
	calls map[types.UID]map[string]*scriptCall
	// cancel ends the calls of a TestRun in flight.
	cancel map[types.UID][]context.CancelFunc
}

func NewScriptCalls() *ScriptCalls {
	return &ScriptCalls{Wake: make(chan event.TypedGenericEvent[*v1alpha1.TestRun], 1024),
		calls: map[types.UID]map[string]*scriptCall{}, cancel: map[types.UID][]context.CancelFunc{}}
}

// Start keeps the manager's context: calls in flight end with the manager.
func (c *ScriptCalls) Start(ctx context.Context) error {
	c.mu.Lock()
	c.base = ctx
	c.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Call starts what (setup, teardown) for run with fn when it was not started, and says once
// it returned: done, with what it did (note) or why it failed. fn gets a context that ends at
// scriptCallLimit, so every call, and the wait for it, ends.
func (c *ScriptCalls) Call(run *v1alpha1.TestRun, what string, fn func(ctx context.Context) (note string, fail *decide.Failure)) (note string, fail *decide.Failure, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.calls[run.UID][what]; sc != nil {
		return sc.note, sc.fail, sc.done
	}
	base := c.base
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(measure.WithTenant(base, run.Namespace), ScriptCallLimit)
	if c.calls[run.UID] == nil {
		c.calls[run.UID] = map[string]*scriptCall{}
	}
	sc := &scriptCall{}
	c.calls[run.UID][what] = sc
	c.cancel[run.UID] = append(c.cancel[run.UID], cancel)
	owner := &v1alpha1.TestRun{}
	owner.Namespace, owner.Name = run.Namespace, run.Name
	go func() {
		defer cancel()
		note, fail := fn(ctx)
		c.mu.Lock()
		sc.note, sc.fail, sc.done = note, fail, true
		c.mu.Unlock()
		select {
		case c.Wake <- event.TypedGenericEvent[*v1alpha1.TestRun]{Object: owner}:
		case <-base.Done():
		}
	}()
	return "", nil, false
}

// Started says whether what was started for the run (and not forgotten since).
func (c *ScriptCalls) Started(run types.UID, what string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[run][what] != nil
}

// Forget ends the calls of a finished or deleted TestRun and drops their results.
func (c *ScriptCalls) Forget(run types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.cancel[run] {
		cancel()
	}
	delete(c.cancel, run)
	delete(c.calls, run)
}

// Pending is how many calls the manager holds for run, in flight or ended and unread.
func (c *ScriptCalls) Pending(run types.UID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls[run]) + len(c.cancel[run])
}
