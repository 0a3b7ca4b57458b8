// Package testrun is the TestRun controller's reconciler: it loads the world once, calls the
// stages in order (admit → provision → drive → collect, each a package that imports only the
// ones before it), acts on a decision to stop or fail once, and writes the status composed by
// package decide in one deferred patch.
package testrun

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/children"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/collect"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	"fleetbench.dev/fleetbench/internal/controller/testrun/provision"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// Reconciler drives a TestRun from Pending to Succeeded or Failed.
type Reconciler struct {
	// The stages, each embedding the one before it: a later stage may call an earlier one's
	// helpers, never the reverse (Go's import rule holds the order).
	*collect.Stage
	// uids finds what the runner I/O holds for a run found gone, by its name.
	uids *runUIDs
	// queue is the work queue, fair by namespace, with deletions first.
	queue *fairQueue
}

// New builds the reconciler from the manager; main and the envtest suite both use it.
func New(mgr ctrl.Manager, opts runenv.Options) *Reconciler {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = drive.DefaultProgressInterval
	}
	if opts.PullRetryGrace <= 0 {
		opts.PullRetryGrace = provision.DefaultPullRetryGrace
	}
	if opts.DefaultPodSecurity == "" {
		opts.DefaultPodSecurity = runenv.DefaultPodSecurityLevel
	}
	if opts.RecordKey == nil {
		opts.RecordKey = seal.NewKey()
	}
	if opts.MaxKeptTarget <= 0 {
		opts.MaxKeptTarget = runenv.DefaultMaxKeptTarget
	}
	if opts.Workers <= 0 {
		opts.Workers = runenv.DefaultWorkers
	}
	env := &runenv.Env{
		Client: mgr.GetClient(), Options: opts, Scheme: mgr.GetScheme(),
		APIReader: mgr.GetAPIReader(), Recorder: rc.PrintableEvents(mgr.GetEventRecorder("fleetbench")),
		Finals: runio.NewFinalEnvelopes(opts.RunnerAPI), Scripts: runio.NewScriptCalls(), Calls: runio.NewAsyncCalls(opts.Clock), Seen: runio.NewLastSeen(),
	}
	return &Reconciler{Stage: collect.New(env), uids: newRunUIDs(), queue: &fairQueue{workers: opts.Workers}}
}

// SetupWithManager watches TestRuns, what they own, runner pods (owned by Jobs, found by
// label), target workloads in other namespaces (by label), and Profiles a TestRun waits for.
// The manager's cache holds only objects with fleetbench's labels (see controller.CacheOptions).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.TestRun{}, profileIndex, func(o client.Object) []string {
		return []string{strings.ToLower(o.(*v1alpha1.TestRun).Spec.Profile)}
	}); err != nil {
		return err
	}
	if err := mgr.Add(runenv.Phases.ReadWhileRunning(mgr.GetClient())); err != nil {
		return err
	}
	if err := mgr.Add(r.Finals); err != nil {
		return err
	}
	if err := mgr.Add(r.Scripts); err != nil {
		return err
	}
	if err := mgr.Add(r.Calls); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TestRun{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionPredicate(), dispatchedEndPredicate())))
	// Kueue's admission of a queued run wakes it; without Kueue installed its kinds are not watched.
	owned, labelled := Watches(r.Kueue)
	for _, obj := range owned {
		b = b.Owns(obj)
	}
	for _, obj := range labelled {
		b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(byTestRunLabels))
	}
	return b.
		Watches(&v1alpha1.TestRun{}, r.queue.deletions()).
		// A zone run's status, copied home by MultiKueue, wakes its zoned run (a ZoneStart
		// dispatched here wakes the zone run it starts: children.Kinds, by labels).
		Watches(&v1alpha1.TestRun{}, handler.EnqueueRequestsFromMapFunc(zoneRunHome)).
		Watches(&v1alpha1.Profile{}, handler.EnqueueRequestsFromMapFunc(r.waitingOnProfile)).
		WatchesRawSource(source.Channel(r.Finals.Wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		WatchesRawSource(source.Channel(r.Scripts.Wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		WatchesRawSource(source.Channel(r.Calls.Wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		Named("testrun").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers, NewQueue: r.queue.newQueue}).
		Complete(r)
}

const profileIndex = "spec.profile"

func deletionPredicate() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}

// byTestRunLabels maps a runner pod or target workload to its TestRun.
func byTestRunLabels(_ context.Context, o client.Object) []reconcile.Request {
	labels := o.GetLabels()
	name := labels[naming.LabelTestRun]
	if name == "" {
		return nil
	}
	ns := o.GetNamespace()
	if owner := labels[naming.LabelTestRunNS]; owner != "" {
		ns = owner
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// zoneRunHome is the zoned run a zone run belongs to, in its namespace.
func zoneRunHome(_ context.Context, o client.Object) []reconcile.Request {
	run, ok := o.(*v1alpha1.TestRun)
	if !ok || run.Spec.ZoneOf == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: run.Namespace, Name: run.Spec.ZoneOf.Run}}}
}

// waitingOnProfile wakes the TestRuns that name a Profile when it appears or changes, until
// they fixed it in status.profile: after that it means nothing to them.
func (r *Reconciler) waitingOnProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.TestRunList
	if err := r.List(ctx, &list, client.MatchingFields{profileIndex: strings.ToLower(o.GetName())}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if !decide.IsFinished(&list.Items[i]) && list.Items[i].Status.Profile == nil {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Watches are the kinds of child whose changes wake their TestRun: through the owner reference,
// or through fleetbench's run labels (children.Kinds); Kueue's only where it is served.
func Watches(kueue bool) (owned, labelled []client.Object) {
	return children.Owned(children.Kinds, kueue), children.Labelled(children.Kinds)
}
