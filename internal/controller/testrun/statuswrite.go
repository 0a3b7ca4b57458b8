package testrun

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
)

// writeStatus cuts run's status to the CRD's bounds (decide.Bounded: much of it is what the
// tenant's script reported) and patches it. A patch the API server still refuses as Invalid
// would be refused on every reconcile, and the run would never end: it ends Failed
// StatusRejected instead, with a short status, and its runners' Jobs are deleted.
func (r *Reconciler) writeStatus(ctx context.Context, before, run *v1alpha1.TestRun, now time.Time) error {
	run.Status = decide.Bounded(run.Status)
	changed := !equality.Semantic.DeepEqual(before.Status, run.Status)
	err := rc.PatchStatus(ctx, r.Client, before, run, changed)
	if err == nil || !apierrors.IsInvalid(err) {
		return err
	}
	logf.FromContext(ctx).Error(err, "the API server refused the status even cut to the CRD's bounds; ending the run StatusRejected")
	run.Status = decide.ComposeRejected(&run.Status, run.Generation, apiRefusal(err), metav1.NewTime(now))
	r.Finals.Forget(run.UID)
	r.Scripts.Forget(run.UID)
	r.Calls.Forget(run.UID)
	// The load must not go on unwatched; the target goes as for any ended run (reconcileFinished).
	if derr := r.DeleteOwnJobs(ctx, run); derr != nil {
		logf.FromContext(ctx).Info("deleting the runner Jobs of a run whose status was refused failed", "error", derr.Error())
	}
	r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonStatusRejected, string(v1alpha1.PhaseFailed), "%s", run.Status.Message)
	return rc.PatchStatus(ctx, r.Client, before, run, true)
}

// apiRefusal is the API server's own words for a refused write, without the client's wrapping.
func apiRefusal(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}
