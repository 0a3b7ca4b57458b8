package capacityplan

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// loadSizing reads what the summary's memory bound, the size model and the answer need: the
// spec.memoryFrom runs (same namespace; a missing one is left out and named in no figure) and
// the Profiles of spec.profiles and spec.predict.
func (r *Reconciler) loadSizing(ctx context.Context, p *v1alpha1.CapacityPlan, s *scope) error {
	for _, name := range p.Spec.MemoryFrom {
		run := v1alpha1.TestRun{}
		switch err := r.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, &run); {
		case err == nil:
			s.stability = append(s.stability, run)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	s.profiles = map[string]v1alpha1.ProfileSpec{}
	for _, name := range append(slices.Clone(p.Spec.Profiles), p.Spec.Predict...) {
		key := strings.ToLower(name)
		if _, seen := s.profiles[key]; seen {
			continue
		}
		prof := v1alpha1.Profile{}
		switch err := r.Get(ctx, client.ObjectKey{Name: key}, &prof); {
		case err == nil:
			s.profiles[key] = prof.Spec
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	return nil
}

// plansReadingMemoryOf wakes the plans of the run's namespace that name it in spec.memoryFrom:
// a stability run that ends after the plan changes its memory bound.
func (r *Reconciler) plansReadingMemoryOf(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.CapacityPlanList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if slices.Contains(list.Items[i].Spec.MemoryFrom, o.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
