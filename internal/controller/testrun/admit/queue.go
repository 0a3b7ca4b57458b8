package admit

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// The queue: a run that names a Kueue LocalQueue (spec.queue, or Kueue's queue-name label), or
// whose namespace has a LocalQueue named default (Kueue's LocalQueueDefaulting), is admitted as one Workload (pkg/queue) before anything that holds a pod is made;
// with --require-queue every run is, or ends before it holds anything. Kueue's job
// framework, which its docs recommend, does not build against this module's Kubernetes
// libraries; reconcileQueue does for a TestRun what the framework's reconciler does for a job:
// the Workload is made suspended-first (here: nothing provisioned), admitted by Kueue, its
// flavors' node labels and tolerations put on the pods it admitted (status.admission), and
// finished by its owner when the run ends (finishWorkload).

// Kueue's Workloads, of queued runs only: made, read and watched, and marked Finished.
// patch: the worker's copy of a dispatched run adopts the Workload MultiKueue made for it.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=patch
// The namespace's default LocalQueue (named default), read live before a run naming none is queued.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get
// The ResourceFlavors an admitted run's pod sets were assigned, read live once per admission.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get

// queuePoll is how often a queued run reads its Workload when no watch reports it.
const queuePoll = 30 * time.Second

// ReconcileQueue holds the run in Queued, holding no pods, until Kueue admits its Workload;
// once admitted it lets the run provision, and ends it Evicted if Kueue takes the admission
// back. The queue is decided once, while the run is Pending (queue.Choose): a run queued stays
// queued whatever its spec or labels say later, in the queue its Workload names, and a run that
// went on unqueued is never queued later.
func (r *Stage) ReconcileQueue(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	decided := s.Condition(v1alpha1.ConditionAdmitted)
	if decided != nil && decided.Reason == v1alpha1.ReasonKueueNotInstalled {
		return ctrl.Result{}, nil
	}
	if decided == nil && (s.Phase() != v1alpha1.PhasePending || s.Started()) {
		return ctrl.Result{}, nil // not queued when it first came here: as without Kueue
	}
	admitted := s.ConditionTrue(v1alpha1.ConditionAdmitted)
	if admitted && !r.Kueue {
		return ctrl.Result{}, nil // admitted before a restart without Kueue: it runs on
	}
	wl := &kueue.Workload{}
	found := false
	if r.Kueue && decided != nil {
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: queue.WorkloadName(run)}, wl)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		found = err == nil
	}
	switch {
	case !found && admitted:
		s.Fail(v1alpha1.ReasonEvicted, fmt.Sprintf(v1alpha1.MessageEvicted, "Deleted", "the Workload "+queue.WorkloadName(run)+" was deleted"))
		return ctrl.Result{}, nil
	case !found:
		// Not made yet (or deleted while queued, as Kueue's job reconciler makes it again).
		choice, err := r.chooseQueue(ctx, run)
		if err != nil {
			return ctrl.Result{}, err
		}
		switch choice.Action {
		case queue.NotQueued:
			return ctrl.Result{}, nil
		case queue.NotNamed:
			s.Fail(v1alpha1.ReasonQueueNotNamed, fmt.Sprintf(v1alpha1.MessageQueueNotNamed, run.Namespace))
			return ctrl.Result{}, nil
		case queue.Required:
			s.Fail(v1alpha1.ReasonQueueRequired, fmt.Sprintf(v1alpha1.MessageQueueRequired, run.Namespace))
			return ctrl.Result{}, nil
		case queue.RequiredNotInstalled:
			s.Fail(v1alpha1.ReasonKueueRequired, v1alpha1.MessageKueueRequired)
			return ctrl.Result{}, nil
		case queue.DispatchNotNamed:
			s.Fail(v1alpha1.ReasonNotDispatchable, fmt.Sprintf(v1alpha1.MessageNotDispatchableNoQueue, run.Namespace))
			return ctrl.Result{}, nil
		case queue.DispatchNotInstalled:
			s.Fail(v1alpha1.ReasonNotDispatchable, v1alpha1.MessageNotDispatchableNoKueue)
			return ctrl.Result{}, nil
		case queue.NotInstalled:
			msg := v1alpha1.MessageKueueNotInstalledUnnamed
			if choice.LocalQueue != "" {
				msg = fmt.Sprintf(v1alpha1.MessageKueueNotInstalled, queue.Describe(choice.LocalQueue, choice.Source))
			}
			s.RecordCondition(v1alpha1.ConditionAdmitted, metav1.ConditionTrue, v1alpha1.ReasonKueueNotInstalled, msg)
			return ctrl.Result{}, nil
		}
		if _, prebuilt := run.Labels[v1alpha1.PrebuiltWorkloadLabel]; prebuilt {
			// MultiKueue's copy of a dispatched run: admitted by the Workload MultiKueue made.
			var wait ctrl.Result
			if wl, wait, err = r.adoptPrebuilt(ctx, s, choice.LocalQueue); err != nil || wl == nil {
				return wait, err
			}
		} else if wl, err = r.createWorkload(ctx, s, choice.LocalQueue); err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
	}
	if !decide.ControlledBy(wl, run.UID) {
		s.Fail(v1alpha1.ReasonQueueRejected, fmt.Sprintf("a Workload named %s exists in namespace %s that this TestRun does not own; "+
			"delete it, or give the TestRun another name", wl.Name, run.Namespace))
		return ctrl.Result{}, nil
	}
	// The queue is the one the Workload names: decided when it was made.
	lq := string(wl.Spec.QueueName)
	named := queue.Describe(lq, queue.SourceOf(run, lq))
	st := queue.Read(wl)
	if admitted {
		if st.Evicted || !st.Admitted {
			s.Fail(v1alpha1.ReasonEvicted, fmt.Sprintf(v1alpha1.MessageEvicted, st.Reason, st.Message))
		}
		return ctrl.Result{}, nil
	}
	if st.Admitted {
		// Where the admission puts the pods, fixed now for every pod the run makes.
		adm, unusable, err := r.admission(ctx, wl)
		if err != nil {
			return ctrl.Result{}, err
		}
		if unusable != nil {
			s.Fail(v1alpha1.ReasonFlavorUnusable, fmt.Sprintf(v1alpha1.MessageFlavorUnusable, unusable))
			return ctrl.Result{}, nil
		}
		s.Decided.Admission = adm
		if s.Desired != nil {
			r.BuildTarget(s) // loaded before the admission was known
		}
		msg := fmt.Sprintf(v1alpha1.MessageAdmitted, st.ClusterQueue)
		s.RecordCondition(v1alpha1.ConditionAdmitted, metav1.ConditionTrue, v1alpha1.ReasonAdmitted, msg)
		// Pending once more, so the target's step moves the run to Provisioning as it would a
		// run that was never queued.
		s.Enter(v1alpha1.PhasePending, v1alpha1.ReasonAdmitted, msg)
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf(v1alpha1.MessageQueued, named, st.Pending)
	if run.Spec.ManagedBy == v1alpha1.ManagedByMultiKueue {
		msg = fmt.Sprintf(v1alpha1.MessageDispatchQueued, named, st.Pending)
	}
	s.RecordCondition(v1alpha1.ConditionAdmitted, metav1.ConditionFalse, v1alpha1.ReasonQueued, msg)
	maxWait := queue.MaxWait(run)
	return s.WaitOrFail(run.CreationTimestamp.Add(maxWait), queuePoll, v1alpha1.PhaseQueued, v1alpha1.ReasonQueued,
		v1alpha1.ReasonQueueTimeout, msg, "; "+fmt.Sprintf(v1alpha1.MessageQueueTimeout, named, maxWait)), nil
}

// chooseQueue decides the run's queue (queue.Choose). The namespace's default LocalQueue is
// read live, only for a run naming none when Kueue is installed: no LocalQueue is cached.
func (r *Stage) chooseQueue(ctx context.Context, run *v1alpha1.TestRun) (queue.Choice, error) {
	namespaceDefault := false
	if r.Kueue && queue.Name(run) == "" {
		lq := &kueue.LocalQueue{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: queue.DefaultLocalQueue}, lq)
		if err != nil && !apierrors.IsNotFound(err) {
			return queue.Choice{}, err
		}
		namespaceDefault = err == nil
	}
	return queue.Choose(run, queue.Policy{Kueue: r.Kueue, Required: r.RequireQueue}, namespaceDefault), nil
}

// admission reads the ResourceFlavors wl was admitted on, live (none is cached: an admin's few
// cluster-scoped objects, read once per run), and merges them per pod set (queue.Admission), as
// Kueue's job framework does when it starts an admitted job. unusable says why they cannot be
// put on the run's pods; err is a failed read, retried.
func (r *Stage) admission(ctx context.Context, wl *kueue.Workload) (adm *v1alpha1.QueueAdmission, unusable, err error) {
	flavors := map[string]*kueue.ResourceFlavor{}
	for _, name := range queue.Flavors(wl) {
		f := &kueue.ResourceFlavor{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, f)
		switch {
		case apierrors.IsNotFound(err):
			continue // queue.Admission says it is gone
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("the manager may not read the ResourceFlavor %s (its ClusterRole needs resourceflavors get): %w", name, err), nil
		case err != nil:
			return nil, nil, err
		}
		flavors[name] = f
	}
	adm, unusable = queue.Admission(wl, flavors)
	return adm, unusable, nil
}

// podSets are the run's pod sets: the target (the Profile's size), every runner and the
// pre-flight, admitted together or not at all.
func (r *Stage) podSets(s *decide.Scope) ([]kueue.PodSet, error) {
	run := s.Run
	opts := r.RunnerJobOptions(s)
	fleet := queue.Fleet{
		Runner:  runners.Job(run, 0, len(s.Runners), opts).Spec.Template.Spec,
		Runners: int32(len(s.Runners)),
	}
	if !s.ConditionTrue(v1alpha1.ConditionScriptChecked) {
		pre := runners.PreflightJob(run, opts).Spec.Template.Spec
		fleet.Preflight = &pre
	}
	if run.Spec.Target.External == nil {
		snap := s.Decided.Profile
		if snap == nil {
			snap = run.Status.Profile
		}
		if snap == nil {
			return nil, fmt.Errorf("queueing %s/%s: the Profile's snapshot is not fixed yet", run.Namespace, run.Name)
		}
		fleet.Target = &snap.Spec
	}
	return queue.PodSets(fleet), nil
}

// createWorkload makes the run's Workload of its pod sets.
func (r *Stage) createWorkload(ctx context.Context, s *decide.Scope, lq string) (*kueue.Workload, error) {
	run := s.Run
	sets, err := r.podSets(s)
	if err != nil {
		return nil, err
	}
	wl := queue.Workload(run, lq, sets)
	if err := controllerutil.SetControllerReference(run, wl, r.Scheme); err != nil {
		return nil, err
	}
	if err := r.Create(ctx, wl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Made by a reconcile whose status write was lost, or a look-alike: read it.
			return wl, r.APIReader.Get(ctx, client.ObjectKeyFromObject(wl), wl)
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			s.Fail(v1alpha1.ReasonQueueRejected, fmt.Sprintf("the Workload %s that queues the run in LocalQueue %s was refused: %v", wl.Name, lq, err))
			return nil, nil
		}
		return nil, err
	}
	return wl, nil
}

// adoptPrebuilt makes the Workload MultiKueue made for its copy of a dispatched run (Kueue's
// prebuilt-workload label names it) the run's own, as Kueue's job framework adopts a prebuilt
// Workload: only when it asks for exactly the pods the run needs (queue.PodSetsDiffer), since
// the run's namespace could have written it. A nil Workload with a nil error: the run waits
// (Result) or failed (s.Failure).
func (r *Stage) adoptPrebuilt(ctx context.Context, s *decide.Scope, lq string) (*kueue.Workload, ctrl.Result, error) {
	run := s.Run
	wl := &kueue.Workload{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: queue.WorkloadName(run)}
	// Live: a Workload not yet the run's is not in the cache.
	if err := r.APIReader.Get(ctx, key, wl); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, ctrl.Result{}, err
		}
		msg := fmt.Sprintf(v1alpha1.MessageQueued, queue.Describe(lq, queue.SourceOf(run, lq)),
			"the Workload "+key.Name+" that MultiKueue makes for this run is not there yet")
		// MultiKueue makes the Workload before the run's copy, so this is rare; a run labelled by
		// hand waits at the queue's own pace (no watch sees a Workload that is not the run's).
		return nil, s.WaitOrFail(run.CreationTimestamp.Add(queue.MaxWait(run)), queuePoll, v1alpha1.PhaseQueued,
			v1alpha1.ReasonQueued, v1alpha1.ReasonQueueTimeout, msg, "; "+fmt.Sprintf(v1alpha1.MessageQueueTimeout, lq, queue.MaxWait(run))), nil
	}
	if decide.ControlledBy(wl, run.UID) {
		return wl, ctrl.Result{}, nil
	}
	if metav1.GetControllerOf(wl) != nil {
		return wl, ctrl.Result{}, nil // another's: ReconcileQueue refuses it
	}
	want, err := r.podSets(s)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if diff := queue.PodSetsDiffer(want, wl.Spec.PodSets); diff != "" {
		s.Fail(v1alpha1.ReasonQueueRejected, fmt.Sprintf(v1alpha1.MessagePrebuiltOutOfSync, wl.Name, diff))
		return nil, ctrl.Result{}, nil
	}
	orig := wl.DeepCopy()
	if err := controllerutil.SetControllerReference(run, wl, r.Scheme); err != nil {
		return nil, ctrl.Result{}, err
	}
	// The run's labels, so the cache (fleetbench's objects only) holds it from now on.
	ownLabels := queue.Workload(run, lq, nil).Labels
	if wl.Labels == nil {
		wl.Labels = map[string]string{}
	}
	maps.Copy(wl.Labels, ownLabels)
	if err := r.Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, ctrl.Result{}, err
	}
	return wl, ctrl.Result{}, nil
}

// FinishWorkload marks the ended run's Workload Finished, as Kueue's job framework does for a
// job that ended: Kueue frees its quota at once, and the next run in the queue is admitted.
func (r *Stage) FinishWorkload(ctx context.Context, run *v1alpha1.TestRun) error {
	if !r.Kueue || meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionAdmitted) == nil {
		return nil
	}
	wl := &kueue.Workload{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: queue.WorkloadName(run)}, wl); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !decide.ControlledBy(wl, run.UID) || queue.Read(wl).Finished {
		return nil
	}
	done := queue.Finish(wl, run.Status.Reason, fmt.Sprintf("TestRun %s ended %s", run.Name, run.Status.Phase), metav1.Now())
	// Optimistic: Kueue writes the same conditions; a conflict is retried by the next reconcile.
	return r.Status().Patch(ctx, done, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{}))
}
