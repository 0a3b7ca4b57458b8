// Package testrun is the TestRun controller. A reconcile loads the world once (load), walks the
// phases in order (each creates what is missing and records what it decided), acts on a
// decision to stop or fail once (finish), and writes status in one deferred patch. What is
// decided from what was loaded (classify, outcome) is pure and table-tested.
package testrun

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// targetFinalizer lets the operator delete the target namespace, which owner references
// cannot reach: a namespace cannot be owned by a namespaced TestRun.
const targetFinalizer = "fleetbench.dev/target-cleanup"

// Timeouts are the defaults of spec.timeouts.
type Timeouts struct {
	Provisioning time.Duration
	RunnersReady time.Duration
	// RunGrace is added to the expected length of the load.
	RunGrace time.Duration
	// RunUnknown bounds a load whose length only the script knows.
	RunUnknown time.Duration
	Collection time.Duration
}

// DefaultTimeouts are documented on v1alpha1.TimeoutsSpec.
var DefaultTimeouts = Timeouts{
	Provisioning: 10 * time.Minute,
	RunnersReady: 5 * time.Minute,
	RunGrace:     10 * time.Minute,
	RunUnknown:   time.Hour,
	Collection:   2 * time.Minute,
}

// Options are what main and the tests choose; New takes the rest from the manager.
type Options struct {
	RunnerAPI RunnerAPI
	Logs      LogReader
	// Stats samples the target's CPU and memory from the kubelet or metrics.k8s.io.
	Stats TargetStats
	// TargetMetrics picks the source: TargetMetricsAuto (also when empty), TargetMetricsKubelet
	// or TargetMetricsMetricsAPI.
	TargetMetrics string
	// RunnerImage is used when a TestRun names none.
	RunnerImage string
	Timeouts    Timeouts
	// PodLevelResources sizes one-machine targets with pod.spec.resources (Kubernetes 1.34+).
	// If the API server drops the field anyway, targets fall back to per-container limits.
	PodLevelResources bool
	// ProgressInterval is how often status.progress is refreshed from the runners while the
	// load runs; DefaultProgressInterval when zero.
	ProgressInterval time.Duration
	// PullRetryGrace is how long an image pull may be seen failing before the run ends
	// Target/RunnerImageNotPresent; DefaultPullRetryGrace when zero.
	PullRetryGrace time.Duration
	// TargetNamespace is where every target goes when set (--target-namespace): a namespace an
	// admin made, which the targets of all TestRuns share and the operator never creates, labels
	// or deletes. Empty: a namespace of its own per TestRun.
	TargetNamespace string
	// DefaultPodSecurity is the level the API server enforces in a namespace without a
	// pod-security.kubernetes.io/enforce label (its PodSecurity admission configuration);
	// DefaultPodSecurityLevel when empty.
	DefaultPodSecurity string
	// MaxTargetsPerNamespace caps the provisioned targets a namespace's TestRuns hold at once
	// (--max-targets-per-namespace); a run over it waits Pending TargetLimitReached. 0: no cap.
	MaxTargetsPerNamespace int
	// Clock defaults to the real one.
	Clock clock.PassiveClock
	// KeptRecords is how many kept records (the results a later run may compare with) a
	// namespace holds (--kept-results-per-namespace); DefaultKeptRecords when zero.
	KeptRecords int
	// Workers is how many TestRuns are reconciled at once (MaxConcurrentReconciles);
	// DefaultWorkers when zero. The reconciler's shared state (finals, pulls,
	// podLevelDropped, the metrics) is safe for that; one TestRun is never reconciled twice at once.
	Workers int
	// Kueue: Kueue's API was served when the manager started (controller.KueueServed, asked
	// once; controller.WithKueue gave the cache the same answer). Runs are queued (queue.go)
	// and Workloads watched only then; never asked again, so the watches match the cache.
	Kueue bool
}

// DefaultWorkers: the long calls (setup(), teardown(), runner, kubelet and log reads) run off
// the workers (scriptCalls, asyncCalls); several workers keep one run's API writes from
// queueing another's.
const DefaultWorkers = 4

// DefaultPodSecurityLevel is Kubernetes' own default is privileged, but fleetbench assumes the
// strict one unless told: a namespace that enforces nothing may get a restricted target only.
const DefaultPodSecurityLevel = "restricted"

// Reconciler drives a TestRun from Pending to Succeeded or Failed.
type Reconciler struct {
	client.Client
	Options
	scheme *runtime.Scheme
	// apiReader reads around the cache: the TestRun itself (see Reconcile) and users' script
	// ConfigMaps, which the cache does not hold.
	apiReader       client.Reader
	recorder        events.EventRecorder
	podLevelDropped atomic.Bool
	// finals are the runners' final envelopes, fetched as soon as each runner has them.
	finals *finalEnvelopes
	// pulls tells a pull failing again after the kubelet's back-off from its first failure.
	pulls pullFailures
	// slots are the runs let past MaxTargetsPerNamespace that the cache does not show yet.
	slots targetSlots
	// scripts runs setup() and teardown() off the reconcile workers.
	scripts *scriptCalls
	// calls runs the fleet's other long calls off the reconcile workers.
	calls *asyncCalls
	// seen keeps each runner's last live envelope for runs that replace lost runners.
	seen *lastSeen
	// uids finds what the fields above hold for a run found gone, by its name.
	uids *runUIDs
	// budgets remembers the runs whose PodDisruptionBudgets were made or deleted (disruption.go).
	budgets budgetMarks
}

// New builds the reconciler from the manager; main and the envtest suite both use it.
func New(mgr ctrl.Manager, opts Options) *Reconciler {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.PullRetryGrace <= 0 {
		opts.PullRetryGrace = DefaultPullRetryGrace
	}
	if opts.DefaultPodSecurity == "" {
		opts.DefaultPodSecurity = DefaultPodSecurityLevel
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	return &Reconciler{
		Client: mgr.GetClient(), Options: opts, scheme: mgr.GetScheme(),
		apiReader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder("fleetbench"),
		finals: newFinalEnvelopes(opts.RunnerAPI), pulls: pullFailures{grace: opts.PullRetryGrace}, scripts: newScriptCalls(), calls: newAsyncCalls(opts.Clock), seen: newLastSeen(), uids: newRunUIDs(),
	}
}

// phaseFunc is one step of a reconcile. It returns a non-zero Result when the run must wait
// there, records a failure in the scope instead of acting on it, and is idempotent.
type phaseFunc func(ctx context.Context, s *scope) (ctrl.Result, error)

// Reconcile
//  1. loads the TestRun live; deletion ends here;
//  2. composes the status once, deferred (composeStatus: from the scope and the decision), and
//     patches it;
//  3. leaves finished runs alone but for TTL and target cleanup;
//  4. loads the world into the scope, runs the phases in order until one waits or fails; they
//     create what is missing and record what they decided;
//  5. acts on a failure or stop decision in finish.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	// 1. From the API server rather than the cache: the status records what this operator did
	// (started the runners, when), and a reconcile woken by a pod event must not decide on a
	// copy that predates its own last write.
	run := &v1alpha1.TestRun{}
	if err := r.apiReader.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			if uid, ok := r.uids.take(req.NamespacedName); ok {
				r.forgetGone(uid) // deleted, maybe without a finalizer: no reconcile saw it go
			}
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if old := r.uids.remember(req.NamespacedName, run.UID); old != "" {
		r.forgetGone(old) // deleted and made again under its name between two reconciles
	}
	if !run.DeletionTimestamp.IsZero() {
		r.forgetRun(run.UID)
		return r.reconcileDelete(ctx, run)
	}
	before := run.DeepCopy()
	now := r.Clock.Now()

	// 2.
	if isFinished(run) {
		r.seen.forget(run.UID) // level-based: whatever a read that ended after the finish put
		defer func() {
			run.Status = composeFinished(run)
			reterr = errors.Join(reterr, r.writeStatus(ctx, before, run, now))
		}()
		// 3. A Workload whose Finished write failed when the run ended is finished now.
		if err := r.finishWorkload(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		return r.reconcileFinished(ctx, run, now)
	}
	s := &scope{run: run, now: now, timeouts: resolveTimeouts(run, r.Timeouts)}
	defer func() {
		run.Status = composeStatus(s)
		r.announce(run, announced(&before.Status, &s.d, &run.Status))
		if isFinished(run) {
			r.forgetRun(run.UID)
		}
		reterr = errors.Join(reterr, r.writeStatus(ctx, before, run, now))
		if reterr == nil && isFinished(run) {
			// The quota goes back to the queue as the run ends, not at its next reconcile.
			reterr = r.finishWorkload(ctx, run)
		}
	}()
	if run.Status.Phase == "" {
		s.enter(v1alpha1.PhasePending, v1alpha1.ReasonAccepted, v1alpha1.MessageAccepted)
	}
	if run.Spec.Target.External == nil && !controllerutil.ContainsFinalizer(run, targetFinalizer) {
		// Added before anything cross-namespace exists, so nothing is ever left behind. Nothing
		// was written to status yet: it is composed once, at the end.
		controllerutil.AddFinalizer(run, targetFinalizer)
		if err := r.Update(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		before.Finalizers, before.ResourceVersion = run.Finalizers, run.ResourceVersion
	}

	// 4.
	if err := r.load(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	result, err := r.runPhases(ctx, s)
	// 5.
	if err == nil && (s.failure != nil || s.stop != nil) {
		result = r.finish(ctx, s, result)
	}
	return result, err
}

// announce records each standing change of a reconcile as an event and in the phase metric.
func (r *Reconciler) announce(run *v1alpha1.TestRun, changes []announcement) {
	for _, c := range changes {
		phaseTransitions.WithLabelValues(string(c.phase)).Inc()
		r.recorder.Eventf(run, nil, c.eventType, c.reason, string(c.phase), "%s", c.message)
	}
}

func (r *Reconciler) runPhases(ctx context.Context, s *scope) (ctrl.Result, error) {
	phases := []phaseFunc{
		// Before anything is provisioned: a missing baseline (onMissing Fail) ends the run here.
		r.reconcileBaseline,
		r.reconcileProfile,
		r.reconcilePermission,
		r.reconcileSharedNamespace,
		r.reconcileScript,
		// The runner count, once: the pre-flight and the runners are made from it.
		r.reconcileParallelism,
		// Before anything that holds a pod: a queued run waits here until Kueue admits it.
		r.reconcileQueue,
		// Creates the pre-flight and records its verdict without waiting for it: the target
		// and runners are provisioned meanwhile, and awaitPreflight holds the start.
		r.reconcilePreflight,
		r.reconcileTargetLimit,
		r.reconcileTarget,
		r.reconcileRunners,
		r.awaitPreflight,
		r.reconcileStart,
		r.reconcileTargetPresent,
		// Replaces lost runners (spec.runnerLoss) before reconcileRun judges the fleet.
		r.reconcileReplace,
		r.reconcileBudgets,
		r.reconcileRun,
		r.reconcileCollect,
	}
	for _, phase := range phases {
		result, err := phase(ctx, s)
		if err != nil {
			logf.FromContext(ctx).Error(err, "reconcile phase failed", "phase", s.run.Status.Phase)
			return ctrl.Result{}, err
		}
		if s.failure != nil || !result.IsZero() {
			return result, nil
		}
	}
	return ctrl.Result{}, nil
}

func isFinished(run *v1alpha1.TestRun) bool {
	return run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed
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
	if err := mgr.Add(phases.readWhileRunning(mgr.GetClient())); err != nil {
		return err
	}
	if err := mgr.Add(r.finals); err != nil {
		return err
	}
	if err := mgr.Add(r.scripts); err != nil {
		return err
	}
	if err := mgr.Add(r.calls); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Kueue {
		// Kueue's admission of a queued run wakes it; without Kueue installed nothing is watched.
		b = b.Owns(&kueue.Workload{})
	}
	return b.
		For(&v1alpha1.TestRun{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionPredicate()))).
		Owns(&batchv1.Job{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(byTestRunLabels)).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(byTestRunLabels)).
		Watches(&v1alpha1.Profile{}, handler.EnqueueRequestsFromMapFunc(r.waitingOnProfile)).
		WatchesRawSource(source.Channel(r.finals.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		WatchesRawSource(source.Channel(r.scripts.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		WatchesRawSource(source.Channel(r.calls.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.TestRun]{})).
		Named("testrun").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
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

// waitingOnProfile wakes the TestRuns that name a Profile when it appears or changes, until
// they fixed it in status.profile: after that it means nothing to them.
func (r *Reconciler) waitingOnProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.TestRunList
	if err := r.List(ctx, &list, client.MatchingFields{profileIndex: strings.ToLower(o.GetName())}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if !isFinished(&list.Items[i]) && list.Items[i].Status.Profile == nil {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
