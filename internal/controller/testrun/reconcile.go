package testrun

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
)

// phaseFunc is one step of a reconcile. It returns a non-zero Result when the run must wait
// there, records a failure in the scope instead of acting on it, and is idempotent.
type phaseFunc func(ctx context.Context, s *decide.Scope) (ctrl.Result, error)

// Reconcile
//  1. loads the TestRun live; deletion ends here, and so does a dispatched run Kueue handed to
//     a worker cluster (dispatch.go);
//  2. composes the status once, deferred (decide.ComposeStatus: from the scope and the decision), and
//     patches it;
//  3. leaves finished runs alone but for TTL and target cleanup;
//  4. loads the world into the scope, runs the phases in order until one waits or fails; they
//     create what is missing and record what they decided;
//  5. acts on a failure or stop decision in Finish.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	// 1. From the API server rather than the cache: the status records what this operator did
	// (started the runners, when), and a reconcile woken by a pod event must not decide on a
	// copy that predates its own last write.
	run := &v1alpha1.TestRun{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, run); err != nil {
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
		return r.ReconcileDelete(ctx, run)
	}
	now := r.Clock.Now()
	if handed, result, err := r.handedOver(ctx, run, now); handed || err != nil {
		return result, err
	}
	before := run.DeepCopy()

	// 2.
	if decide.IsFinished(run) {
		r.Seen.Forget(run.UID) // level-based: whatever a read that ended after the finish put
		var kept *decide.KeptTarget
		if k, ok := decide.KeepOf(run, r.MaxKeptTarget, now); ok {
			kept = &k
		}
		defer func() {
			run.Status = decide.ComposeFinished(run, kept)
			reterr = errors.Join(reterr, r.writeStatus(ctx, before, run, now))
		}()
		// 3. A Workload whose Finished write failed when the run ended is finished now.
		if err := r.FinishWorkload(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		return r.ReconcileFinished(ctx, run, now, kept)
	}
	s := &decide.Scope{Run: run, Now: now, Timeouts: decide.ResolveTimeouts(run, r.Timeouts)}
	defer func() {
		run.Status = decide.ComposeStatus(s)
		r.announce(run, decide.Announced(&before.Status, &s.Decided, &run.Status))
		if decide.IsFinished(run) {
			r.forgetRun(run.UID)
		}
		reterr = errors.Join(reterr, r.writeStatus(ctx, before, run, now))
		if reterr == nil && decide.IsFinished(run) {
			// The quota goes back to the queue as the run ends, not at its next reconcile.
			reterr = r.FinishWorkload(ctx, run)
		}
	}()
	if run.Status.Phase == "" {
		s.Enter(v1alpha1.PhasePending, v1alpha1.ReasonAccepted, v1alpha1.MessageAccepted)
	}
	// A dispatched run provisions nothing here: its target is the worker's (and so is the finalizer).
	// A zoned run's zone runs carry no owner reference (provision/zones.go): it deletes them.
	ownsBeyondGC := run.Spec.Target.External == nil || len(run.Spec.Zones) > 0
	if ownsBeyondGC && run.Spec.ManagedBy == "" && !controllerutil.ContainsFinalizer(run, runenv.TargetFinalizer) {
		// Added before anything cross-namespace exists, so nothing is ever left behind. Nothing
		// was written to status yet: it is composed once, at the end.
		controllerutil.AddFinalizer(run, runenv.TargetFinalizer)
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
	if err == nil && (s.Failure != nil || s.Stop != nil) {
		result = r.Finish(ctx, s, result)
	}
	return result, err
}

// announce records each standing change of a reconcile as an event and in the phase metric.
func (r *Reconciler) announce(run *v1alpha1.TestRun, changes []decide.Announcement) {
	for _, c := range changes {
		runenv.PhaseTransitions.WithLabelValues(string(c.Phase)).Inc()
		r.Recorder.Eventf(run, nil, c.EventType, c.Reason, string(c.Phase), "%s", c.Message)
	}
}

func (r *Reconciler) runPhases(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	phases := []phaseFunc{
		// admit. Before anything is provisioned: a missing baseline (onMissing Fail) ends the run here.
		r.ReconcileBaseline,
		r.ReconcileProfile,
		r.ReconcilePermission,
		r.ReconcileSharedNamespace,
		r.ReconcileScript,
		// Once the script's digest is known: a baseline of another experiment fails the run here.
		r.ReconcileBaselineShape,
		// The runner count, once: the pre-flight and the runners are made from it.
		r.ReconcileParallelism,
		// Before anything that holds a pod: a queued run waits here until Kueue admits it.
		r.ReconcileQueue,
		// A zoned run's other zones are dispatched to their clusters (Kueue's MultiKueue) while
		// this one provisions; the start waits for every zone.
		r.ReconcileZones,
		// provision. Room for the runners under the namespace's cap first: a waiting run holds no pod.
		r.ReconcileRunnerLimit,
		// Creates the pre-flight and records its verdict without waiting for it: the target and
		// runners are provisioned meanwhile, and AwaitPreflight holds the start.
		r.ReconcilePreflight,
		r.ReconcileTargetLimit,
		// The target charged to the run's namespace's quota before it is made, and while it runs.
		r.ReconcileTargetCharge,
		r.ReconcileTarget,
		r.ReconcileRunners,
		r.AwaitPreflight,
		// drive.
		r.ReconcileStart,
		r.ReconcileTargetPresent,
		// Replaces lost runners (spec.runnerLoss) before ReconcileRun judges the fleet.
		r.ReconcileReplace,
		r.ReconcileBudgets,
		r.ReconcileRun,
		// collect.
		r.ReconcileCollect,
	}
	if s.Run.Spec.ManagedBy == v1alpha1.ManagedByMultiKueue {
		phases = r.dispatchPhases()
	}
	for _, phase := range phases {
		result, err := phase(ctx, s)
		if err != nil {
			logf.FromContext(ctx).Error(err, "reconcile phase failed", "phase", s.Run.Status.Phase)
			return ctrl.Result{}, err
		}
		if s.Failure != nil || !result.IsZero() {
			return result, nil
		}
	}
	return ctrl.Result{}, nil
}
