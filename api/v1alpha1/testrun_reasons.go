package v1alpha1

// Condition types every fleetbench object that runs to an end carries, after Kubernetes'
// conventions and kstatus: a GitOps tool or `kubectl wait` reads these without knowing the kind.
const (
	// ConditionReconciling is True while the run is in progress (kstatus: InProgress).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the run ended Failed or with a FAILED or INCONCLUSIVE
	// verdict (kstatus: Failed).
	ConditionStalled = "Stalled"
	// ConditionComplete is True once the run has ended, whatever its verdict:
	// `kubectl wait --for=condition=Complete` waits for the end.
	ConditionComplete = "Complete"
)

// Reasons of the Ready condition. Ready is True only for a run that finished and PASSED.
const (
	ReasonPassed       = "Passed"
	ReasonFailed       = "Failed"
	ReasonInconclusive = "Inconclusive"
	// ReasonRegressed: the run is worse than its baseline (verdict REGRESSED).
	ReasonRegressed  = "Regressed"
	ReasonInProgress = "InProgress"
)

// Reasons a TestRun ends Failed: status.reason, and the reason of Stalled. Users and tools
// `kubectl wait` on them, so they are part of the API and never change meaning.
const (
	// ReasonProfileNotFound: spec.profile names no Profile, still after the provisioning timeout.
	ReasonProfileNotFound = "ProfileNotFound"
	// ReasonNotPermitted: the TestRun asks for more than its namespace may have: a target Pod
	// Security level above the namespace's, a Profile whose namespaceSelector excludes it, a
	// resource its Profile does not grant (a GPU, hugepages), in a shared target namespace a
	// target reading a Secret (spec.target.components[].env[].valueFrom.secretKeyRef), or more
	// runners than the operator lets a namespace have in flight (--max-runners-per-namespace).
	ReasonNotPermitted = "NotPermitted"
	// ReasonPullSecretNotUsable: a Secret in spec.target.imagePullSecrets is missing, still after
	// the provisioning timeout, or is not of type kubernetes.io/dockerconfigjson.
	ReasonPullSecretNotUsable = "PullSecretNotUsable"
	// ReasonInvalidTarget: the target cannot be built from the spec and profile.
	ReasonInvalidTarget = "InvalidTarget"
	// ReasonTargetNamespaceConflict: the target namespace exists and belongs to someone else.
	ReasonTargetNamespaceConflict = "TargetNamespaceConflict"
	// ReasonTargetNamespaceNotFound: the namespace an admin names for every target (the
	// operator's --target-namespace, the chart's targetNamespace) was missing, still after the
	// provisioning timeout. The operator never creates it.
	ReasonTargetNamespaceNotFound = "TargetNamespaceNotFound"
	// ReasonTargetLimitReached: the TestRun's namespace already held as many provisioned targets
	// as the operator allows (its --max-targets-per-namespace, the chart's maxTargetsPerNamespace),
	// still at the provisioning deadline. Until then the run waits Pending with this reason.
	ReasonTargetLimitReached = "TargetLimitReached"
	// ReasonRunnerLimitReached: the TestRun's namespace already had so many runners in flight
	// that this run's would pass the operator's cap (its --max-runners-per-namespace, the chart's
	// maxRunnersPerNamespace), still at the provisioning deadline. Until then the run waits
	// Pending with this reason, holding no runner. A run asking more than the cap alone ends
	// NotPermitted at once.
	ReasonRunnerLimitReached = "RunnerLimitReached"
	// ReasonTargetQuotaExceeded: the TestRun's namespace's ResourceQuota had no room for the
	// target's requests and limits (charged there by a never-scheduled pod, since the target runs
	// in another namespace), still at the provisioning deadline; until then the run waits with
	// this reason. After the target was made: that pod went and the quota had no room to charge
	// the target again.
	ReasonTargetQuotaExceeded = "TargetQuotaExceeded"
	// ReasonTargetChargeRefused: the API server refused the pod that charges the target to the
	// TestRun's namespace for another reason than a full quota (a LimitRange's maximum, a
	// policy), or a pod not the run's holds its name.
	ReasonTargetChargeRefused = "TargetChargeRefused"
	// ReasonTargetImageNotPresent: a target image is not on the node and will not be pulled.
	ReasonTargetImageNotPresent = "TargetImageNotPresent"
	// ReasonTargetRunsAsRoot: a target image runs as root where the Pod Security level forbids it.
	ReasonTargetRunsAsRoot = "TargetRunsAsRoot"
	// ReasonTargetNotReady: the target was not Ready within spec.timeouts.provisioning.
	ReasonTargetNotReady = "TargetNotReady"
	// ReasonTargetLost: after the start, the target's namespace was deleted (or began to be),
	// or its workloads were: the load measured a target going away. The runners are stopped and
	// what they measured until then is kept, marked partial.
	ReasonTargetLost = "TargetLost"
	// ReasonInvalidLoad: spec.load cannot be turned into a k6 configuration.
	ReasonInvalidLoad = "InvalidLoad"
	// ReasonScriptNotFound: the script's ConfigMap or key was missing past the provisioning timeout.
	ReasonScriptNotFound = "ScriptNotFound"
	// ReasonScriptInvalid: k6 could not load the script (syntax, an import, its options), found
	// by the pre-flight before anything was provisioned.
	ReasonScriptInvalid = "ScriptInvalid"
	// ReasonSetupFailed: the script's setup(), run once for the fleet on runner 0, threw or
	// returned more data than the runners are handed.
	ReasonSetupFailed = "SetupFailed"
	// ReasonRunnerRejected: the API server refused a runner Job (admission, quota policy).
	ReasonRunnerRejected = "RunnerRejected"
	// ReasonRunnerImageNotPresent: the runner image is not on the node and will not be pulled.
	ReasonRunnerImageNotPresent = "RunnerImageNotPresent"
	// ReasonRunnerUnschedulable: a runner pod found no node within spec.timeouts.runnersReady.
	ReasonRunnerUnschedulable = "RunnerUnschedulable"
	// ReasonRunnerNotCreated: a runner Job made no pod (e.g. a ResourceQuota) in time.
	ReasonRunnerNotCreated = "RunnerNotCreated"
	// ReasonRunnersNotReady: runner pods exist but were not Ready in time.
	ReasonRunnersNotReady = "RunnersNotReady"
	// ReasonRunnerFailedBeforeStart: a runner ended before the synchronized start (script error,
	// target unreachable from the runner).
	ReasonRunnerFailedBeforeStart = "RunnerFailedBeforeStart"
	// ReasonStartFailed: a runner did not acknowledge the start within spec.timeouts.runnersReady.
	ReasonStartFailed = "StartFailed"
	// ReasonRunnerOOMKilled: a runner was killed for exceeding its memory limit.
	ReasonRunnerOOMKilled = "RunnerOOMKilled"
	// ReasonRunnerLost: a runner's pod went away (deleted, evicted, its node lost, killed by a signal).
	ReasonRunnerLost = "RunnerLost"
	// ReasonRunnerNotReplaceable: a runner was lost under spec.runnerLoss.policy Replace, but the
	// load cannot be resumed for the remaining time (the script's own scenarios, iterations).
	ReasonRunnerNotReplaceable = "RunnerNotReplaceable"
	// ReasonRunnerFailed: a runner's k6 ended with an error of its own (script exception, …).
	ReasonRunnerFailed = "RunnerFailed"
	// ReasonRunTimeout: the load ran past spec.timeouts.run and was stopped.
	ReasonRunTimeout = "RunTimeout"
	// ReasonNoResults: no runner left a readable result envelope.
	ReasonNoResults = "NoResults"
	// ReasonStatusRejected: the API server refused the run's status even after every list and
	// string was cut to the CRD's bounds; the run ends with a short status instead of retrying
	// the same refused write forever. The refusal is in the message and the manager's log.
	ReasonStatusRejected = "StatusRejected"
	// ReasonRunnerResultRejected: a runner's result envelope was refused unread because decoding
	// it would take more memory than the operator allows one envelope (too many metrics, series
	// or windows, or a hostile pod): the run's results are lost, other runs are unaffected.
	ReasonRunnerResultRejected = "RunnerResultRejected"
	// ReasonRecordTampered: a record the operator keeps in the run's namespace (its results,
	// a replaced runner's results, the kept record its baseline names) failed its seal: it was
	// changed, or copied, by someone other than the operator. Nothing in it was read.
	ReasonRecordTampered = "RecordTampered"
	// ReasonEgressNotAllowed: spec.target.egress names a block outside the admin's allow-list
	// (the operator's --egress-allow-list, the chart's egressAllowList). The chart's admission
	// policy refuses it at apply; this is the manager's own check, where that policy is missing.
	ReasonEgressNotAllowed = "EgressNotAllowed"
)

// FailureReasons lists every reason a TestRun can end Failed with.
var FailureReasons = []string{
	ReasonProfileNotFound, ReasonNotPermitted, ReasonPullSecretNotUsable, ReasonInvalidTarget, ReasonTargetNamespaceConflict,
	ReasonTargetNamespaceNotFound, ReasonTargetLimitReached, ReasonRunnerLimitReached, ReasonTargetQuotaExceeded, ReasonTargetChargeRefused,
	ReasonTargetImageNotPresent, ReasonTargetRunsAsRoot, ReasonTargetNotReady, ReasonTargetLost, ReasonInvalidLoad,
	ReasonScriptNotFound, ReasonScriptInvalid, ReasonSetupFailed, ReasonRunnerRejected,
	ReasonRunnerImageNotPresent, ReasonRunnerUnschedulable, ReasonRunnerNotCreated, ReasonRunnersNotReady,
	ReasonRunnerFailedBeforeStart, ReasonStartFailed, ReasonRunnerOOMKilled, ReasonRunnerLost, ReasonRunnerNotReplaceable, ReasonRunnerFailed,
	ReasonRunTimeout, ReasonNoResults, ReasonStatusRejected, ReasonRunnerResultRejected, ReasonBaselineNotFound, ReasonBaselineMismatch, ReasonRecordTampered, ReasonEgressNotAllowed,
	// The queue's (testrun_queue_types.go).
	ReasonQueueNotNamed, ReasonQueueTimeout, ReasonQueueRejected, ReasonEvicted, ReasonQueueRequired, ReasonKueueRequired, ReasonFlavorUnusable,
	// Dispatching's (testrun_dispatch.go).
	ReasonNotDispatchable,
}

// Reasons of a TestRun still in progress (status.reason while not ended) and of its end.
const (
	ReasonAccepted = "Accepted"
	// ReasonWaitingForBaseline: spec.baseline names a TestRun that has not finished yet; the
	// run waits for it until its provisioning deadline, then ends Failed BaselineNotFound.
	ReasonWaitingForBaseline         = "WaitingForBaseline"
	ReasonProvisioning               = "Provisioning"
	ReasonTargetNamespaceTerminating = "TargetNamespaceTerminating"
	ReasonWaitingForTarget           = "WaitingForTarget"
	ReasonWaitingForScript           = "WaitingForScript"
	ReasonWaitingForPullSecret       = "WaitingForPullSecret"
	ReasonCheckingScript             = "CheckingScript"
	ReasonCreatingRunners            = "CreatingRunners"
	ReasonWaitingForRunners          = "WaitingForRunners"
	ReasonWaitingForTargetSample     = "WaitingForTargetSample"
	ReasonRunning                    = "Running"
	ReasonStoppingRunners            = "StoppingRunners"
	ReasonCollecting                 = "Collecting"
	// ReasonCompleted: the run ended Succeeded; its verdict says whether it passed.
	ReasonCompleted = "Completed"
	// ReasonVerdictFailed and ReasonVerdictInconclusive are Stalled's reasons for a run that
	// completed with that verdict.
	ReasonVerdictFailed       = "VerdictFailed"
	ReasonVerdictInconclusive = "VerdictInconclusive"
	ReasonVerdictRegressed    = "VerdictRegressed"
	// ReasonBaselineNotFound: spec.baseline named no TestRun and no kept results in the run's
	// namespace (onMissing Fail).
	ReasonBaselineNotFound = "BaselineNotFound"
	// ReasonBaselineMismatch: the baseline (or reference) ran another experiment: another load,
	// script, type or Profile than this run, and spec.baseline.allowDifferent does not allow it.
	ReasonBaselineMismatch = "BaselineMismatch"
)

// Reasons of the per-step conditions (TargetReady, RunnersReady, ScriptChecked, SetupDone,
// Started, TargetMeasured, ResultsCollected, TeardownDone). Set only by the compose step, from
// what the phases decided.
const (
	// ReasonReady and ReasonNotReady: the target's components or the runners are (not yet) Ready.
	ReasonReady    = "Ready"
	ReasonNotReady = "NotReady"
	// ReasonExternal: TargetReady for a target fleetbench does not provision.
	ReasonExternal = "External"
	// ReasonLoaded: ScriptChecked, k6 run accepted the test in the pre-flight.
	ReasonLoaded = "Loaded"
	// ReasonStepRunning: SetupDone while setup() runs on runner 0.
	ReasonStepRunning = "Running"
	// ReasonRanOnce: SetupDone or TeardownDone, the step ran once for the whole fleet.
	ReasonRanOnce = "RanOnce"
	// ReasonNotRequested: SetupDone or TeardownDone, the test skips the step (--no-setup, --no-teardown).
	ReasonNotRequested = "NotRequested"
	// ReasonTeardownFailed: TeardownDone, teardown() failed on runner 0.
	ReasonTeardownFailed = "TeardownFailed"
	// ReasonStarted and ReasonResumeFailed: Started, every runner was un-paused, or one did not answer.
	ReasonStarted      = "Started"
	ReasonResumeFailed = "ResumeFailed"
	// ReasonNoGaps and ReasonRunnerReplaced: Gapless, no runner was replaced, or one was (the
	// message says what the results cover); ReasonRunnerReplaced is also the event's reason.
	ReasonNoGaps         = "NoGaps"
	ReasonRunnerReplaced = "RunnerReplaced"
	// ReasonSampled and ReasonSampleFailed: TargetMeasured, the target was (not) sampled.
	ReasonSampled      = "Sampled"
	ReasonSampleFailed = "SampleFailed"
	// ReasonReading, ReasonCollected and ReasonPartial: ResultsCollected, the envelopes are
	// still being read, were all merged, or only some could be.
	ReasonReading   = "Reading"
	ReasonCollected = "Collected"
	ReasonPartial   = "Partial"
	// ReasonKept and ReasonKeepExpired: TargetKept, the ended run's target is kept until the
	// time the message names, or that time passed and the target was released (also the event's
	// reason).
	ReasonKept        = "Kept"
	ReasonKeepExpired = "KeepExpired"
)
