package runio

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// FinalEnvelopes holds one request per running runner for its final envelope (FinalPath),
// answered the moment the runner's k6 stops its outputs. A runner whose clean final envelope
// arrived has ended with its results, although its exit reaches pod status a second or two
// later (the kubelet's relist and status sync): collecting from these, the run ends within
// moments of its last runner. They live in memory only: after an operator restart, or for a
// runner whose answer never came, the pod's exit and its log say the same, later.
type FinalEnvelopes struct {
	api RunnerAPI
	// Wake enqueues a TestRun whose runner answered.
	Wake chan event.TypedGenericEvent[*v1alpha1.TestRun]

	mu sync.Mutex
	// base is the manager's context once started: held requests end with the manager.
	base context.Context
	// got are the final envelopes by pod UID, clean or with a test error.
	got map[types.UID]*measure.Envelope
	// released gives back what each kept envelope holds of HeldEnvelopes.
	released map[types.UID]func()
	// held cancels the request held for a pod; byRun lists a TestRun's pods for forget.
	held  map[types.UID]context.CancelFunc
	byRun map[types.UID][]types.UID
}

func NewFinalEnvelopes(api RunnerAPI) *FinalEnvelopes {
	return &FinalEnvelopes{
		api: api, Wake: make(chan event.TypedGenericEvent[*v1alpha1.TestRun], 1024),
		got: map[types.UID]*measure.Envelope{}, released: map[types.UID]func(){}, held: map[types.UID]context.CancelFunc{}, byRun: map[types.UID][]types.UID{},
	}
}

// Start keeps the manager's context for the held requests and ends them with it.
func (f *FinalEnvelopes) Start(ctx context.Context) error {
	f.mu.Lock()
	f.base = ctx
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cancel := range f.held {
		cancel()
	}
	return nil
}

// finalRetry is the pause before asking a runner again whose connection failed (not yet
// listening, or its answer cut); after finalAttempts failures in a row the pod is left to the
// slow path (its exit in pod status, its log), which a runner that died needs anyway.
const (
	finalRetry    = time.Second
	finalAttempts = 30
)

// Hold asks pod for its final envelope until it answers or deadline passes; once per pod.
func (f *FinalEnvelopes) Hold(run *v1alpha1.TestRun, pod *corev1.Pod, deadline time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.held[pod.UID]; ok || f.got[pod.UID] != nil {
		return
	}
	base := f.base
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithDeadline(WithEnvelopeLimits(measure.WithTenant(base, run.Namespace), EnvelopeLimits(run.RunnerCount(), run.Namespace)), deadline)
	f.held[pod.UID] = cancel
	f.byRun[run.UID] = append(f.byRun[run.UID], pod.UID)
	// Past its deadline the run has failed or finished: drop what the hold kept, also for a
	// TestRun deleted without passing through forget (no finalizer, gone before a reconcile).
	runUID, podUID := run.UID, pod.UID
	context.AfterFunc(ctx, func() { f.Drop(runUID, podUID) })
	pod = pod.DeepCopy() // the cache's copy must not be read after this reconcile
	owner := &v1alpha1.TestRun{}
	owner.Namespace, owner.Name = run.Namespace, run.Name
	go func() {
		for attempt := 0; attempt < finalAttempts && ctx.Err() == nil; attempt++ {
			env, err := f.api.Final(ctx, pod)
			if err == nil {
				f.keep(ctx, pod.UID, &env, owner)
				return
			}
			if errors.Is(err, measure.ErrRejected) {
				return // refused for its size: asking again costs the same; its log says it too
			}
			select {
			case <-ctx.Done():
			case <-time.After(finalRetry):
			}
		}
	}()
}

// keep stores a final envelope and wakes its TestRun. One with a test error (thresholds
// crossed on the runner's share, stopped, aborted, test.fail()) is kept for its numbers only:
// what the error means is decided by k6's exit code, which only pod status has; its numbers
// then need no log, which the kubelet's log rotation may have cut.
func (f *FinalEnvelopes) keep(ctx context.Context, uid types.UID, env *measure.Envelope, owner *v1alpha1.TestRun) {
	if !env.Final {
		return
	}
	release, ok := HeldEnvelopes.TryAcquire(ctx, measure.SizeOf(env))
	if !ok {
		return // the finals kept for every run fill their budget: the log has it too
	}
	f.mu.Lock()
	if _, ok := f.held[uid]; !ok { // forgotten meanwhile
		f.mu.Unlock()
		release()
		return
	}
	f.got[uid] = env
	f.released[uid] = release
	f.mu.Unlock()
	select {
	case f.Wake <- event.TypedGenericEvent[*v1alpha1.TestRun]{Object: owner}:
	case <-ctx.Done():
	}
}

// Final is a pod's final envelope, nil until it answered.
func (f *FinalEnvelopes) Final(uid types.UID) *measure.Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[uid]
}

// Drop forgets one pod's hold and envelope.
func (f *FinalEnvelopes) Drop(run, pod types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, pod)
	f.unkeep(pod)
	pods := slices.DeleteFunc(f.byRun[run], func(uid types.UID) bool { return uid == pod })
	if len(pods) == 0 {
		delete(f.byRun, run)
	} else {
		f.byRun[run] = pods
	}
}

// Forget ends the held requests of a finished or deleted TestRun and drops what they brought.
func (f *FinalEnvelopes) Forget(run types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, uid := range f.byRun[run] {
		if cancel := f.held[uid]; cancel != nil {
			cancel()
		}
		delete(f.held, uid)
		f.unkeep(uid)
	}
	delete(f.byRun, run)
}

// unkeep drops a pod's envelope and what it held of HeldEnvelopes; f.mu is held.
func (f *FinalEnvelopes) unkeep(pod types.UID) {
	if release := f.released[pod]; release != nil {
		release()
	}
	delete(f.released, pod)
	delete(f.got, pod)
}
