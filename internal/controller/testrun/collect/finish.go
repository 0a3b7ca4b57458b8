package collect

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// Finish acts on what the phases decided, and is the only place that stops runners and
// deletes their Jobs. A failure stops every runner still running (their results are kept) and
// ends the run Failed; before the start a pending runner would start k6 paused later and wait
// for a start that never comes, so its Job is deleted. A stop decision stops the runners and,
// once they had their minute to flush, deletes the Jobs of those still running.
func (r *Stage) Finish(ctx context.Context, s *decide.Scope, phaseResult ctrl.Result) ctrl.Result {
	if !r.StopRunners(ctx, s) && s.Failure != nil {
		return rc.After(runio.RunnerCallLimit) // the run ends once its runners got their Stop (stop.go)
	}
	if s.Failure == nil {
		if s.Stop.DeleteJobs {
			r.deleteActiveJobs(ctx, s)
		}
		return phaseResult
	}
	if !s.Started() {
		r.deleteActiveJobs(ctx, s)
		if err := r.DeletePreflightUnlessRefused(ctx, s.Run, s.Conditions()); err != nil {
			logf.FromContext(ctx).Info("could not delete the pre-flight Job", "error", err.Error())
		}
	}
	r.ReleaseOnFailure(ctx, s)
	e := decide.FailedEnding(*s.Failure)
	s.Decided.Ending = &e // composeStatus ends the run Failed
	return decide.AfterEnd()
}

// deleteActiveJobs deletes the Jobs of runners that have not ended.
func (r *Stage) deleteActiveJobs(ctx context.Context, s *decide.Scope) {
	for _, rs := range s.Runners {
		if rs.Job != nil && !decide.Terminated(rs.Pod) {
			_ = rc.DeleteExact(ctx, r.Client, rs.Job)
		}
	}
}

// ReconcileFinished deletes the TestRun when its TTL has passed and releases the target
// per the cleanup policy; a kept target (kept, decide.KeepOf) once its time ran out, saying so.
// DeleteExpired deletes the ended run whose spec.ttlSecondsAfterFinished passed, saying so.
func (r *Stage) DeleteExpired(ctx context.Context, run *v1alpha1.TestRun) error {
	r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, "TTLExpired", "Delete", "deleting after ttlSecondsAfterFinished=%d", *run.Spec.TTLSecondsAfterFinished)
	return client.IgnoreNotFound(r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

func (r *Stage) ReconcileFinished(ctx context.Context, run *v1alpha1.TestRun, now time.Time, kept *decide.KeptTarget) (ctrl.Result, error) {
	var completion *time.Time
	if run.Status.CompletionTime != nil {
		completion = &run.Status.CompletionTime.Time
	}
	left, expired := rc.TTLLeft(completion, run.Spec.TTLSecondsAfterFinished, now)
	if run.Status.StartTime != nil {
		// The load ended: drains go ahead again (disruption.go).
		if err := r.DeleteBudgets(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		if !controllerutil.ContainsFinalizer(run, runenv.TargetFinalizer) {
			r.Budgets.Forget(run.UID) // no reconcileDelete will (an external target's run)
		}
	}
	// Level-based as well as in finish: a pre-flight Job the cache did not hold yet when the
	// run failed, one that passed in the reconcile the run failed, or one made again by a
	// reconcile whose status write was lost wakes the ended run through its own events and is
	// deleted here.
	if run.Status.StartTime == nil {
		if err := r.DeletePreflightUnlessRefused(ctx, run, run.Status.Conditions); err != nil {
			return ctrl.Result{}, err
		}
	}
	// Its zones' runs are done with once it ended: their results are merged, or never will be.
	if err := r.DeleteZones(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if expired {
		return ctrl.Result{}, r.DeleteExpired(ctx, run)
	}
	release := run.Spec.Target.External == nil && decide.TargetPolicy(run) == v1alpha1.TargetDeleteAfterRun
	if kept != nil && kept.Expired {
		// Once: from the next reconcile TargetKept False makes the policy DeleteAfterRun.
		c := kept.Condition(run.Generation)
		r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, v1alpha1.ReasonKeepExpired, "Release", "%s", c.Message)
		release = true
	}
	if kept != nil && !kept.Expired {
		return rc.After(left, kept.Until.Sub(now)), nil
	}
	if release {
		remaining, err := r.ReleaseTarget(ctx, run, true)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(remaining) > 0 {
			// Until the last of a shared namespace's objects is gone; no watch reports every kind.
			return rc.After(left, admit.PollShared), nil
		}
	}
	return ctrl.Result{RequeueAfter: left}, nil
}

// ReconcileDelete removes the target (releaseTarget), which owner references cannot reach, and
// the runner Jobs and script ConfigMap, which they would reach only when the garbage collector
// gets to them: a deleted TestRun stops its load at once. Once its objects in a shared target
// namespace are gone (their pods follow through the garbage collector), it lets the TestRun go.
func (r *Stage) ReconcileDelete(ctx context.Context, run *v1alpha1.TestRun) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(run, runenv.TargetFinalizer) {
		return ctrl.Result{}, nil
	}
	remaining, err := r.ReleaseTarget(ctx, run, false)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Runner and pre-flight Jobs, and the script, script copy and result ConfigMaps: owner references would
	// do it where a garbage collector runs; this does not wait for one.
	if err := r.DeleteOwnJobs(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	for _, name := range []string{naming.ScriptConfigMap(run.Name), naming.ScriptCopyConfigMap(run.Name), naming.ResultConfigMap(run.Name)} {
		cm := &corev1.ConfigMap{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm)
		if err == nil && decide.ControlledBy(cm, run.UID) {
			err = rc.DeleteExact(ctx, r.Client, cm)
		}
		if err := client.IgnoreNotFound(err); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.DeleteBudgets(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.DeleteZones(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		return rc.After(time.Second), nil // deleted just now: gone on the next look
	}
	r.Budgets.Forget(run.UID)
	controllerutil.RemoveFinalizer(run, runenv.TargetFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, run))
}

// DeleteOwnJobs deletes the runner and pre-flight Jobs this TestRun controls; a Job that only
// carries its labels is someone else's.
func (r *Stage) DeleteOwnJobs(ctx context.Context, run *v1alpha1.TestRun) error {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(run.Namespace), client.MatchingLabels{naming.LabelTestRun: run.Name}); err != nil {
		return err
	}
	for i := range jobs.Items {
		if decide.ControlledBy(&jobs.Items[i], run.UID) {
			if err := rc.DeleteExact(ctx, r.Client, &jobs.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
