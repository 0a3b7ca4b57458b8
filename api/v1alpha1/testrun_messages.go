package v1alpha1

// Messages of a TestRun's status, beside the reasons in testrun_reasons.go: what a person reads
// in status.message and the conditions, with what to do. Those with a verb are format strings.
const (
	// MessageAccepted: a new run, before anything is made.
	MessageAccepted = "waiting for the target and runners"
	// MessageBaselinePinned ("baseline" or "reference", its name, source): status.comparison
	// and status.referenceComparison before the results.
	MessageBaselinePinned = "%s %s (%s) pinned; compared once the results are merged"
	// MessageReferenceIsBaseline (baseline name): status.referenceComparison when
	// spec.baseline.reference picked the baseline itself.
	MessageReferenceIsBaseline = "the fixed reference is the baseline %s itself: compared once, in status.comparison"
	// MessageWaitingForBaseline (baseline name).
	MessageWaitingForBaseline = "waiting for the baseline TestRun %s to finish before anything is provisioned"
	// MessageBaselineStillRunning (baseline name): the provisioning deadline passed meanwhile.
	MessageBaselineStillRunning = "the baseline TestRun %s had not finished by the provisioning deadline; apply this run once it finished, " +
		"or raise spec.timeouts.provisioning"
	// MessageStatusRejected (the API server's refusal): the run's status could not be written.
	MessageStatusRejected = "the API server refused this run's status (%s); its results could not be kept and the run was " +
		"ended: report it as a fleetbench bug, with the manager's log"
	// MessageProfileNotFound (spec.profile).
	MessageProfileNotFound = "Profile %q does not exist; create it or fix spec.profile (kubectl get profiles)"
	// MessageProvisioning (the target namespace).
	MessageProvisioning = "provisioning the target in namespace %s"
	// MessageCreatingRunners (the runner count).
	MessageCreatingRunners = "starting %d runners paused"
	// MessageRunning (running, all runners).
	MessageRunning = "%d of %d runners running"
	// MessageStarted (the runner count, the start skew).
	MessageStarted = "%d runners started within %s"
	// MessageCollecting: every runner ended.
	MessageCollecting = "reading and merging the runners' results"
	// MessageStopping is appended to why the runners are stopped.
	MessageStopping = "; stopping the other runners"
	// MessageWaitingUntil is appended to what a run waits for (the deadline, RFC 3339).
	MessageWaitingUntil = "; waiting until %s"
)
