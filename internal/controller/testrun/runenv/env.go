// Package runenv is what every stage of a TestRun reconcile works with: the Env (clients,
// options, the runner I/O of runio), the helpers they share (waiting with a deadline, owned
// ConfigMaps, the runner Job options, where a target lives), the events they send and the
// manager's metrics.
package runenv

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/queue/place"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/seal"
	"fleetbench.dev/fleetbench/pkg/target"
)

// TargetFinalizer lets the operator delete the target namespace, which owner references
// cannot reach: a namespace cannot be owned by a namespaced TestRun.
const TargetFinalizer = "fleetbench.dev/target-cleanup"

// Env is what every stage of a reconcile works with: the clients, the operator's options, and
// the runner I/O that outlives one reconcile (runio). One Env is shared by all workers.
type Env struct {
	client.Client
	Options
	Scheme *runtime.Scheme
	// APIReader reads around the cache: the TestRun itself (see Reconcile) and users' script
	// ConfigMaps, which the cache does not hold.
	APIReader       client.Reader
	Recorder        events.EventRecorder
	PodLevelDropped atomic.Bool
	// Finals are the runners' final envelopes, fetched as soon as each runner has them.
	Finals *runio.FinalEnvelopes
	// Scripts runs setup() and teardown() off the reconcile workers.
	Scripts *runio.ScriptCalls
	// Calls runs the fleet's other long calls off the reconcile workers.
	Calls *runio.AsyncCalls
	// Seen keeps each runner's last live envelope for runs that replace lost runners.
	Seen *runio.LastSeen
}

// Options are what main and the tests choose; New takes the rest from the manager.
type Options struct {
	RunnerAPI runio.RunnerAPI
	Logs      runio.LogReader
	// Stats samples the target's CPU and memory from the kubelet or metrics.k8s.io.
	Stats runio.TargetStats
	// TargetMetrics picks the source: TargetMetricsAuto (also when empty), TargetMetricsKubelet
	// or TargetMetricsMetricsAPI.
	TargetMetrics string
	// RunnerImage is used when a TestRun names none.
	RunnerImage string
	Timeouts    decide.Timeouts
	// PodLevelResources sizes one-machine targets with pod.spec.resources (Kubernetes 1.34+).
	// If the API server drops the field anyway, targets fall back to per-container limits.
	PodLevelResources bool
	// ProgressInterval is how often status.progress is refreshed from the runners while the
	// load runs; DefaultProgressInterval when zero.
	ProgressInterval time.Duration
	// PullRetryGrace is how long an image pull may be seen failing before the run ends
	// Target/RunnerImageNotPresent; DefaultPullRetryGrace when zero.
	PullRetryGrace time.Duration
	// TargetNamespace is where every target goes when set (--target-namespace): a namespace an
	// admin made, which the targets of all TestRuns share and the operator never creates, labels
	// or deletes. Empty: a namespace of its own per TestRun.
	TargetNamespace string
	// DefaultPodSecurity is the level the API server enforces in a namespace without a
	// pod-security.kubernetes.io/enforce label (its PodSecurity admission configuration);
	// DefaultPodSecurityLevel when empty.
	DefaultPodSecurity string
	// MaxTargetsPerNamespace caps the provisioned targets a namespace's TestRuns hold at once
	// (--max-targets-per-namespace); a run over it waits Pending TargetLimitReached. 0: no cap.
	MaxTargetsPerNamespace int
	// MaxRunnersPerNamespace caps the runners a namespace's TestRuns have in flight at once
	// (--max-runners-per-namespace); a run that would pass it waits Pending RunnerLimitReached,
	// one asking more alone ends NotPermitted, and parallelism auto chooses at most it. 0: no cap.
	MaxRunnersPerNamespace int
	// PropagateNamespaceLabels are the keys of the TestRun's namespace's labels its own target
	// namespace copies when it is created (--propagate-namespace-labels), so that policies
	// selecting namespaces by them follow the tenant to its targets.
	PropagateNamespaceLabels []string
	// EgressAllowList holds the blocks spec.target.egress may open (--egress-allow-list); a run
	// asking for any other ends Failed EgressNotAllowed before anything is made. Empty: none.
	EgressAllowList target.EgressAllowList
	// MaxKeptTarget is how long after its run's end a KeepUntilDeleted target is kept at most
	// (--max-kept-target); DefaultMaxKeptTarget when zero.
	MaxKeptTarget time.Duration
	// Clock defaults to the real one.
	Clock clock.PassiveClock
	// KeptRecords is how many kept records (the results a later run may compare with) a
	// namespace holds (--kept-results-per-namespace); DefaultKeptRecords when zero.
	KeptRecords int
	// Workers is how many TestRuns are reconciled at once (MaxConcurrentReconciles);
	// DefaultWorkers when zero. The reconciler's shared state (finals, pulls,
	// podLevelDropped, the metrics) is safe for that; one TestRun is never reconciled twice at once.
	Workers int
	// RecordKey seals the records kept in tenants' namespaces (records.go); New makes a random
	// one when none is given, which cannot verify what an earlier process sealed.
	RecordKey seal.Key
	// Kueue: Kueue's API was served when the manager started (controller.KueueServed, asked
	// once; controller.WithKueue gave the cache the same answer). Runs are queued (queue.go)
	// and Workloads watched only then; never asked again, so the watches match the cache.
	Kueue bool
	// RequireQueue makes Kueue's admission mandatory for every TestRun (--require-queue): a
	// run no LocalQueue admits ends Failed QueueRequired, and without Kueue every run ends
	// Failed KueueRequired, before it holds anything.
	RequireQueue bool
}

// DefaultWorkers: the long calls (setup(), teardown(), runner, kubelet and log reads) run off
// the workers (scriptCalls, asyncCalls); several workers keep one run's API writes from
// queueing another's.
const DefaultWorkers = 4

// DefaultMaxKeptTarget is how long a kept target stays after its run at most, unless an admin
// says otherwise: a day to inspect it, and no namespace forgotten for good.
const DefaultMaxKeptTarget = 24 * time.Hour

// DefaultPodSecurityLevel is Kubernetes' own default is privileged, but fleetbench assumes the
// strict one unless told: a namespace that enforces nothing may get a restricted target only.
const DefaultPodSecurityLevel = "restricted"

// ReadUnseen reads obj from the API server when CreateOrGet left it as built (the name exists,
// the cache does not show it): a Job without fleetbench's labels is not cached, and may be a
// tenant's under the name of a run's child.
func (r *Env) ReadUnseen(ctx context.Context, obj client.Object) error {
	if obj.GetUID() != "" {
		return nil
	}
	return client.IgnoreNotFound(r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj))
}

// Controls says whether obj, as CreateOrGet left it, is controlled by run: as the cache has it,
// or, when the cache does not hold it (no fleetbench label, or a create a moment ago), as the
// API server has it. Gone counts as controlled: the next reconcile makes it.
func (r *Env) Controls(ctx context.Context, run *v1alpha1.TestRun, obj client.Object) (bool, error) {
	if obj.GetUID() == "" {
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return decide.ControlledBy(obj, run.UID), nil
}

// BuildTarget sets s.Desired, the target's objects, from the run's Profile (s.Profile, set)
// and where Kueue's admission puts the target's pods.
func (r *Env) BuildTarget(s *decide.Scope) {
	s.Desired, s.DesiredErr = target.Build(s.Run, &s.Profile.Spec, s.TargetNS, r.TargetOptions(s))
}

// TargetOptions are the target builder's options for s's run: the cluster's facts, and where
// Kueue's admission puts the target's pods.
func (r *Env) TargetOptions(s *decide.Scope) target.Options {
	return target.Options{PodLevelResources: r.PodLevelResources && !r.PodLevelDropped.Load(), SharedNamespace: s.SharedTarget,
		Admitted: place.PodSet(s.Admission(), queue.PodSetTarget)}
}

// MaxResultBytes keeps the ConfigMap under the API server's 1 MiB object limit.
const MaxResultBytes = 900 << 10

// CreateConfigMap creates one of the ConfigMaps a TestRun owns (its script and k6 config, the
// copy of its script ConfigMap, its results), controlled by it, or loads the one of that name
// (rc.CreateOrGetCreated); created says whether it was made now. Every owned ConfigMap is made
// here; whether one found is the run's is the caller's check (controls).
func (r *Env) CreateConfigMap(ctx context.Context, run *v1alpha1.TestRun, cm *corev1.ConfigMap) (bool, error) {
	if err := controllerutil.SetControllerReference(run, cm, r.Scheme); err != nil {
		return false, err
	}
	r.Seal(cm)
	return rc.CreateOrGetCreated(ctx, r.Client, cm)
}

// RunnerJobOptions is what every runner Job, and the pre-flight, is built with.
func (r *Env) RunnerJobOptions(s *decide.Scope) runners.JobOptions {
	run := s.Run
	var targetStarting time.Duration
	if !s.ConditionTrue(v1alpha1.ConditionTargetReady) && run.Spec.Target.External == nil {
		targetStarting = max(s.ProvisioningDeadline().Sub(s.Now), 0)
	}
	var env []corev1.EnvVar
	switch {
	case run.Spec.Target.External != nil:
		env = target.ExternalEnv(run.Spec.Target.External)
	case s.Desired != nil:
		env = s.Desired.Env
	}
	scriptCopy := ""
	if run.Spec.Script.ConfigMap != nil {
		scriptCopy = naming.ScriptCopyConfigMap(run.Name)
	}
	return runners.JobOptions{
		Image:           r.RunnerImage,
		ConfigMap:       naming.ScriptConfigMap(run.Name),
		ScriptCopy:      scriptCopy,
		HasConfig:       runners.HasConfig(&run.Spec, len(s.Runners)),
		TargetEnv:       env,
		TargetNamespace: s.TargetNS,
		TargetNodes:     targetNodes(s.TargetPods),
		TargetStarting:  targetStarting,
		// The kubelet ends a runner the operator has lost track of.
		ActiveDeadlineSeconds: int64((targetStarting + decide.RunLength(run, s.Timeouts) + s.Timeouts.RunnersReady).Seconds()),
		// The pre-flight's builder puts its own pod set's placement instead.
		Admitted: place.PodSet(s.Admission(), queue.PodSetRunners),
	}
}

// TargetHome is where run's target is, or goes (controller.Namespaces.TargetHome).
func (r *Env) TargetHome(run *v1alpha1.TestRun) (ns string, shared bool) {
	return controller.Namespaces{Target: r.TargetNamespace}.TargetHome(run)
}

// targetNodes are the nodes the target's pods were scheduled to, sorted and each once.
func targetNodes(pods []corev1.Pod) []string {
	var nodes []string
	for i := range pods {
		if n := pods[i].Spec.NodeName; n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	return nodes
}
