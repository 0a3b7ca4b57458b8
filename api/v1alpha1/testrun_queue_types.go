package v1alpha1

// QueueSpec admits the run through Kueue (kueue.sigs.k8s.io) as one workload: the target's
// resources, every runner and the pre-flight, all or nothing. A run without it is queued too
// when it carries Kueue's queue-name label, or its namespace has a LocalQueue named default.
// Without Kueue installed the run goes on at once, as without it (condition Admitted, reason
// KueueNotInstalled, says so).
type QueueSpec struct {
	// localQueue is the Kueue LocalQueue in the TestRun's namespace that admits the run. Unset:
	// the TestRun's label kueue.x-k8s.io/queue-name, as Kueue reads it on a Job; with neither,
	// the namespace's LocalQueue named default, as Kueue defaults a Job's queue. With none of
	// them the run ends Failed QueueNotNamed before it holds anything.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	LocalQueue string `json:"localQueue,omitempty"`

	// maxWait bounds how long the run waits in phase Queued for Kueue to admit it; the run then
	// ends Failed QueueTimeout. Defaults to 24h.
	// +optional
	MaxWait Duration `json:"maxWait,omitempty"`
}

// QueueNameLabel is Kueue's label naming a job's LocalQueue: a TestRun carrying it is queued as
// if spec.queue.localQueue named that queue.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// PhaseQueued: a run waiting for Kueue to admit its workload. It holds no pods: no target, no
// runner, no pre-flight.
const PhaseQueued TestRunPhase = "Queued"

// ConditionAdmitted is True once Kueue admitted the run's workload (reason Admitted), or at
// once when the run names a queue but Kueue is not installed (reason KueueNotInstalled).
// Provisioning deadlines count from its transition.
const ConditionAdmitted = "Admitted"

// Reasons of the queue: status.reason while Queued, of ConditionAdmitted, and of the endings.
const (
	// ReasonQueued: waiting for Kueue to admit the run's workload.
	ReasonQueued = "Queued"
	// ReasonAdmitted: Kueue admitted the run's workload; the run provisions.
	ReasonAdmitted = "Admitted"
	// ReasonKueueNotInstalled: a queue is named but Kueue's Workload API is not served; the run
	// went on without queueing.
	ReasonKueueNotInstalled = "KueueNotInstalled"
	// ReasonQueueNotNamed: spec.queue is set and Kueue is installed, but no LocalQueue is named:
	// not by spec.queue.localQueue, not by the label kueue.x-k8s.io/queue-name, and the
	// namespace has no LocalQueue named default. The run ended before it held anything.
	ReasonQueueNotNamed = "QueueNotNamed"
	// ReasonQueueTimeout: Kueue did not admit the run within spec.queue.maxWait.
	ReasonQueueTimeout = "QueueTimeout"
	// ReasonQueueRejected: the run's Workload could not be made (refused, or the name held by a
	// Workload this run does not own).
	ReasonQueueRejected = "QueueRejected"
	// ReasonEvicted: Kueue evicted (preempted, deactivated) the admitted workload before the run
	// ended; the runners were stopped, as Kueue stops a Job it evicts.
	ReasonEvicted = "Evicted"
)

// Messages of the queue.
const (
	// MessageQueued (LocalQueue and who named it, why Kueue has not admitted it yet).
	MessageQueued = "waiting for Kueue to admit the run through LocalQueue %s (target, runners and pre-flight as one workload, all or nothing): %s"
	// MessageAdmitted (ClusterQueue).
	MessageAdmitted = "admitted by Kueue's ClusterQueue %s"
	// MessageKueueNotInstalled (LocalQueue and who named it).
	MessageKueueNotInstalled = "the run names LocalQueue %s but Kueue is not installed (no kueue.x-k8s.io Workload API): the run was not queued"
	// MessageKueueNotInstalledUnnamed: spec.queue without a queue name, and no Kueue.
	MessageKueueNotInstalledUnnamed = "spec.queue is set but Kueue is not installed (no kueue.x-k8s.io Workload API): the run was not queued. " +
		"With Kueue it would also need a LocalQueue: spec.queue.localQueue, the label " + QueueNameLabel + ", or a LocalQueue named default in its namespace"
	// MessageQueueNotNamed (namespace).
	MessageQueueNotNamed = "spec.queue is set but names no LocalQueue, and namespace %s has no LocalQueue named default (Kueue's namespace default): " +
		"the run would not be queued. Name one in spec.queue.localQueue or label the TestRun " + QueueNameLabel + "=<queue> (kubectl get localqueues -n %[1]s), " +
		"or remove spec.queue to run without queueing"
	// MessageQueueTimeout (LocalQueue, maxWait).
	MessageQueueTimeout = "Kueue did not admit the run through LocalQueue %s within %s; check the ClusterQueue's quota " +
		"(kubectl get clusterqueue, kubectl describe workload), or raise spec.queue.maxWait"
	// MessageEvicted (Kueue's reason and message).
	MessageEvicted = "Kueue evicted the run's workload (%s: %s); the runners were stopped and the run ended. Apply it again to queue again"
)
