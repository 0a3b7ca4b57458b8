package testrun

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/reconcile"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// reconcileRunners creates the runner Jobs and waits until all are Ready and paused.
func (r *Reconciler) reconcileRunners(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	if s.started() {
		return ctrl.Result{}, nil
	}
	if run.Status.Phase == v1alpha1.PhasePending || run.Status.Phase == v1alpha1.PhaseProvisioning {
		r.setPhase(run, v1alpha1.PhaseStarting, v1alpha1.ReasonCreatingRunners, fmt.Sprintf("starting %d runners paused", len(s.runners)))
	}
	if err := r.createRunnerJobs(ctx, s); err != nil || s.failure != nil {
		return ctrl.Result{}, err
	}
	if f := s.summary.beforeStartFailure(); f != nil {
		s.failure = f
		return ctrl.Result{}, nil
	}
	if s.summary.counts[runnerReady]+s.summary.counts[runnerSucceeded] == len(s.runners) {
		// Succeeded before the start: an earlier reconcile started it and its status write was lost.
		setCondition(run, v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, "Ready", fmt.Sprintf("all %d runners are Ready and paused", len(s.runners)))
		return ctrl.Result{}, nil
	}
	msg := s.summary.notReady()
	setCondition(run, v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, "NotReady", msg)
	deadline := s.runnersReadyDeadline()
	if rc.Expired(s.now, deadline) {
		s.failure = s.summary.notReadyFailure()
		return ctrl.Result{}, nil
	}
	r.setPhase(run, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners, msg)
	return rc.WaitUntil(s.now, deadline, 0), nil
}

// runnerJobOptions is what every runner Job, and the pre-flight, is built with.
func (r *Reconciler) runnerJobOptions(s *scope) runners.JobOptions {
	run := s.run
	var env []corev1.EnvVar
	switch {
	case run.Spec.Target.External != nil:
		env = target.ExternalEnv(run.Spec.Target.External)
	case s.desired != nil:
		env = s.desired.Env
	}
	return runners.JobOptions{
		Image:           r.RunnerImage,
		ConfigMap:       naming.ScriptConfigMap(run.Name),
		HasConfig:       run.Spec.Load != nil,
		TargetEnv:       env,
		TargetNamespace: s.targetNS,
		// The kubelet ends a runner the operator has lost track of.
		ActiveDeadlineSeconds: int64((runLength(run, s.timeouts) + s.timeouts.RunnersReady).Seconds()),
	}
}

// createRunnerJobs creates the Jobs the cache does not show yet.
func (r *Reconciler) createRunnerJobs(ctx context.Context, s *scope) error {
	run := s.run
	opts := r.runnerJobOptions(s)
	for i := range s.runners {
		if s.runners[i].job != nil {
			continue
		}
		job := runners.Job(run, i, len(s.runners), opts)
		if err := controllerutil.SetControllerReference(run, job, r.scheme); err != nil {
			return err
		}
		if err := rc.CreateOrGet(ctx, r.Client, job); err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
				s.fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("runner Job %s was refused: %v", job.Name, err))
				return nil
			}
			return err
		}
		s.runners[i].job = job
	}
	s.summary = classify(s.runners)
	return nil
}
