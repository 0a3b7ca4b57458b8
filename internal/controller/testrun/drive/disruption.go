package drive

import (
	"context"
	"sync"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// While the load runs, PodDisruptionBudgets that allow no voluntary disruption cover the
// target's pods and, under spec.runnerLoss.drain Wait, the runners: kubectl drain (and a node
// upgrade that drains) waits for the run's end instead of evicting them. Under drain Replace the
// runners have none, and a drained runner is replaced like any lost one. A target pod that
// restarts or is rescheduled anyway (a crash, a lost node) is counted as before. The budgets are
// made here once the runners started and deleted when the run ends; the manager reads them only
// by name (get), so it neither lists nor watches them.

const roleBudget = "budget"

// BudgetMarks remembers, per run, that its budgets were made (so each reconcile does not ask
// again) or deleted. Memory only: after a restart each is made, or deleted, once more.
type BudgetMarks struct {
	mu    sync.Mutex
	marks map[types.UID]bool // true: made; false: deleted
}

func (b *BudgetMarks) Get(uid types.UID) (made, known bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	made, known = b.marks[uid]
	return made, known
}

func (b *BudgetMarks) set(uid types.UID, made bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.marks == nil {
		b.marks = map[types.UID]bool{}
	}
	b.marks[uid] = made
}

func (b *BudgetMarks) Forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.marks, uid)
}

// budgetObjects are the run's PodDisruptionBudgets as built.
func (r *Stage) budgetObjects(run *v1alpha1.TestRun, targetNS string, shared bool) []*policyv1.PodDisruptionBudget {
	none, all := intstr.FromInt32(0), intstr.FromInt(run.RunnerCount())
	var out []*policyv1.PodDisruptionBudget
	if runners.Drain(&run.Spec, run.RunnerCount()) == v1alpha1.DrainWait {
		out = append(out, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: naming.RunnerBudget(run.Name), Namespace: run.Namespace,
				Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: roleBudget}},
			// minAvailable as a count: a Job has no scale subresource, so the disruption controller
			// cannot work out maxUnavailable (or a percentage) for its pods and the budget would
			// stay uncomputed, every eviction hanging instead of being refused.
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &all, Selector: &metav1.LabelSelector{MatchLabels: runners.RunnerLabels(run)}},
		})
	}
	if targetNS != "" {
		name := naming.TargetBudget
		if shared {
			name = naming.SharedTargetObject(run.Namespace, run.Name, roleBudget)
		}
		labels := target.RunLabels(run)
		labels[naming.LabelTestRunUID] = string(run.UID)
		out = append(out, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: targetNS, Labels: labels},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &none, Selector: &metav1.LabelSelector{MatchLabels: target.RunLabels(run)}},
		})
	}
	return out
}

// ReconcileBudgets makes the run's budgets once the load started; it never waits.
func (r *Stage) ReconcileBudgets(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	if !s.Started() || s.Run.Status.Reason == v1alpha1.ReasonStoppingRunners {
		return ctrl.Result{}, nil
	}
	if _, known := r.Budgets.Get(s.Run.UID); known {
		return ctrl.Result{}, nil
	}
	if err := r.createDisruptionBudgets(ctx, s); err != nil {
		// A cluster that refuses budgets still runs the load; drains then evict as before.
		logf.FromContext(ctx).Info("could not make the run's PodDisruptionBudgets; a drain will evict its pods", "error", err.Error())
	}
	r.Budgets.set(s.Run.UID, true)
	return ctrl.Result{}, nil
}

// createDisruptionBudgets makes every PodDisruptionBudget of a run: the one place they are made.
func (r *Stage) createDisruptionBudgets(ctx context.Context, s *decide.Scope) error {
	for _, pdb := range r.budgetObjects(s.Run, s.TargetNS, s.SharedTarget) {
		if pdb.Namespace == s.Run.Namespace {
			if err := controllerutil.SetControllerReference(s.Run, pdb, r.Scheme); err != nil {
				return err
			}
		}
		if err := r.Create(ctx, pdb); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// DeleteBudgets deletes the run's budgets once it ended, each only if it is the run's.
func (r *Stage) DeleteBudgets(ctx context.Context, run *v1alpha1.TestRun) error {
	if made, known := r.Budgets.Get(run.UID); known && !made {
		return nil
	}
	targetNS, shared := "", false
	if run.Spec.Target.External == nil && run.Status.TargetNamespace != "" {
		targetNS = run.Status.TargetNamespace
		shared = r.TargetNamespace != ""
	}
	for _, want := range r.budgetObjects(run, targetNS, shared) {
		pdb := &policyv1.PodDisruptionBudget{}
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), pdb)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !decide.ControlledBy(pdb, run.UID) && pdb.Labels[naming.LabelTestRunUID] != string(run.UID) {
			continue // someone else's of that name
		}
		if err := rc.DeleteExact(ctx, r.Client, pdb); err != nil {
			return err
		}
	}
	r.Budgets.set(run.UID, false)
	return nil
}
