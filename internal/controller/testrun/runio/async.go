package runio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// CallKind names one kind of long call a run makes; a run has at most one of each in flight.
type CallKind string

// The long calls made off the reconcile workers, with the deadline each gets. A deadline covers
// the call's own timeouts (RunnerAPI's, the kubelet proxy's) with room to spare: a fake or a
// RunnerAPI without its own timeout is still bounded.
const (
	// CallLive reads every running runner's live envelope (progress, peak steps, abortOnFail).
	CallLive CallKind = "live"
	// CallEnded asks runner 0 whether its load ended (before teardown()).
	CallEnded CallKind = "ended"
	// CallInterrupted asks runner 0 whether its load ended interrupted (the script's test.abort()).
	CallInterrupted CallKind = "interrupted"
	// CallK6Up asks runners not yet Ready whether k6 is up, before the start.
	CallK6Up CallKind = "k6up"
	// CallStop stops every runner still running.
	CallStop CallKind = "stop"
	// CallRelease ends runner 0's linger.
	CallRelease CallKind = "release"
	// CallSample samples the target from the kubelet summary or metrics.k8s.io.
	CallSample CallKind = "sample"
	// CallAfter samples the target after the load and reads its containers' logs.
	CallAfter CallKind = "after"
	// CallLogs reads every ended runner's result envelope from its log.
	CallLogs CallKind = "logs"
	// CallMerge merges the runners' envelopes and judges the thresholds, at collection.
	CallMerge CallKind = "merge"
)

const (
	// RunnerCallLimit bounds one REST call to each runner, made to all at once (callTimeout each).
	RunnerCallLimit = 2 * CallTimeout
	// LiveLimit bounds the live read (2*callTimeout each, and wireMemory's wait).
	LiveLimit = 3 * CallTimeout
	// SampleLimit bounds one target sample: a kubelet summary per node (10 s each) and the
	// metrics.k8s.io fallback.
	SampleLimit = 30 * time.Second
	// MergeLimit bounds a collection's merge and judging, with its wait for a CPU slot.
	MergeLimit = 2 * time.Minute
	// LogsLimit bounds reading every runner's log (two reads each, a few at a time within
	// wireMemory) and the target's logs after the load.
	LogsLimit = time.Minute
	// keepUnread is how long a result nobody read is kept: its run was deleted without a
	// reconcile that forgets it (no finalizer), or stopped asking.
	keepUnread = 10 * time.Minute
)

// ErrPending says a long call is in flight: its end wakes the run, which then reads the result.
var ErrPending = errors.New("a call to the fleet is in flight")

// CallResult is what a finished call returned, and when it was started.
type CallResult struct {
	Val any
	Err error
	At  time.Time
}

type asyncCall struct {
	done bool
	res  CallResult
	// cancel ends the call; nil for an action that must reach the runners even once its run
	// ended (Stop, Release), which its own deadline bounds.
	cancel context.CancelFunc
	// expire drops the result if nobody reads it (keepUnread); stopped once it is read.
	expire *time.Timer
}

// AsyncCalls runs the fleet's long calls (runner REST and live calls, kubelet summaries, log
// reads) off the reconcile workers, as scriptCalls runs setup() and teardown(): each is up to
// seconds against a runner or kubelet a tenant's load may slow down, and a worker waiting on
// it holds up every other run. A reconcile starts a call (one per run and kind in flight), its
// end wakes the run through wake, and a later reconcile reads the result, which is then
// forgotten. Nothing here is the only record of anything: after a manager restart the calls in
// flight are gone and the next reconcile makes them again from what the world shows.
type AsyncCalls struct {
	Wake  chan event.TypedGenericEvent[*v1alpha1.TestRun]
	clock clock.PassiveClock

	mu   sync.Mutex
	base context.Context
	// calls by TestRun UID and kind: at most one per kind, in flight or done and unread.
	calls map[types.UID]map[CallKind]*asyncCall
}

func NewAsyncCalls(c clock.PassiveClock) *AsyncCalls {
	return &AsyncCalls{Wake: make(chan event.TypedGenericEvent[*v1alpha1.TestRun], 1024), clock: c,
		calls: map[types.UID]map[CallKind]*asyncCall{}}
}

// Start keeps the manager's context: calls in flight end with the manager.
func (c *AsyncCalls) Start(ctx context.Context) error {
	c.mu.Lock()
	c.base = ctx
	c.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Begin makes fn(ctx) for run as kind unless a call of that kind is in flight or unread; ctx
// ends at limit. An action (Stop, Release) is not ended when its run is forgotten.
func (c *AsyncCalls) Begin(run *v1alpha1.TestRun, kind CallKind, limit time.Duration, action bool, fn func(ctx context.Context) (any, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[run.UID][kind] != nil {
		return
	}
	base := c.base
	if base == nil {
		base = context.Background()
	}
	// What the call holds of the process-wide budgets is charged to the run's namespace.
	ctx, cancel := context.WithTimeout(measure.WithTenant(base, run.Namespace), limit)
	call := &asyncCall{}
	if !action {
		call.cancel = cancel
	}
	if c.calls[run.UID] == nil {
		c.calls[run.UID] = map[CallKind]*asyncCall{}
	}
	c.calls[run.UID][kind] = call
	uid, at := run.UID, c.clock.Now()
	owner := &v1alpha1.TestRun{}
	owner.Namespace, owner.Name = run.Namespace, run.Name
	go func() {
		defer cancel()
		val, err := fn(ctx)
		if ctx.Err() != nil && err == nil {
			err = ctx.Err()
		}
		c.mu.Lock()
		if c.calls[uid][kind] != call {
			c.mu.Unlock()
			release(val)
			return // forgotten meanwhile: nobody reads it
		}
		call.done, call.res = true, CallResult{Val: val, Err: err, At: at}
		call.expire = time.AfterFunc(keepUnread, func() { c.Drop(uid, kind, call) })
		c.mu.Unlock()
		select {
		case c.Wake <- event.TypedGenericEvent[*v1alpha1.TestRun]{Object: owner}:
		case <-base.Done():
		}
	}()
}

// Take returns the finished call of kind for run and forgets it; false while none finished.
func (c *AsyncCalls) Take(run types.UID, kind CallKind) (CallResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[run][kind]
	if call == nil || !call.done {
		return CallResult{}, false
	}
	c.deleteLocked(run, kind)
	return call.res, true
}

// Peek returns the finished call of kind for run and keeps it, for a step that may need it on
// its next reconcile too (collection: read once, kept until the run ends or drop).
func (c *AsyncCalls) Peek(run types.UID, kind CallKind) (CallResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[run][kind]
	if call == nil || !call.done {
		return CallResult{}, false
	}
	return call.res, true
}

// Busy says whether a call of kind is in flight for run.
func (c *AsyncCalls) Busy(run types.UID, kind CallKind) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[run][kind]
	return call != nil && !call.done
}

// Discard forgets the finished call of kind for run, so the next poll makes it again.
func (c *AsyncCalls) Discard(run types.UID, kind CallKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if call := c.calls[run][kind]; call != nil && call.done {
		c.deleteLocked(run, kind)
	}
}

// Drop forgets call if it is still the one kept for run and kind.
func (c *AsyncCalls) Drop(run types.UID, kind CallKind, call *asyncCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[run][kind] == call {
		c.deleteLocked(run, kind)
	}
}

func (c *AsyncCalls) deleteLocked(run types.UID, kind CallKind) {
	if call := c.calls[run][kind]; call != nil {
		if call.expire != nil {
			call.expire.Stop()
		}
		release(call.res.Val)
	}
	delete(c.calls[run], kind)
	if len(c.calls[run]) == 0 {
		delete(c.calls, run)
	}
}

// Forget ends the reads of a finished or deleted TestRun and drops every result it has; its
// actions in flight reach the runners within their deadline, their results unread.
func (c *AsyncCalls) Forget(run types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, call := range c.calls[run] {
		if !call.done && call.cancel != nil {
			call.cancel()
		}
		if call.expire != nil {
			call.expire.Stop()
		}
		release(call.res.Val)
	}
	delete(c.calls, run)
}

// Holding is a call's result that holds part of a process-wide budget (decoded envelopes):
// it is released when the call is forgotten (taken, discarded, expired, its run forgotten),
// so a result nobody reads holds nothing.
type Holding interface{ Release() }

func release(val any) {
	if h, ok := val.(Holding); ok {
		h.Release()
	}
}

// Pending counts the calls held for run, in flight or unread (tests: memory is bounded).
func (c *AsyncCalls) Pending(run types.UID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls[run])
}

// Typed is a finished call's result as the type its call returns.
type Typed[T any] struct {
	Val T
	at  time.Time
	Err error
}

// Poll returns the finished call of kind for run (forgetting it) with done; otherwise it starts
// fn unless one is in flight, and done is false: the call's end wakes the run.
func Poll[T any](c *AsyncCalls, run *v1alpha1.TestRun, kind CallKind, limit time.Duration, fn func(ctx context.Context) (T, error)) (res Typed[T], done bool) {
	if r, ok := c.Take(run.UID, kind); ok {
		res.Val, _ = r.Val.(T)
		res.at, res.Err = r.At, r.Err
		return res, true
	}
	c.Begin(run, kind, limit, false, func(ctx context.Context) (any, error) { return fn(ctx) })
	return res, false
}

// CPU is the slots of the process's CPUs for the work whose cost a tenant chooses (merging its
// runners' envelopes, judging its thresholds, counting its log patterns): fair by namespace as
// every Budget, so one namespace's many runs take at most its share of the cores.
var CPU = measure.NewBudget(int64(max(runtime.GOMAXPROCS(0), 2)))

// TargetLogMemory bounds the targets' logs read for their log findings (up to 32 MiB a run),
// held while their patterns are counted, over every run and fair by namespace.
var TargetLogMemory = measure.NewBudget(64 << 20)

// OnCPU runs fn within one of CPU's slots for ctx's namespace.
func OnCPU[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	release, err := CPU.Acquire(ctx, 1)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("no CPU free for it yet: %w", err)
	}
	defer release()
	return fn()
}
