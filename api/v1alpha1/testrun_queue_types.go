package v1alpha1

// QueueSpec admits the run through Kueue (kueue.sigs.k8s.io) as one workload: the target's
// resources, every runner and the pre-flight, all or nothing. A run without it is queued too
// when it carries Kueue's queue-name label, or its namespace has a LocalQueue named default.
// Without Kueue installed the run goes on at once, as without it (condition Admitted, reason
// KueueNotInstalled, says so). Where the admin requires queueing (the manager's
// --require-queue), every run is queued: one that names no LocalQueue in a namespace without
// a default one ends Failed QueueRequired, and without Kueue every run ends Failed
// KueueRequired, before it holds anything.
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
	// ReasonQueueRequired: the admin requires every run to be queued (--require-queue), and the
	// run names no LocalQueue and its namespace has none named default. It held nothing.
	ReasonQueueRequired = "QueueRequired"
	// ReasonKueueRequired: the admin requires every run to be queued (--require-queue), but
	// Kueue's API was not served when the manager started. It held nothing.
	ReasonKueueRequired = "KueueRequired"
	// ReasonFlavorUnusable: Kueue admitted the run on ResourceFlavors whose node labels or
	// tolerations cannot be put on its pods (a flavor gone, labels that contradict the run's
	// own nodeSelector or each other, more than a pod set can carry). It held nothing.
	ReasonFlavorUnusable = "FlavorUnusable"
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
	// MessageQueueRequired (namespace).
	MessageQueueRequired = "this cluster requires every TestRun to be queued through Kueue (the manager's --require-queue), and the run names " +
		"no LocalQueue while namespace %s has none named default: create a LocalQueue named default in namespace %[1]s " +
		"(or ask your admin to), or set spec.queue.localQueue (or the label " + QueueNameLabel + ") to one of its LocalQueues " +
		"(kubectl get localqueues -n %[1]s), then apply the run again"
	// MessageKueueRequired: required, and Kueue not served.
	MessageKueueRequired = "this cluster requires every TestRun to be queued through Kueue (the manager's --require-queue), but Kueue's API " +
		"(kueue.x-k8s.io/v1beta2 Workloads and LocalQueues) was not served when the manager started, so no run can be admitted: " +
		"an admin must install Kueue and restart the fleetbench manager (or turn requireQueue off), then apply the run again"
	// MessageFlavorUnusable (what is wrong, with the flavor and pod set).
	MessageFlavorUnusable = "Kueue admitted the run, but its ResourceFlavors cannot be put on the run's pods: %s. Nothing was made and the " +
		"Workload is finished, so its quota is free; fix the ResourceFlavor or the run's nodeSelector, then apply the run again"
	// MessageEvicted (Kueue's reason and message).
	MessageEvicted = "Kueue evicted the run's workload (%s: %s); the runners were stopped and the run ended. Apply it again to queue again"
)

// QueueAdmission is where Kueue's admission puts the run's pods: for each pod set of its
// Workload, the node labels and tolerations of the ResourceFlavors Kueue admitted it on, copied
// from the flavors once, when Kueue admitted the run. The pods of a pod set carry them as Kueue's
// job framework puts them on a Job's pods (pkg/podset): the labels added to the pod's
// nodeSelector, the tolerations to its own.
type QueueAdmission struct {
	// clusterQueue is the ClusterQueue that admitted the run.
	// +kubebuilder:validation:MaxLength=253
	ClusterQueue string `json:"clusterQueue"`

	// podSets are the Workload's pod sets as admitted.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=3
	PodSets []AdmittedPodSet `json:"podSets,omitempty"`
}

// The bounds of an AdmittedPodSet, as its markers state them. A ResourceFlavor carries at most
// 8 node labels and 8 tolerations; a pod set gets one flavor per resource group.
const (
	MaxAdmittedFlavors     = 16
	MaxAdmittedNodeLabels  = 32
	MaxAdmittedTolerations = 32
)

// AdmittedPodSet is one pod set's placement by its flavors.
type AdmittedPodSet struct {
	// name of the pod set: target (the target's pods), runners (every runner) or preflight.
	// +kubebuilder:validation:Enum=target;runners;preflight
	Name string `json:"name"`

	// flavors are the ResourceFlavors Kueue assigned the pod set's resources, each once, sorted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	Flavors []string `json:"flavors,omitempty"`

	// nodeSelector is the flavors' nodeLabels, added to the pods' nodeSelector.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="nodeSelector keys are qualified names and values label values"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations are the flavors' tolerations, added to the pods' own.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Tolerations []SnapshotToleration `json:"tolerations,omitempty"`
}
