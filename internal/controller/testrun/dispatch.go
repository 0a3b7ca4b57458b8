package testrun

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
)

// A run Kueue's MultiKueue dispatches (spec.managedBy, api/v1alpha1/testrun_dispatch.go) is
// only queued in this cluster: the steps that size its Workload, then the queue.
func (r *Reconciler) dispatchPhases() []phaseFunc {
	return []phaseFunc{r.ReconcileProfile, r.ReconcileParallelism, r.ReconcileQueue}
}

// handedOver says whether run is a dispatched run whose worker cluster Kueue chose: the
// worker's fleetbench runs it, and MultiKueue copies its status here (and deletes the worker's
// copy once it ended), so nothing here may write it. Only spec.ttlSecondsAfterFinished is
// this cluster's to honour, once the copied status says the run ended.
func (r *Reconciler) handedOver(ctx context.Context, run *v1alpha1.TestRun, now time.Time) (bool, ctrl.Result, error) {
	if run.Spec.ManagedBy != v1alpha1.ManagedByMultiKueue || !r.Kueue {
		return false, ctrl.Result{}, nil
	}
	wl := &kueue.Workload{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.Workload(run.Name)}, wl)
	if apierrors.IsNotFound(err) {
		return false, ctrl.Result{}, nil
	}
	if err != nil {
		return true, ctrl.Result{}, err
	}
	if !decide.ControlledBy(wl, run.UID) || !queue.HandedToWorker(wl) {
		return false, ctrl.Result{}, nil
	}
	if worker := ptr.Deref(wl.Status.ClusterName, ""); worker != "" && run.Annotations[v1alpha1.AnnotationWorkerCluster] != worker {
		// Said once, where kubectl shows it: the run's status is that worker's from now on.
		metav1.SetMetaDataAnnotation(&run.ObjectMeta, v1alpha1.AnnotationWorkerCluster, worker)
		if err := r.Update(ctx, run); err != nil {
			return true, ctrl.Result{}, client.IgnoreNotFound(err)
		}
		r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, v1alpha1.ReasonDispatched, "Dispatch",
			"Kueue's MultiKueue handed the run to worker cluster %s: its fleetbench runs it, and the status here is that cluster's", worker)
	}
	if !decide.IsFinished(run) || run.Status.CompletionTime == nil {
		return true, ctrl.Result{}, nil
	}
	left, expired := rc.TTLLeft(&run.Status.CompletionTime.Time, run.Spec.TTLSecondsAfterFinished, now)
	switch {
	case expired:
		return true, ctrl.Result{}, r.DeleteExpired(ctx, run)
	case run.Spec.TTLSecondsAfterFinished == nil:
		return true, ctrl.Result{}, nil
	}
	return true, rc.After(left), nil
}

// dispatchedEndPredicate wakes a dispatched run when MultiKueue's copy of the worker's status
// says it ended (status changes wake no other run: this controller writes them itself), so
// its TTL counts from then.
func dispatchedEndPredicate() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		run, ok := e.ObjectNew.(*v1alpha1.TestRun)
		return ok && run.Spec.ManagedBy == v1alpha1.ManagedByMultiKueue && decide.IsFinished(run)
	}}
}
