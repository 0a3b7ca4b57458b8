// Package capacityplan is the CapacityPlan controller, shaped like the kubebuilder CronJob
// tutorial: a parent that creates child TestRuns from its template, finds them through an
// owner index, and rebuilds its table from their status on every pass. What to create and what
// the table says is decided in pkg/plan, without a client.
package capacityplan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/plan"
	"fleetbench.dev/fleetbench/pkg/statusbound"
	"fleetbench.dev/fleetbench/pkg/target"
)

// childrenFinalizer lets a deleted plan stop its children at once, wherever a garbage
// collector is slow or absent; their own finalizer then removes their targets.
const childrenFinalizer = "fleetbench.dev/children"

// ownerIndex indexes TestRuns by the name of the CapacityPlan that controls them.
const ownerIndex = ".metadata.controller.capacityplan"

// Reconciler drives a CapacityPlan: children one cell at a time (or several), and the table.
type Reconciler struct {
	client.Client
	Options
	scheme   *runtime.Scheme
	recorder events.EventRecorder
}

// Options are what main and the tests choose.
type Options struct {
	// TargetNamespace is the TestRun controller's: where set, the children's targets share it,
	// and a target is gone when its objects are, not its namespace.
	TargetNamespace string
}

// New builds the reconciler from the manager; main and the envtest suite both use it.
func New(mgr ctrl.Manager, opts Options) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), Options: opts, scheme: mgr.GetScheme(), recorder: rc.PrintableEvents(mgr.GetEventRecorder("fleetbench"))}
}

// scope is what one reconcile knows of a plan: its cells, and what the world shows of each.
type scope struct {
	cells    []plan.Cell
	children []plan.Child
	// baseline is spec.baseline's plan while the comparison is not written; nil when none of
	// that name exists.
	baseline *v1alpha1.CapacityPlan
	// stability are the spec.memoryFrom runs that exist, in this namespace only.
	stability []v1alpha1.TestRun
	// profiles are the Profiles of spec.profiles and spec.predict that exist, by lower-case
	// name: a predicted profile's size and every profile's price come from them.
	profiles map[string]v1alpha1.ProfileSpec
}

// Reconcile loads the children, lets plan.Decide pick what starts, creates it, and rebuilds
// the status in one patch.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	p := &v1alpha1.CapacityPlan{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, p)
	}
	if !controllerutil.ContainsFinalizer(p, childrenFinalizer) {
		controllerutil.AddFinalizer(p, childrenFinalizer)
		if err := r.Update(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := p.DeepCopy()
	defer func() {
		// The table quotes the children's names, messages and results: tenant-written text.
		statusbound.Printable(&p.Status)
		changed := !equality.Semantic.DeepEqual(before.Status, p.Status)
		reterr = errors.Join(reterr, rc.PatchStatus(ctx, r.Client, before, p, changed))
	}()

	s, err := r.load(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := plan.Decide(&p.Spec, s.cells, s.children)
	// The baseline decides before any child is created: a plan without its baseline
	// (onMissing Fail) starts none. The comparison reads the table as the children show it.
	now := time.Now()
	p.Status.Table = plan.Rows(&p.Spec, p.Name, s.cells, s.children)
	d, step := plan.Baseline(p, s.baseline, d, doneSince(p, s), now)
	if w := plan.RepetitionsWarning(&p.Spec); w != "" && len(d.Create) > 0 && !s.anyChild() {
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, v1alpha1.ReasonRepetitionsTooFew, "Create", "%s", w)
	}
	for _, c := range d.Create {
		child, err := r.createChild(ctx, p, c)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.children[c.Index].Run = child
	}
	return r.report(p, s, d, step, now), nil
}

// anyChild says whether any cell has its child: none before the plan's first children.
func (s *scope) anyChild() bool {
	for _, c := range s.children {
		if c.Run != nil {
			return true
		}
	}
	return false
}

// load reads the children through the owner index, and for the cells without one whether
// their profile exists; for finished children whether their target namespace is gone.
func (r *Reconciler) load(ctx context.Context, p *v1alpha1.CapacityPlan) (*scope, error) {
	s := &scope{cells: plan.Cells(&p.Spec)}
	list, err := r.children(ctx, p)
	if err != nil {
		return nil, err
	}
	byName := map[string]*v1alpha1.TestRun{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	profiles := map[string]bool{}
	s.children = make([]plan.Child, len(s.cells))
	for i, c := range s.cells {
		child := plan.Child{Run: byName[c.Name(p.Name)], TargetGone: true}
		switch {
		case child.Run == nil:
			key := strings.ToLower(c.Profile)
			if _, seen := profiles[key]; !seen {
				err := r.Get(ctx, client.ObjectKey{Name: key}, &v1alpha1.Profile{})
				if err != nil && !apierrors.IsNotFound(err) {
					return nil, err
				}
				profiles[key] = err == nil
			}
			child.ProfileMissing = !profiles[key]
		case child.Run.Spec.Target.External == nil:
			if child.TargetGone, err = r.targetGone(ctx, child.Run); err != nil {
				return nil, err
			}
		}
		s.children[i] = child
	}
	if err := r.loadSizing(ctx, p, s); err != nil {
		return nil, err
	}
	if b := p.Spec.Baseline; b != nil && p.Status.Comparison == nil {
		base := &v1alpha1.CapacityPlan{}
		// Same namespace only: spec.baseline.name has no namespace part.
		switch err := r.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: b.Name}, base); {
		case err == nil:
			s.baseline = base
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	return s, nil
}

// createChild creates the cell's TestRun, controlled by the plan; a second create of the same
// deterministic name finds the first.
func (r *Reconciler) createChild(ctx context.Context, p *v1alpha1.CapacityPlan, c plan.Cell) (*v1alpha1.TestRun, error) {
	spec, err := plan.ChildSpec(&p.Spec, c)
	if err != nil {
		return nil, err
	}
	child := &v1alpha1.TestRun{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name(p.Name), Namespace: p.Namespace, Labels: map[string]string{naming.LabelPlan: p.Name}},
		Spec:       spec,
	}
	if err := controllerutil.SetControllerReference(p, child, r.scheme); err != nil {
		return nil, err
	}
	created, err := rc.CreateOrGetCreated(ctx, r.Client, child)
	if err != nil {
		return nil, fmt.Errorf("creating child %s: %w", child.Name, err)
	}
	if created {
		r.recorder.Eventf(p, child, corev1.EventTypeNormal, "ChildCreated", "Create", "cell %d: profile %s %v repetition %d",
			c.Index, c.Profile, c.ValueMap(p.Spec.Sweep), c.Repetition)
	}
	return child, nil
}

// report rebuilds the status from the cells and children, and writes the comparison with the
// baseline plan once; it asks to be called again while the plan waits for its baseline plan.
func (r *Reconciler) report(p *v1alpha1.CapacityPlan, s *scope, d plan.Decision, step plan.BaselineStep, now time.Time) ctrl.Result {
	st := &p.Status
	st.ObservedGeneration = p.Generation
	st.Table = plan.Rows(&p.Spec, p.Name, s.cells, s.children)
	in := plan.SummaryInput{Spec: &p.Spec, Rows: st.Table, Children: s.children, Stability: s.stability}
	st.Summary = plan.Summarize(in)
	st.Model, st.Answer = nil, nil
	if d.Done == d.Total {
		st.Model = plan.Model(in, st.Summary, s.profiles)
		st.Answer = plan.StatusAnswer(p, s.profiles)
	}
	st.Progress = plan.Progress(d)
	if step.Write != nil {
		st.Comparison = step.Write
		switch {
		case step.Missing != "":
			r.recorder.Eventf(p, nil, corev1.EventTypeWarning, v1alpha1.ReasonBaselineNotFound, "Compare", "%s", step.Missing)
		case step.Write.Decision == v1alpha1.ComparisonRegressed:
			r.recorder.Eventf(p, nil, corev1.EventTypeWarning, v1alpha1.ReasonRegressed, "Compare", "regressed against CapacityPlan %s: %s", step.Write.Baseline.Name, step.Write.Worst)
		}
	}
	var res ctrl.Result
	if !step.Deadline.IsZero() {
		res = rc.After(baselinePoll, step.Deadline.Sub(now))
	}
	if st.Phase != d.Phase || st.Reason != d.Reason {
		kind := corev1.EventTypeNormal
		if d.Phase == v1alpha1.PlanFailed {
			kind = corev1.EventTypeWarning
		}
		r.recorder.Eventf(p, nil, kind, d.Reason, d.Phase, "%s", d.Message)
	}
	st.Phase, st.Reason, st.Message = d.Phase, d.Reason, d.Message
	rc.SetSummaryConditions(&st.Conditions, p.Generation, rc.Standing{Ended: d.Phase == v1alpha1.PlanSucceeded || d.Phase == v1alpha1.PlanFailed,
		Failed: d.Phase == v1alpha1.PlanFailed, Verdict: d.Verdict(), Phase: d.Phase, Reason: d.Reason, Message: d.Message})
	return res
}

// baselinePoll is how often a plan waiting for its baseline plan looks again: no watch
// reports another plan's end to this one.
const baselinePoll = 10 * time.Second

// doneSince is when the plan's last cell was done: the latest completion of its children, or
// its creation when none has one (every cell's profile is missing).
func doneSince(p *v1alpha1.CapacityPlan, s *scope) time.Time {
	t := p.CreationTimestamp.Time
	for _, c := range s.children {
		if c.Run != nil && c.Run.Status.CompletionTime != nil && c.Run.Status.CompletionTime.After(t) {
			t = c.Run.Status.CompletionTime.Time
		}
	}
	return t
}

// children are the TestRuns the plan controls, through the owner index.
func (r *Reconciler) children(ctx context.Context, p *v1alpha1.CapacityPlan) (*v1alpha1.TestRunList, error) {
	var list v1alpha1.TestRunList
	err := r.List(ctx, &list, client.InNamespace(p.Namespace), client.MatchingFields{ownerIndex: p.Name})
	return &list, err
}

// reconcileDelete deletes the children it controls (found through the owner index, so a
// user's TestRun that merely carries the plan's label is left alone), then lets the plan go.
func (r *Reconciler) reconcileDelete(ctx context.Context, p *v1alpha1.CapacityPlan) error {
	if !controllerutil.ContainsFinalizer(p, childrenFinalizer) {
		return nil
	}
	list, err := r.children(ctx, p)
	if err != nil {
		return err
	}
	for i := range list.Items {
		if err := rc.DeleteExact(ctx, r.Client, &list.Items[i]); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(p, childrenFinalizer)
	return client.IgnoreNotFound(r.Update(ctx, p))
}

// targetGone: a finished child's target namespace is gone or, in a shared target namespace,
// its last Deployment and pod. Both are read from the cache, which holds fleetbench's only.
func (r *Reconciler) targetGone(ctx context.Context, run *v1alpha1.TestRun) (bool, error) {
	ns, shared := controller.Namespaces{Target: r.TargetNamespace}.TargetHome(run)
	if !shared {
		got := &corev1.Namespace{}
		err := r.Get(ctx, client.ObjectKey{Name: ns}, got)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		// A namespace of that name that is not the child's (target.OwnedBy) is not its target.
		return apierrors.IsNotFound(err) || !target.OwnedBy(got, run), nil
	}
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.PodList{}} {
		if err := r.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(target.RunLabels(run))); err != nil {
			return false, err
		}
		if meta.LenList(list) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// SetupWithManager watches plans, their children (Owns, through the owner index), the
// children's target namespaces (Serial waits for them to go; in a shared target namespace the
// children's Deployments and pods) and Profiles (a missing one may appear).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.TestRun{}, ownerIndex, func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.APIVersion != v1alpha1.GroupVersion.String() || owner.Kind != "CapacityPlan" {
			return nil
		}
		return []string{owner.Name}
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.CapacityPlan{}).
		Owns(&v1alpha1.TestRun{}).
		Watches(&v1alpha1.Profile{}, handler.EnqueueRequestsFromMapFunc(r.unfinishedPlans)).
		Watches(&v1alpha1.TestRun{}, handler.EnqueueRequestsFromMapFunc(r.plansReadingMemoryOf))
	if r.TargetNamespace == "" {
		b = b.Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.planOfTarget))
	} else {
		// A namespaced install may not watch namespaces; what goes there is the children's.
		gone := builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false }, UpdateFunc: func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})
		b = b.Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.planOfTarget), gone).
			Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.planOfTarget), gone)
	}
	return b.Named("capacityplan").Complete(r)
}

// planOfTarget maps a target namespace, or a target object in a shared one, to the plan
// controlling its TestRun.
func (r *Reconciler) planOfTarget(ctx context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[naming.LabelTestRun] == "" || l[naming.LabelTestRunNS] == "" {
		return nil
	}
	run := &v1alpha1.TestRun{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: l[naming.LabelTestRunNS], Name: l[naming.LabelTestRun]}, run); err != nil {
		return nil
	}
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "CapacityPlan" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: run.Namespace, Name: owner.Name}}}
}

// unfinishedPlans wakes every plan still running when a Profile appears or changes, and a
// finished plan whose model or answer reads that Profile's size or price.
func (r *Reconciler) unfinishedPlans(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.CapacityPlanList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		ended := p.Status.Phase == v1alpha1.PlanSucceeded || p.Status.Phase == v1alpha1.PlanFailed
		reads := (p.Spec.Question != nil || len(p.Spec.Predict) > 0) &&
			slices.ContainsFunc(append(slices.Clone(p.Spec.Profiles), p.Spec.Predict...), func(n string) bool { return strings.EqualFold(n, o.GetName()) })
		if !ended || reads {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
