package v1alpha1

// A TestRun with spec.managedBy kueue.x-k8s.io/multikueue is dispatched by Kueue's MultiKueue
// (its adapter for custom jobs, feature gate MultiKueueAdaptersForCustomJobs, Beta and on by
// default since Kueue v0.15; TestRun listed in the manager's multiKueue.externalFrameworks):
//   - In the manager cluster fleetbench only queues it: it resolves the Profile and the runner
//     count, and makes the run's Workload in its LocalQueue, as for any queued run. Until Kueue
//     has chosen a worker the run is Queued; from then on fleetbench leaves it alone, and its
//     status is the worker's, copied here by MultiKueue, until the run ends there.
//   - MultiKueue then creates the run's copy in the worker (spec.managedBy removed, the label
//     kueue.x-k8s.io/prebuilt-workload-name added) next to its own copy of the Workload. The
//     worker's fleetbench runs that copy as any queued run, but admitted through that prebuilt
//     Workload: it adopts it only when its pod sets are exactly the ones it would have asked
//     for itself, so a Workload the namespace wrote cannot admit more than it reserved.

// ManagedByMultiKueue is spec.managedBy of a TestRun Kueue's MultiKueue dispatches.
const ManagedByMultiKueue = "kueue.x-k8s.io/multikueue"

// PrebuiltWorkloadLabel is Kueue's label naming the Workload that admits a job made for it
// (MultiKueue's copy of a dispatched run in the worker).
const PrebuiltWorkloadLabel = "kueue.x-k8s.io/prebuilt-workload-name"

// AnnotationWorkerCluster is set on a dispatched run, in the manager cluster, to the
// MultiKueueCluster Kueue handed it to: from then on its status is that worker's.
const AnnotationWorkerCluster = "fleetbench.dev/worker-cluster"

// ReasonDispatched: the event of a dispatched run handed to a worker cluster.
const ReasonDispatched = "Dispatched"

// ReasonNotDispatchable: spec.managedBy kueue.x-k8s.io/multikueue, but the run has no queue to
// be dispatched through (no LocalQueue named, or Kueue is not installed). It held nothing.
const ReasonNotDispatchable = "NotDispatchable"

// Messages of dispatching.
const (
	// MessageNotDispatchableNoQueue (namespace).
	MessageNotDispatchableNoQueue = "spec.managedBy is kueue.x-k8s.io/multikueue, but the run names no LocalQueue and namespace %s has none named default: " +
		"MultiKueue dispatches a run through its queue; set spec.queue.localQueue (or the label kueue.x-k8s.io/queue-name) to a LocalQueue whose ClusterQueue has a MultiKueue AdmissionCheck"
	// MessageNotDispatchableNoKueue.
	MessageNotDispatchableNoKueue = "spec.managedBy is kueue.x-k8s.io/multikueue, but Kueue is not installed in this cluster (no kueue.x-k8s.io Workload API): " +
		"install Kueue with MultiKueue, or remove spec.managedBy to run the test here"
	// MessageDispatchQueued (LocalQueue and who named it, why Kueue has not dispatched it yet).
	MessageDispatchQueued = "waiting for Kueue to dispatch the run to a worker cluster through LocalQueue %s (MultiKueue; target, runners and pre-flight as one workload): %s"
	// MessagePrebuiltOutOfSync (Workload, what differs).
	MessagePrebuiltOutOfSync = "the Workload %s that MultiKueue made to admit this run asks for other pods than the run needs (%s): " +
		"are the Profile and the fleetbench settings the same in the manager cluster and in this one?"
)
