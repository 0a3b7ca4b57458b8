package v1alpha1

// QueueSpec admits the run through Kueue (kueue.sigs.k8s.io) as one workload: the target's
// resources, every runner and the pre-flight, all or nothing. Without Kueue installed it is
// ignored and the run goes on at once, as without it.
type QueueSpec struct {
	// localQueue is the Kueue LocalQueue in the TestRun's namespace that admits the run. Unset:
	// the TestRun's label kueue.x-k8s.io/queue-name, as Kueue reads it on a Job.
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
	// MessageQueued (LocalQueue, why Kueue has not admitted it yet).
	MessageQueued = "waiting for Kueue to admit the run through LocalQueue %s (target, runners and pre-flight as one workload, all or nothing): %s"
	// MessageAdmitted (ClusterQueue).
	MessageAdmitted = "admitted by Kueue's ClusterQueue %s"
	// MessageKueueNotInstalled (LocalQueue).
	MessageKueueNotInstalled = "spec.queue names LocalQueue %s but Kueue is not installed (no kueue.x-k8s.io Workload API): the run was not queued"
	// MessageQueueTimeout (LocalQueue, maxWait).
	MessageQueueTimeout = "Kueue did not admit the run through LocalQueue %s within %s; check the ClusterQueue's quota " +
		"(kubectl get clusterqueue, kubectl describe workload), or raise spec.queue.maxWait"
	// MessageEvicted (Kueue's reason and message).
	MessageEvicted = "Kueue evicted the run's workload (%s: %s); the runners were stopped and the run ended. Apply it again to queue again"
)
