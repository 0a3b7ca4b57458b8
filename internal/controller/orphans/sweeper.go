// Package orphans removes what fleetbench made for a TestRun that is gone without having
// removed it: a user who strips the fleetbench.dev/target-cleanup finalizer and deletes the
// TestRun leaves its target namespace (or, in a shared target namespace, its objects) running.
// Only what carries a TestRun's UID (naming.LabelTestRunUID) is fleetbench's; what carries none
// is never touched. It is deleted once the TestRun at its namespace/name labels is gone or is
// another (another UID), after a grace, exactly (a UID precondition) and with an event.
package orphans

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/children"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// What the sweeper needs, besides what the TestRun controller has: it reads TestRuns live, lists
// and watches fleetbench's namespaces (or the shared namespace's target objects) and deletes them.
//
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces;services,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// DefaultGrace is how long an orphan is seen as one before it is deleted: long enough that a
// TestRun read a moment before its target namespace was labelled never looks gone, short enough
// that an orphaned target does not run for long.
const DefaultGrace = 2 * time.Minute

// Options are what main and the tests choose.
type Options struct {
	// Namespaces are the manager's: with a shared target namespace the run's objects there are
	// swept, otherwise namespaces made per run. With watched namespaces, only what was made for a
	// TestRun in one of them: what another manager made is that manager's.
	Namespaces controller.Namespaces
	// Grace is DefaultGrace when zero.
	Grace time.Duration
	// Clock defaults to the real one.
	Clock clock.PassiveClock
}

// Sweeper is a controller whose key is a TestRun's namespace and name: whatever made for a
// TestRun of that name changes, or such a TestRun is deleted, the sweeper looks at what carries
// a UID other than the live TestRun's.
type Sweeper struct {
	client.Client
	Options
	apiReader client.Reader
	recorder  events.EventRecorder
	// seen is when each orphan (by its own UID) was first seen as one; in memory: after a
	// restart the grace starts again, which only waits longer.
	mu   sync.Mutex
	seen map[types.UID]time.Time
}

// New builds the sweeper from the manager; main and the tests both use it.
func New(mgr ctrl.Manager, opts Options) *Sweeper {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Sweeper{Client: mgr.GetClient(), Options: opts, apiReader: mgr.GetAPIReader(),
		recorder: rc.PrintableEvents(mgr.GetEventRecorder("fleetbench")), seen: map[types.UID]time.Time{}}
}

// SetupWithManager watches TestRuns being deleted and fleetbench's own target namespaces, or in a
// shared target namespace the run's objects (the cache holds only fleetbench-labelled ones).
// On start every one of those is listed, so what was orphaned while no manager ran is found too.
func (s *Sweeper) SetupWithManager(mgr ctrl.Manager) error {
	deleted := builder.WithPredicates(predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false }, UpdateFunc: func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
	b := ctrl.NewControllerManagedBy(mgr).Named("orphans").
		Watches(&v1alpha1.TestRun{}, handler.EnqueueRequestsFromMapFunc(s.ofTestRun), deleted)
	for _, kind := range Watched(s.Namespaces) {
		b = b.Watches(kind, handler.EnqueueRequestsFromMapFunc(s.ofOwned))
	}
	return b.Complete(s)
}

func (s *Sweeper) ofTestRun(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// ofOwned maps what carries a TestRun's UID to that TestRun's key.
func (s *Sweeper) ofOwned(_ context.Context, o client.Object) []reconcile.Request {
	key, ok := s.ownerKey(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// ownerKey is the TestRun o says it was made for, if o is one of this manager's to sweep.
func (s *Sweeper) ownerKey(o client.Object) (types.NamespacedName, bool) {
	l := o.GetLabels()
	key := types.NamespacedName{Namespace: l[naming.LabelTestRunNS], Name: l[naming.LabelTestRun]}
	switch {
	case target.OwnerUID(o) == "" || key.Namespace == "" || key.Name == "" || l[naming.LabelRole] != naming.RoleTarget:
		return key, false
	case s.Namespaces.Target != "" && o.GetNamespace() != s.Namespaces.Target:
		return key, false
	case len(s.Namespaces.Watch) > 0 && !slices.Contains(s.Namespaces.Watch, key.Namespace):
		return key, false
	}
	return key, true
}

// Reconcile deletes, once their grace has passed, what was made for TestRuns of req's name that
// no longer exist, and comes back when the next grace ends.
func (s *Sweeper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	live := types.UID("")
	run := &v1alpha1.TestRun{}
	switch err := s.apiReader.Get(ctx, req.NamespacedName, run); {
	case err == nil:
		live = run.UID
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err // unsure: nothing is deleted
	}
	candidates, err := s.candidates(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := s.Clock.Now()
	var wait []time.Duration
	for _, o := range candidates {
		if target.OwnerUID(o) == string(live) || !o.GetDeletionTimestamp().IsZero() {
			s.forget(o.GetUID())
			continue
		}
		if left := s.graceLeft(o.GetUID(), now); left > 0 {
			wait = append(wait, left)
			continue
		}
		if err := s.sweep(ctx, o, req.NamespacedName); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(wait) == 0 {
		return ctrl.Result{}, nil
	}
	return rc.After(wait...), nil
}

// candidates are what carries a UID and names the TestRun key, from the cache.
func (s *Sweeper) candidates(ctx context.Context, key types.NamespacedName) ([]client.Object, error) {
	labels := client.MatchingLabels{naming.LabelTestRun: key.Name, naming.LabelTestRunNS: key.Namespace, naming.LabelRole: naming.RoleTarget}
	lists := Listed(s.Namespaces)
	opts := []client.ListOption{labels}
	if s.Namespaces.Target != "" {
		opts = append(opts, client.InNamespace(s.Namespaces.Target))
	}
	var out []client.Object
	for _, list := range lists {
		if err := s.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if o := item.(client.Object); s.mine(o, key) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

func (s *Sweeper) mine(o client.Object, key types.NamespacedName) bool {
	owner, ok := s.ownerKey(o)
	return ok && owner == key
}

// sweep reads o again around the cache and deletes exactly it if it still carries the UID it was
// judged by, with an event on it.
func (s *Sweeper) sweep(ctx context.Context, cached client.Object, key types.NamespacedName) error {
	o := cached.DeepCopyObject().(client.Object)
	if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(cached), o); err != nil {
		return client.IgnoreNotFound(err)
	}
	uid := target.OwnerUID(o)
	if o.GetUID() != cached.GetUID() || uid != target.OwnerUID(cached) || !s.mine(o, key) {
		return nil // another object by now: judged afresh on its own event
	}
	if err := rc.DeleteExact(ctx, s.Client, o); err != nil {
		return err
	}
	s.forget(o.GetUID())
	kind := reflect.TypeOf(o).Elem().Name()
	logf.FromContext(ctx).Info("deleted an orphaned target", "object", client.ObjectKeyFromObject(o), "testRun", key, "testRunUID", uid)
	s.recorder.Eventf(o, nil, corev1.EventTypeNormal, "OrphanDeleted", "Delete",
		"deleted target %s %s: its TestRun %s (UID %s) is gone without having removed it (was its %s finalizer removed?)",
		kind, o.GetName(), key, uid, "fleetbench.dev/target-cleanup")
	return nil
}

// graceLeft is how long o must still be seen orphaned before it is deleted.
func (s *Sweeper) graceLeft(uid types.UID, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.seen[uid]
	if !ok {
		if len(s.seen) > 10000 { // bounded: entries of objects long gone are dropped
			s.seen = map[types.UID]time.Time{}
		}
		s.seen[uid], first = now, now
	}
	return first.Add(s.Grace).Sub(now)
}

func (s *Sweeper) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, uid)
}

// Watched are the kinds the sweeper watches for orphans (children.Swept): in an admin's shared
// target namespace the ones released one by one, else the runs' own namespaces.
func Watched(ns controller.Namespaces) []client.Object {
	return children.Swept(children.Kinds, ns.Target != "")
}

// Listed are Watched's lists.
func Listed(ns controller.Namespaces) []client.ObjectList {
	return children.SweptLists(children.Kinds, ns.Target != "")
}
