package admit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// ReconcileProfile waits for the Profile that sizes the target (GitOps applies in any order),
// then fixes it for the run: its copy goes into status.profile, once its namespaceSelector
// admits the TestRun's namespace, and the run reads only that copy from then on.
func (r *Stage) ReconcileProfile(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Status.Profile != nil || (run.Spec.Target.External != nil && run.Spec.Profile == "") {
		return ctrl.Result{}, nil
	}
	if s.LiveProfile != nil {
		return ctrl.Result{}, r.fixProfile(ctx, s)
	}
	deadline := s.ProvisioningDeadline()
	msg := fmt.Sprintf(v1alpha1.MessageProfileNotFound, run.Spec.Profile)
	if rc.Expired(s.Now, deadline) {
		s.Fail(v1alpha1.ReasonProfileNotFound, msg)
		return ctrl.Result{}, nil
	}
	s.Enter(v1alpha1.PhasePending, v1alpha1.ReasonProfileNotFound, msg+fmt.Sprintf(v1alpha1.MessageWaitingUntil, deadline.UTC().Format(time.RFC3339)))
	return rc.WaitUntil(s.Now, deadline, 0), nil
}

// fixProfile records the Profile's snapshot in status.profile, checking its namespaceSelector
// first: the check is made on the Profile as copied, and a selector changed later does not
// undo a run. A run that started before the operator kept snapshots was checked then.
func (r *Stage) fixProfile(ctx context.Context, s *decide.Scope) error {
	if s.SnapshotErr != nil {
		s.Fail(v1alpha1.ReasonInvalidTarget, s.SnapshotErr.Error())
		return nil
	}
	run := s.Run
	if !s.ConditionTrue(v1alpha1.ConditionTargetReady) && !s.Started() {
		ns := &corev1.Namespace{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: run.Namespace}, ns); err != nil {
			return err
		}
		if why := target.NotPermitted(run, ns, s.LiveProfile, r.DefaultPodSecurity); why != "" {
			s.Fail(v1alpha1.ReasonNotPermitted, why)
			return nil
		}
	}
	s.Decided.Profile = s.Snapshot
	return nil
}

// ReconcilePermission refuses, before anything is made, a TestRun that asks the operator for
// more than its own namespace may have (target.NotPermitted). The namespace is read around the
// cache: it is the user's, not fleetbench's.
func (r *Stage) ReconcilePermission(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if s.ConditionTrue(v1alpha1.ConditionTargetReady) || s.Started() {
		return ctrl.Result{}, nil // judged before provisioning; a label changed later does not undo a run
	}
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: run.Namespace}, ns); err != nil {
		return ctrl.Result{}, err
	}
	if why := target.NotPermitted(run, ns, s.Profile, r.DefaultPodSecurity); why != "" {
		s.Fail(v1alpha1.ReasonNotPermitted, why)
		return ctrl.Result{}, nil
	}
	// The chart's admission policy refuses this at apply; where it is not installed, here.
	if why := target.EgressOutside(run, r.EgressAllowList); why != "" {
		s.Fail(v1alpha1.ReasonEgressNotAllowed, why)
	}
	return ctrl.Result{}, nil
}
