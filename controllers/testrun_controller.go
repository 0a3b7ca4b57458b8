package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// targetFinalizer lets the operator delete the target namespace, which owner references
// cannot reach: a namespace cannot be owned by a namespaced TestRun.
const targetFinalizer = "fleetbench.dev/target-cleanup"

// Timeouts are the defaults of spec.timeouts.
type Timeouts struct {
	Provisioning time.Duration
	RunnersReady time.Duration
	// RunGrace is added to the expected length of the load.
	RunGrace time.Duration
	// RunUnknown bounds a load whose length only the script knows.
	RunUnknown time.Duration
	Collection time.Duration
}

// DefaultTimeouts are documented on v1alpha1.TimeoutsSpec.
var DefaultTimeouts = Timeouts{
	Provisioning: 10 * time.Minute,
	RunnersReady: 5 * time.Minute,
	RunGrace:     10 * time.Minute,
	RunUnknown:   time.Hour,
	Collection:   2 * time.Minute,
}

// TestRunReconciler drives a TestRun from Pending to Succeeded or Failed.
type TestRunReconciler struct {
	client.Client
	Scheme *runtime.Scheme
	// APIReader reads TestRuns around the cache; see Reconcile.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	RunnerAPI RunnerAPI
	Logs      LogReader
	// Stats samples the target's CPU and memory from the kubelet or metrics.k8s.io.
	Stats TargetStats
	// TargetMetrics picks the source: TargetMetricsAuto (also when empty), TargetMetricsKubelet
	// or TargetMetricsMetricsAPI.
	TargetMetrics string
	// RunnerImage is used when a TestRun names none.
	RunnerImage string
	Timeouts    Timeouts
	// PodLevelResources sizes one-machine targets with pod.spec.resources (Kubernetes 1.34+).
	// If the API server drops the field anyway, targets fall back to per-container limits.
	PodLevelResources bool
	podLevelDropped   atomic.Bool
}

// scope is everything one reconcile knows: the TestRun and what exists in the world for it.
// Phase functions read the scope, act on the cluster, and write only scope.run.Status.
type scope struct {
	run     *v1alpha1.TestRun
	profile *v1alpha1.Profile
	// targetNS is the provisioned target's namespace; empty for an external target.
	targetNS string
	// runners are indexed by runner number.
	runners []runnerState
	now     time.Time
	// done is set by a phase that settled the reconcile: later phases do not run.
	done   bool
	result ctrl.Result
}

// runnerState is one runner as the world shows it.
type runnerState struct {
	index int
	job   *batchv1.Job
	pod   *corev1.Pod
}

// phaseFunc is one step of the reconcile; each is idempotent and may end it early.
type phaseFunc func(ctx context.Context, s *scope) error

// Reconcile
//  1. loads the TestRun; deletion and TTL expiry end here;
//  2. patches status once, deferred, whatever the phases did;
//  3. leaves finished runs alone but for cleanup;
//  4. runs the phase functions in order until one settles the reconcile.
func (r *TestRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := logf.FromContext(ctx)

	// 1. Load, from the API server rather than the cache: the status records what this
	// operator did (started the runners, when), and a reconcile woken by a pod event must not
	// decide on a copy that predates its own last write.
	run := &v1alpha1.TestRun{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !run.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, run)
	}

	s := &scope{run: run, now: r.Clock.Now()}
	before := run.DeepCopy()

	// 2. One status patch at the end, built from what the phases found.
	defer func() {
		r.summarize(s)
		if equality.Semantic.DeepEqual(before.Status, run.Status) {
			return // an empty merge patch is still a write
		}
		if err := r.Status().Patch(ctx, run, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			reterr = errors.Join(reterr, fmt.Errorf("patching status: %w", err))
		}
	}()

	// 3. Finished runs only wait for their TTL and release their target.
	if isFinished(run) {
		return r.reconcileFinished(ctx, s)
	}

	if run.Status.Phase == "" {
		r.setPhase(s, v1alpha1.PhasePending, "Accepted", "waiting for the target and runners")
	}
	if run.Spec.Target.External == nil && !controllerutil.ContainsFinalizer(run, targetFinalizer) {
		// Added before anything cross-namespace exists, so nothing is ever left behind.
		controllerutil.AddFinalizer(run, targetFinalizer)
		if err := r.Update(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		before.Finalizers = run.Finalizers
		before.ResourceVersion = run.ResourceVersion
	}

	// 4. Phases.
	phases := []phaseFunc{
		r.reconcileProfile,
		r.reconcileTarget,
		r.reconcileScript,
		r.reconcileRunners,
		r.reconcileStart,
		r.reconcileRun,
		r.reconcileCollect,
	}
	for _, phase := range phases {
		if err := phase(ctx, s); err != nil {
			log.Error(err, "reconcile phase failed", "phase", run.Status.Phase)
			return ctrl.Result{}, err
		}
		if s.done {
			break
		}
	}
	return s.result, nil
}

// settle ends this reconcile, coming back after d (0: only when something changes).
func (s *scope) settle(d time.Duration) {
	s.done = true
	if d > 0 && (s.result.RequeueAfter == 0 || d < s.result.RequeueAfter) {
		s.result.RequeueAfter = d
	}
}

func isFinished(run *v1alpha1.TestRun) bool {
	return run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed
}

// setPhase records a phase change with an event; the same phase again is a no-op.
func (r *TestRunReconciler) setPhase(s *scope, phase v1alpha1.TestRunPhase, reason, message string) {
	st := &s.run.Status
	if st.Phase == phase && st.Reason == reason {
		return
	}
	st.Phase, st.Reason, st.Message = phase, reason, message
	phaseTransitions.WithLabelValues(string(phase)).Inc()
	kind := corev1.EventTypeNormal
	if phase == v1alpha1.PhaseFailed {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(s.run, nil, kind, reason, string(phase), "%s", message)
}

// fail ends the run: runners still running are stopped, whatever results exist are kept.
// Before the start there are no results to keep, and a runner still pending would start k6
// paused later and wait for a start that never comes: its Job is deleted.
func (r *TestRunReconciler) fail(ctx context.Context, s *scope, reason, message string) {
	r.stopRunners(ctx, s)
	if !meta.IsStatusConditionTrue(s.run.Status.Conditions, v1alpha1.ConditionStarted) {
		r.deleteRunningJobs(ctx, s)
	}
	r.setPhase(s, v1alpha1.PhaseFailed, reason, message)
	if s.run.Status.Verdict == "" {
		s.run.Status.Verdict = v1alpha1.VerdictFailed
	}
	now := metav1.NewTime(s.now)
	s.run.Status.CompletionTime = &now
	s.settle(r.ttlLeft(s))
}

// setCondition sets a condition at the TestRun's generation.
func setCondition(s *scope, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&s.run.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: s.run.Generation,
	})
}

// summarize derives the Ready condition and observedGeneration from what the phases wrote.
func (r *TestRunReconciler) summarize(s *scope) {
	st := &s.run.Status
	st.ObservedGeneration = s.run.Generation
	switch st.Phase {
	case v1alpha1.PhaseSucceeded:
		setCondition(s, v1alpha1.ConditionReady, metav1.ConditionTrue, st.Reason, st.Message)
	case v1alpha1.PhaseFailed:
		setCondition(s, v1alpha1.ConditionReady, metav1.ConditionFalse, st.Reason, st.Message)
	default:
		setCondition(s, v1alpha1.ConditionReady, metav1.ConditionFalse, "InProgress", fmt.Sprintf("%s: %s", st.Phase, st.Message))
	}
}

// ttlLeft is how long a finished TestRun has before ttlSecondsAfterFinished deletes it.
func (r *TestRunReconciler) ttlLeft(s *scope) time.Duration {
	ttl := s.run.Spec.TTLSecondsAfterFinished
	if ttl == nil || s.run.Status.CompletionTime == nil {
		return 0
	}
	left := s.run.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(s.now)
	return max(left, time.Millisecond)
}

// reconcileFinished deletes the TestRun when its TTL has passed and releases the target
// per the cleanup policy.
func (r *TestRunReconciler) reconcileFinished(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	if ttl := run.Spec.TTLSecondsAfterFinished; ttl != nil && run.Status.CompletionTime != nil {
		if !s.now.Before(run.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)) {
			r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, "TTLExpired", "Delete", "deleting after ttlSecondsAfterFinished=%d", *ttl)
			err := r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground))
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if run.Spec.Target.External == nil && targetPolicy(run) == v1alpha1.TargetDeleteAfterRun {
		if err := r.deleteTargetNamespace(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: r.ttlLeft(s)}, nil
}

func targetPolicy(run *v1alpha1.TestRun) v1alpha1.TargetCleanupPolicy {
	if run.Spec.Cleanup == nil || run.Spec.Cleanup.Target == "" {
		return v1alpha1.TargetDeleteAfterRun
	}
	return run.Spec.Cleanup.Target
}

func (r *TestRunReconciler) deleteTargetNamespace(ctx context.Context, run *v1alpha1.TestRun) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: naming.TargetNamespace(run.Namespace, run.Name)}}
	return client.IgnoreNotFound(r.Delete(ctx, ns, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// reconcileDelete removes the target namespace, which owner references cannot reach, and the
// runner Jobs and script ConfigMap, which they would reach only when the garbage collector
// gets to them: a deleted TestRun stops its load at once. Then it lets the TestRun go.
func (r *TestRunReconciler) reconcileDelete(ctx context.Context, run *v1alpha1.TestRun) error {
	if !controllerutil.ContainsFinalizer(run, targetFinalizer) {
		return nil
	}
	if err := r.deleteTargetNamespace(ctx, run); err != nil {
		return err
	}
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	if err := r.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(run.Namespace), client.MatchingLabels(runners.RunnerLabels(run)), background); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: naming.ScriptConfigMap(run.Name)}}
	if err := client.IgnoreNotFound(r.Delete(ctx, cm)); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(run, targetFinalizer)
	return client.IgnoreNotFound(r.Update(ctx, run))
}

// SetupWithManager watches TestRuns, what they own, runner pods (owned by Jobs, found by
// label), target workloads in other namespaces (by label), and Profiles a TestRun waits for.
func (r *TestRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.TestRun{}, profileIndex, func(o client.Object) []string {
		return []string{strings.ToLower(o.(*v1alpha1.TestRun).Spec.Profile)}
	}); err != nil {
		return err
	}
	// A second manager in one process (tests restart it) registers it once.
	if err := metrics.Registry.Register(newPhaseCollector(mgr.GetClient())); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TestRun{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionPredicate()))).
		Owns(&batchv1.Job{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(byTestRunLabels)).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(byTestRunLabels)).
		Watches(&v1alpha1.Profile{}, handler.EnqueueRequestsFromMapFunc(r.waitingOnProfile)).
		Named("testrun").
		Complete(r)
}

const profileIndex = "spec.profile"

func deletionPredicate() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}

// byTestRunLabels maps a runner pod or target workload to its TestRun.
func byTestRunLabels(_ context.Context, o client.Object) []reconcile.Request {
	labels := o.GetLabels()
	name := labels[naming.LabelTestRun]
	if name == "" {
		return nil
	}
	ns := o.GetNamespace()
	if owner := labels[naming.LabelTestRunNS]; owner != "" {
		ns = owner
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// waitingOnProfile wakes the TestRuns that name a Profile when it appears or changes.
func (r *TestRunReconciler) waitingOnProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.TestRunList
	if err := r.List(ctx, &list, client.MatchingFields{profileIndex: strings.ToLower(o.GetName())}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if !isFinished(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
