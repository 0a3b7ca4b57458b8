package testrun

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// runUIDs remembers the UID of each TestRun name the reconciler has read, so what the
// reconciler holds in memory for a run (finals, script and async calls, last seen envelopes,
// all by UID) can be dropped when the run is found gone: a run without a finalizer (an
// external target) is deleted without a reconcile that sees its UID. One entry per TestRun
// that exists, as in the informer's cache.
type runUIDs struct {
	mu     sync.Mutex
	byName map[types.NamespacedName]types.UID
}

func newRunUIDs() *runUIDs {
	return &runUIDs{byName: map[types.NamespacedName]types.UID{}}
}

// remember records name's UID; it returns the UID of a run of that name read before, deleted
// and made again since, or "" when there is none.
func (u *runUIDs) remember(name types.NamespacedName, uid types.UID) (replaced types.UID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if old, ok := u.byName[name]; ok && old != uid {
		replaced = old
	}
	u.byName[name] = uid
	return replaced
}

// take returns and drops name's UID.
func (u *runUIDs) take(name types.NamespacedName) (types.UID, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	uid, ok := u.byName[name]
	delete(u.byName, name)
	return uid, ok
}

// forgetRun drops what the reconciler holds in memory for run and ends its calls in flight.
func (r *Reconciler) forgetRun(run types.UID) {
	r.Finals.Forget(run)
	r.Scripts.Forget(run)
	r.Calls.Forget(run)
	r.Seen.Forget(run)
}

// forgetGone is forgetRun for a run that no longer exists, with its budget mark, which a
// finished run keeps until its deletion is reconciled.
func (r *Reconciler) forgetGone(run types.UID) {
	r.forgetRun(run)
	r.Budgets.Forget(run)
}
