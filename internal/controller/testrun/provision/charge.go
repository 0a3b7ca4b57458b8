package provision

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// pollQuota is how often a run waiting for room in its namespace's quota tries again: the
// manager watches no tenant's ResourceQuota, so nothing tells it when room frees.
const pollQuota = 5 * time.Second

// ReconcileTargetCharge charges the target to the run's namespace before the target is made:
// the target runs elsewhere (a namespace of its own, or the admin's shared one), so a
// never-scheduled pod in the run's namespace carries its requests and limits (target.Charge)
// and the API server's quota and LimitRange admission judge it there. While the quota has no
// room the run waits Pending TargetQuotaExceeded, until the provisioning deadline. The pod is
// kept while the run goes on: one found gone, ended or scheduled (its gate lifted by hand) is
// made again, and a run whose quota no longer has room for it fails TargetQuotaExceeded, so
// deleting the pod frees no quota the target holds. The release of the target deletes it
// (admit.ReleaseTarget), and the garbage collector with the TestRun.
func (r *Stage) ReconcileTargetCharge(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Spec.Target.External != nil || s.Desired == nil || s.DesiredErr != nil {
		return ctrl.Result{}, nil // nothing to charge, or ReconcileTarget fails the run
	}
	want := target.Charge(run, s.Desired, r.chargeImage(run))
	have := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case err == nil && !decide.ControlledBy(have, run.UID):
		s.Fail(v1alpha1.ReasonTargetChargeRefused, squatted(have))
		return ctrl.Result{}, nil
	case err == nil && charging(have):
		return ctrl.Result{}, nil
	case err == nil:
		// Ended, scheduled or going: it charges nothing now. Made again once gone (its deletion
		// wakes the run); the target goes on meanwhile, as it did before the pod was touched.
		if have.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, rc.DeleteExact(ctx, r.Client, have)
		}
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	return r.createTargetCharge(ctx, s, want)
}

// createTargetCharge creates the charge pod, controlled by the run, and acts on the answer.
func (r *Stage) createTargetCharge(ctx context.Context, s *decide.Scope, pod *corev1.Pod) (ctrl.Result, error) {
	run := s.Run
	if err := controllerutil.SetControllerReference(run, pod, r.Scheme); err != nil {
		return ctrl.Result{}, err
	}
	err := r.Create(ctx, pod)
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case apierrors.IsAlreadyExists(err):
		// Made a moment ago, not cached yet, or a pod of that name without fleetbench's labels.
		var same corev1.PodList
		if err := r.APIReader.List(ctx, &same, client.InNamespace(run.Namespace), client.MatchingFields{"metadata.name": pod.Name}); err != nil {
			return ctrl.Result{}, err
		}
		if len(same.Items) == 1 && !decide.ControlledBy(&same.Items[0], run.UID) {
			s.Fail(v1alpha1.ReasonTargetChargeRefused, squatted(&same.Items[0]))
		}
		return ctrl.Result{}, nil
	case quotaExceeded(err):
		msg := fmt.Sprintf("the target needs %s of namespace %s's ResourceQuota, which has no room for it (%v)", target.ChargeTotal(pod), run.Namespace, err)
		if run.Status.TargetNamespace != "" || s.Started() {
			s.Fail(v1alpha1.ReasonTargetQuotaExceeded, fmt.Sprintf("pod %s, which charged the running target to the namespace's quota, is gone (deleted, or its "+
				"scheduling gate lifted), and %s; leave that pod in place, and free quota before running again", pod.Name, msg))
			return ctrl.Result{}, nil
		}
		// Pending, or Provisioning when the pod went while the target's namespace was awaited.
		return s.WaitOrFail(s.ProvisioningDeadline(), pollQuota, s.Phase(), v1alpha1.ReasonTargetQuotaExceeded, v1alpha1.ReasonTargetQuotaExceeded, msg,
			"; free quota in the namespace (end another run, or delete what uses it), use a smaller Profile, or ask the namespace's admin for more quota"), nil
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		s.Fail(v1alpha1.ReasonTargetChargeRefused, fmt.Sprintf("the API server refused pod %s, which charges the target (%s) to namespace %s: %v; "+
			"a LimitRange or policy of the namespace refuses what the target asks: use a smaller Profile or smaller components, "+
			"or ask the namespace's admin", pod.Name, target.ChargeTotal(pod), run.Namespace, err))
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// chargeImage is the run's runner image: one the namespace's image policies admit already.
func (r *Stage) chargeImage(run *v1alpha1.TestRun) string {
	if run.Spec.Runner != nil && run.Spec.Runner.Image != "" {
		return run.Spec.Runner.Image
	}
	return r.RunnerImage
}

// charging says whether the charge pod still counts in quota: not going, not ended, and never
// scheduled (the cache keeps a pod's node, not its gates).
func charging(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp.IsZero() && pod.Spec.NodeName == "" &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// quotaExceeded tells a quota's refusal, which waiting may heal, from other refusals. "status
// unknown" is a quota made a moment ago whose usage the controller has not counted yet.
func quotaExceeded(err error) bool {
	msg := err.Error()
	return apierrors.IsForbidden(err) && (strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "status unknown for quota"))
}

// squatted says that pod holds the charge pod's name and is not this run's.
func squatted(pod *corev1.Pod) string {
	return fmt.Sprintf("a Pod named %s exists in namespace %s that this TestRun does not own, under the name of the pod that charges its target "+
		"to the namespace's quota; nothing was touched: delete it, or give the TestRun another name", pod.Name, pod.Namespace)
}
