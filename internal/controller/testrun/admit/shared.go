package admit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/children"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// A manager with --target-namespace puts every target into one namespace an admin made: it
// never creates, labels or deletes that namespace, and removes exactly a run's own objects.

// PollShared is how often what no watch reports is looked at again: the admin's namespace
// appearing, a shared namespace's objects of a run going.
const PollShared = 5 * time.Second

// ReconcileSharedNamespace waits for the shared target namespace to exist, and refuses a target
// its Pod Security would not admit (target.SharedNamespaceRefuses), before anything is made. It
// is read around the cache: the namespace is the admin's.
func (r *Stage) ReconcileSharedNamespace(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if !s.SharedTarget || s.ConditionTrue(v1alpha1.ConditionTargetReady) || s.Started() {
		return ctrl.Result{}, nil
	}
	ns := &corev1.Namespace{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: s.TargetNS}, ns)
	if apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero()) {
		// Nothing watches the admin's namespace: poll for it. Nothing can be made until it is.
		return s.WaitOrFail(s.ProvisioningDeadline(), PollShared, v1alpha1.PhasePending, v1alpha1.ReasonTargetNamespaceNotFound,
			v1alpha1.ReasonTargetNamespaceNotFound, fmt.Sprintf("namespace %s, where this operator puts every target (its --target-namespace), "+
				"does not exist (or is being deleted)", s.TargetNS), fmt.Sprintf("; an admin must create it (kubectl create namespace %s), or install the operator "+
				"with another targetNamespace", s.TargetNS)), nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if why := target.SharedNamespaceRefuses(run, ns, r.DefaultPodSecurity); why != "" {
		s.Fail(v1alpha1.ReasonNotPermitted, why)
	}
	return ctrl.Result{}, nil
}

// ReleaseTarget deletes run's target, and the pod that charged it to the run's namespace: its
// own namespace, or in a shared one exactly its objects, found by label (its pull Secret copies by name: the manager may not list Secrets).
// Each is read live first and deleted only if provably the run's (target.OwnedBy), with a UID
// precondition, so neither another tenant's namespace of a look-alike name nor one made again
// since is ever hit. It returns what of the run's was still there. Pods count only withPods:
// they go through the garbage collector after their Deployment, which a lost node can hold up.
func (r *Stage) ReleaseTarget(ctx context.Context, run *v1alpha1.TestRun, withPods bool) ([]string, error) {
	if err := r.releaseCharge(ctx, run); err != nil {
		return nil, err
	}
	ns, shared := r.TargetHome(run)
	if !shared {
		err := r.deleteIfOwned(ctx, run, &corev1.Namespace{}, client.ObjectKey{Name: ns})
		return nil, err
	}
	var left []string
	for _, list := range ReleasedLists(withPods) {
		// Live, not cached: a reconcile right after the last create must find it.
		if err := r.APIReader.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(target.RunLabels(run))); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			obj := item.(client.Object)
			if !target.OwnedBy(obj, run) {
				continue // an earlier run's of the same name: the orphan sweeper's
			}
			left = append(left, fmt.Sprintf("%T %s", obj, obj.GetName()))
			if _, pod := obj.(*corev1.Pod); pod || !obj.GetDeletionTimestamp().IsZero() {
				continue // pods follow their Deployment
			}
			if err := rc.DeleteExact(ctx, r.Client, obj); err != nil {
				return nil, err
			}
		}
	}
	for _, ref := range run.Spec.Target.ImagePullSecrets {
		key := client.ObjectKey{Namespace: ns, Name: target.PullSecretName(run, ref.Name, target.Options{SharedNamespace: true})}
		if err := r.deleteIfOwned(ctx, run, &corev1.Secret{}, key); err != nil {
			return nil, err
		}
	}
	return left, nil
}

// releaseCharge deletes the pod that charged the target to the run's namespace
// (provision.ReconcileTargetCharge) when it is the run's: the quota is the namespace's again. The
// cached copy will do: one made a moment ago wakes the run through its labels, and goes then.
func (r *Stage) releaseCharge(ctx context.Context, run *v1alpha1.TestRun) error {
	pod := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.TargetChargePod(run.Name)}, pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !decide.ControlledBy(pod, run.UID) || !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	return rc.DeleteExact(ctx, r.Client, pod)
}

// deleteIfOwned reads key live into obj and deletes it if it is run's (target.OwnedBy) and not
// going already.
func (r *Stage) deleteIfOwned(ctx context.Context, run *v1alpha1.TestRun, obj client.Object, key client.ObjectKey) error {
	if err := r.APIReader.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !target.OwnedBy(obj, run) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	return rc.DeleteExact(ctx, r.Client, obj)
}

// SharedConflict says that obj, named as this run's in the shared target namespace, is not.
func SharedConflict(s *decide.Scope, obj client.Object) string {
	return fmt.Sprintf("%T %s in the shared target namespace %s exists and was not made for this TestRun (it does not carry its UID in label %s); "+
		"nothing was touched: an earlier TestRun of this name left it (the operator removes it after a grace), create the TestRun again then",
		obj, obj.GetName(), s.TargetNS, naming.LabelTestRunUID)
}

// ReleasedLists are what a release from a shared target namespace lists (children.Released):
// the kinds it deletes and, with waited, the pods it waits for.
func ReleasedLists(waited bool) []client.ObjectList {
	return children.Released(children.Kinds, waited)
}
