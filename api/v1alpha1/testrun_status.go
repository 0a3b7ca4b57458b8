package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRunPhase is where a TestRun is in its life.
// +kubebuilder:validation:Enum=Pending;Queued;Provisioning;Starting;Running;Collecting;Succeeded;Failed
type TestRunPhase string

const (
	PhasePending      TestRunPhase = "Pending"
	PhaseProvisioning TestRunPhase = "Provisioning"
	PhaseStarting     TestRunPhase = "Starting"
	PhaseRunning      TestRunPhase = "Running"
	PhaseCollecting   TestRunPhase = "Collecting"
	PhaseSucceeded    TestRunPhase = "Succeeded"
	PhaseFailed       TestRunPhase = "Failed"
)

// Verdict is the test's outcome as the seed reports state it.
// +kubebuilder:validation:Enum=PASSED;FAILED;INCONCLUSIVE;REGRESSED
type Verdict string

const (
	VerdictPassed Verdict = "PASSED"
	VerdictFailed Verdict = "FAILED"
	// VerdictInconclusive is a run whose numbers cannot be trusted: partial results, or a
	// generator that was itself the limit.
	VerdictInconclusive Verdict = "INCONCLUSIVE"
	// VerdictRegressed is a run whose thresholds held but which is worse than its baseline
	// (spec.baseline) beyond the band, by more than noise.
	VerdictRegressed Verdict = "REGRESSED"
)

// Condition types of a TestRun.
const (
	// ConditionScriptChecked is True once k6 run accepted the test in the pre-flight
	// (fleetbench-runner check, with the runners' arguments and environment): its flags parse,
	// the script compiles, its imports resolve, its init code runs and its options make a plan.
	ConditionScriptChecked = "ScriptChecked"
	// ConditionSetupDone is True once the script's setup() ran once for the whole fleet (on
	// runner 0, through k6's REST API) and its data reached every runner. Only with more than
	// one runner: a single k6 runs setup() itself.
	ConditionSetupDone = "SetupDone"
	// ConditionTeardownDone is True once teardown() ran once, after every runner's load ended;
	// False with reason TeardownFailed and k6's error when it threw.
	ConditionTeardownDone = "TeardownDone"
	// ConditionTargetReady is True when every target component is Ready.
	ConditionTargetReady = "TargetReady"
	// ConditionRunnersReady is True when every runner is Ready and paused, waiting for the start.
	ConditionRunnersReady = "RunnersReady"
	// ConditionStarted is True once every runner acknowledged the synchronized start.
	ConditionStarted = "Started"
	// ConditionResultsCollected is True when every runner's results were read and merged.
	ConditionResultsCollected = "ResultsCollected"
	// ConditionThresholdsPassed is True when every global threshold held on the merged data.
	ConditionThresholdsPassed = "ThresholdsPassed"
	// ConditionTargetMeasured is True when the target's CPU and memory could be sampled.
	ConditionTargetMeasured = "TargetMeasured"
	// ConditionGapless is True while no runner was replaced; False (reason RunnerReplaced) once
	// one was, its message saying what the results cover (status.gaps has each gap).
	ConditionGapless = "Gapless"
	// ConditionTargetKept is True while an ended run keeps its target (spec.cleanup.target
	// KeepUntilDeleted), until the time its message names; False (reason KeepExpired) once that
	// time passed and the target was released.
	ConditionTargetKept = "TargetKept"
	// ConditionReady is the summary: True only when the TestRun finished with verdict PASSED.
	ConditionReady = "Ready"
)

// TestRunStatus is rebuilt by the operator from the world; users never write it.
// Numbers with fractions are strings with fixed decimals: CRDs avoid floats, and a fixed
// rendering keeps `kubectl get` columns stable.
type TestRunStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase: Pending, Provisioning, Starting, Running, Collecting, Succeeded or Failed.
	// +optional
	Phase TestRunPhase `json:"phase,omitempty"`

	// verdict: PASSED, FAILED, INCONCLUSIVE or REGRESSED, set when the run finished.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`

	// reason is a CamelCase word for the last transition, e.g. RunnerOOMKilled.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`

	// message explains the reason to a person, with what to do next.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// conditions a user or tool can wait on. Ready (finished and PASSED), Reconciling (in
	// progress), Stalled (ended Failed, FAILED or INCONCLUSIVE) and Complete (ended) follow
	// Kubernetes' conventions (kstatus); TargetReady, RunnersReady, Started, TargetMeasured,
	// ResultsCollected and ThresholdsPassed tell the steps.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// testID tags everything this run sends elsewhere: the testid tag of spec.outputs and the
	// testid label of the manager's metrics. It is the name and the first 8 characters of the
	// UID, so a re-created TestRun of the same name is told apart.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	TestID string `json:"testID,omitempty"`

	// progress is the merged live view of the runners while the load runs, refreshed at most
	// every progress interval (10 s) from their current windows.
	// +optional
	Progress *Progress `json:"progress,omitempty"`

	// profile is the Profile this run measures, copied at its first provisioning step: its
	// name, the generation copied and the size. The run uses this copy only, so a Profile
	// edited or deleted mid-run changes nothing for it.
	// +optional
	Profile *ProfileSnapshot `json:"profile,omitempty"`

	// admission is where Kueue's admission put the run's pods (its flavors' node labels and
	// tolerations), copied when Kueue admitted it; only for a queued run.
	// +optional
	Admission *QueueAdmission `json:"admission,omitempty"`

	// targetNamespace is the namespace the target was provisioned in.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// startTime is when the runners were un-paused.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the TestRun reached Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// parallelism is the runner count the run was made with, and why: chosen once before the
	// runners are made (from spec.parallelism, or from the load with parallelism auto).
	// +optional
	Parallelism *ParallelismStatus `json:"parallelism,omitempty"`

	// runners counts the runner pods by state.
	// +optional
	Runners *RunnerCounts `json:"runners,omitempty"`

	// results are merged from every runner's distributions, not averaged.
	// +optional
	Results *Results `json:"results,omitempty"`

	// target is what the target did under load.
	// +optional
	Target *TargetUsage `json:"target,omitempty"`

	// comparison is this run against spec.baseline, metric by metric, written once when the
	// results are merged.
	// +optional
	Comparison *Comparison `json:"comparison,omitempty"`

	// trend is where the metrics of this run's test shifted over its kept runs (spec.trend),
	// written once when the results are merged.
	// +optional
	Trend *TrendResult `json:"trend,omitempty"`

	// referenceComparison is this run against spec.baseline.reference, the fixed bar, as
	// comparison is against the baseline; when the reference is the baseline itself, its
	// message says so and nothing is compared twice.
	// +optional
	ReferenceComparison *Comparison `json:"referenceComparison,omitempty"`

	// scriptDigest is the SHA-256 of the script's text as the runners got it (for a script in
	// the runner image or on a volume, of its path and image or claim), recorded once the script
	// is found; a baseline of another digest is another script.
	// +optional
	// +kubebuilder:validation:MaxLength=80
	ScriptDigest string `json:"scriptDigest,omitempty"`

	// zones are the rows of a zoned run (spec.zones), one per zone: its state, start offset
	// and own numbers. The run's results are every zone's merged.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Zones []ZoneStatus `json:"zones,omitempty"`

	// zoneRun is what a zone run (spec.zoneOf) reports to its home run: armed, started, and
	// its runners' result envelopes.
	// +optional
	ZoneRun *ZoneRunStatus `json:"zoneRun,omitempty"`

	// plannedDuration is the longest the load may take as k6 planned it in the pre-flight
	// (gracefulStop included), e.g. 45s. A run whose length only its script knows (no
	// spec.load) takes its target's sampling interval and its progress's expected end from it.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PlannedDuration string `json:"plannedDuration,omitempty"`

	// capacity turns the results into device counts.
	// +optional
	Capacity *CapacityResult `json:"capacity,omitempty"`

	// peak is a peak test's climb, step by step, judged on the runners' merged windows while
	// the load runs.
	// +optional
	Peak *PeakResult `json:"peak,omitempty"`

	// abortOnFail are the script's abortOnFail thresholds, read from the runners once the load
	// started and judged on their merged live data, so a threshold fails the whole fleet at once
	// (k6 alone would judge each runner's share).
	// +optional
	AbortOnFail *AbortWatch `json:"abortOnFail,omitempty"`

	// gaps are the runners lost and replaced (spec.runnerLoss), one entry per replacement: the
	// parts of the load the results do not cover.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Gaps []RunnerGap `json:"gaps,omitempty"`

	// generatorBound is true when the runners, not the target, were the limit (runner CPU
	// saturated or iterations dropped): the numbers understate the target.
	// +optional
	GeneratorBound bool `json:"generatorBound,omitempty"`

	// generatorBoundReason says why generatorBound is set.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	GeneratorBoundReason string `json:"generatorBoundReason,omitempty"`
}

// Progress is how far the load has come, from the runners' live windows.
type Progress struct {
	// summary is one line for `kubectl get` (the PROGRESS column): elapsed of expected, and
	// the share done when the duration is known, e.g. "40s/1m0s 66%".
	// +kubebuilder:validation:MaxLength=128
	Summary string `json:"summary"`
	// elapsed since the start, e.g. 40s.
	// +kubebuilder:validation:MaxLength=64
	Elapsed string `json:"elapsed"`
	// expected duration of the load, when the load model or the script's options bound it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Expected string `json:"expected,omitempty"`
	// requests made so far, over every runner.
	Requests int64 `json:"requests"`
	// failed requests so far.
	Failed int64 `json:"failed"`
	// requestsPerSecond in the last complete window, two decimals.
	// +kubebuilder:validation:MaxLength=64
	RequestsPerSecond string `json:"requestsPerSecond"`
	// errorPercent is the share of failed requests so far, two decimals.
	// +kubebuilder:validation:MaxLength=64
	ErrorPercent string `json:"errorPercent"`
	// p95 of the request durations in the last complete window, e.g. 12ms.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P95 string `json:"p95,omitempty"`
	// updateTime is when the runners were last read.
	UpdateTime metav1.Time `json:"updateTime"`
}

// RunnerCounts counts runner pods by state.
type RunnerCounts struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready,omitempty"`
	Running   int32 `json:"running,omitempty"`
	Succeeded int32 `json:"succeeded,omitempty"`
	Failed    int32 `json:"failed,omitempty"`
	// startSkew is the spread of the runners' start acknowledgements, e.g. 4ms.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	StartSkew string `json:"startSkew,omitempty"`
	// memory is the runners' own memory and its leak verdict, written once the results are
	// merged, so a generator's leak is not blamed on the target.
	// +optional
	Memory *RunnerMemory `json:"memory,omitempty"`
}

// Results are the merged numbers of the load.
type Results struct {
	// partial is true when some runner's results could not be read: the numbers cover only the rest.
	// +optional
	Partial bool `json:"partial,omitempty"`
	// protocol of the requests counted in requests, throughput and latency: http (http_reqs and
	// http_req_duration), or grpc (grpc_req_duration; a call is dropped when its status is not
	// OK) when the script made no HTTP request.
	// +optional
	// +kubebuilder:validation:Enum=http;grpc
	Protocol string `json:"protocol,omitempty"`
	// +optional
	Requests *RequestCounts `json:"requests,omitempty"`
	// +optional
	Iterations *IterationCounts `json:"iterations,omitempty"`
	// +optional
	Throughput *Throughput `json:"throughput,omitempty"`
	// latency of http_req_duration (grpc_req_duration for grpc).
	// +optional
	Latency *Latency `json:"latency,omitempty"`
	// +optional
	Checks *CheckCounts `json:"checks,omitempty"`
	// thresholds evaluated on the merged data.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// metrics has every metric the runners saw, built-in and the script's own (Trend, Counter,
	// Rate, Gauge), merged, sorted by name; at most 64 (warnings say when more were left out).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Metrics []MetricResult `json:"metrics,omitempty"`
	// scenarios has a row per k6 scenario, at most 32.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Scenarios []ScenarioResult `json:"scenarios,omitempty"`
	// slowestRequests are the run's slowest requests (http_req_duration and grpc_req_duration
	// samples) over every runner, slowest first, at most 10: which requests a p99 was made of.
	// The full result's timeline keeps each window's slowest too.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	SlowestRequests []SlowRequest `json:"slowestRequests,omitempty"`
	// fullResult is the ConfigMap (owned by the TestRun) with every merged metric, sub-metric,
	// threshold and check in k6's end-of-test summary shape, gzipped JSON under summary.json.gz,
	// and the run over time (merged windows, target samples, runners, latency histogram) under
	// timeline.json.gz.
	// +optional
	FullResult *FullResultRef `json:"fullResult,omitempty"`
	// warnings say what the numbers do not cover, e.g. a tag with more values than the runners
	// keep series for.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
}

// SlowRequest is one of the run's slowest requests, as a runner saw it.
type SlowRequest struct {
	// duration of the request, e.g. 1.25s or 850ms (as latency's).
	// +kubebuilder:validation:MaxLength=64
	Duration string `json:"duration"`
	// start is when the request started: its sample's time less its duration.
	Start metav1.MicroTime `json:"start"`
	// name is k6's name tag (the URL unless the script named the request).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	URL string `json:"url,omitempty"`
	// method: an HTTP method, or a gRPC method's full name.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Method string `json:"method,omitempty"`
	// status: an HTTP status (0: no response), or a gRPC status code (0: OK).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Status string `json:"status,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Scenario string `json:"scenario,omitempty"`
	// runner is the runner pod that made the request.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Runner string `json:"runner,omitempty"`
	// traceID is the request's trace when the script propagates trace context (k6's tracing
	// instrumentation), in hex.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{1,32}$`
	TraceID string `json:"traceID,omitempty"`
}

// FullResultRef points at the full merged result.
type FullResultRef struct {
	// +kubebuilder:validation:MaxLength=253
	ConfigMap string `json:"configMap"`
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// MetricResult is one merged k6 metric, with the values k6's end-of-test summary prints for its
// type. Values are numbers as text; times are in milliseconds and data in bytes (unit).
type MetricResult struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +kubebuilder:validation:Enum=counter;gauge;rate;trend
	Type string `json:"type"`
	// unit: ms for time trends, bytes for data counters, empty for plain numbers.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Unit string `json:"unit,omitempty"`
	// count and rate (per second) of a counter; rate (share of non-zero samples) of a rate.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Count string `json:"count,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Rate string `json:"rate,omitempty"`
	// passes and fails of a rate.
	// +optional
	Passes int64 `json:"passes,omitempty"`
	// +optional
	Fails int64 `json:"fails,omitempty"`
	// value of a gauge: the last value (summed over runners); min and max for gauges and trends.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Min string `json:"min,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Max string `json:"max,omitempty"`
	// samples of a trend, and its avg, med, p90, p95 and p99.
	// +optional
	Samples int64 `json:"samples,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Avg string `json:"avg,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Med string `json:"med,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P90 string `json:"p90,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P95 string `json:"p95,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P99 string `json:"p99,omitempty"`
}

// ScenarioResult is one k6 scenario's share of the load.
type ScenarioResult struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// requests of the run's protocol made by the scenario.
	// +optional
	Requests int64 `json:"requests,omitempty"`
	// +optional
	Iterations int64 `json:"iterations,omitempty"`
	// requestsPerSecond over the whole run, two decimals.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RequestsPerSecond string `json:"requestsPerSecond,omitempty"`
	// p95 of the scenario's request durations, e.g. 11ms.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P95 string `json:"p95,omitempty"`
}

// RequestCounts: accepted and dropped requests, as every seed reports them.
type RequestCounts struct {
	Total    int64 `json:"total"`
	Accepted int64 `json:"accepted"`
	Dropped  int64 `json:"dropped"`
	// droppedPercent with two decimals, e.g. "0.00".
	// +kubebuilder:validation:MaxLength=64
	DroppedPercent string `json:"droppedPercent"`
}

// IterationCounts: script iterations, and those k6 could not start in time.
type IterationCounts struct {
	Total   int64 `json:"total"`
	Dropped int64 `json:"dropped"`
}

// Throughput of the whole load.
type Throughput struct {
	// requestsPerSecond over the measured span, two decimals.
	// +kubebuilder:validation:MaxLength=64
	RequestsPerSecond string `json:"requestsPerSecond"`
	// +optional
	DataSentBytes int64 `json:"dataSentBytes,omitempty"`
	// +optional
	DataReceivedBytes int64 `json:"dataReceivedBytes,omitempty"`
	// receivedMbps and sentMbps are the data rates in megabits per second over the measured span,
	// two decimals: payloads and protocol headers, as k6's data_received and data_sent count them
	// (for large payloads close to seed 004's goodput).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ReceivedMbps string `json:"receivedMbps,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SentMbps string `json:"sentMbps,omitempty"`
}

// Latency holds durations like 11ms or 1.25s, and the shares seed 001 reports.
type Latency struct {
	// +kubebuilder:validation:MaxLength=64
	Min string `json:"min,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	Avg string `json:"avg,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	P50 string `json:"p50,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	P90 string `json:"p90,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	P95 string `json:"p95,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	P99 string `json:"p99,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	Max string `json:"max,omitempty"`
	// aboveAveragePercent of requests took longer than the average.
	// +kubebuilder:validation:MaxLength=64
	AboveAveragePercent string `json:"aboveAveragePercent,omitempty"`
	// belowAveragePercent of requests took less than the average.
	// +kubebuilder:validation:MaxLength=64
	BelowAveragePercent string `json:"belowAveragePercent,omitempty"`
}

// CheckCounts sums k6 checks.
type CheckCounts struct {
	Passed int64 `json:"passed"`
	Failed int64 `json:"failed"`
	// byName has each check's counts, at most 64, sorted by name.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	ByName []NamedCheck `json:"byName,omitempty"`
}

// NamedCheck is one k6 check, by name (and group, for checks in a group).
type NamedCheck struct {
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Group  string `json:"group,omitempty"`
	Passed int64  `json:"passed"`
	Failed int64  `json:"failed"`
}

// ThresholdResult is one global threshold on the merged data.
type ThresholdResult struct {
	// +kubebuilder:validation:MaxLength=512
	Metric string `json:"metric"`
	// +kubebuilder:validation:MaxLength=128
	Expression string `json:"expression"`
	Passed     bool   `json:"passed"`
	// value the expression was evaluated on, e.g. "182.4".
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value,omitempty"`
}

// TargetUsage is what the target did under load, summed over its containers, from the
// kubelet's summary API: before the start, every sample interval while running, and after.
type TargetUsage struct {
	// source of the CPU and memory samples: kubeletSummary (the kubelet's /stats/summary
	// through the API server's node proxy: RSS and cumulative CPU time) or metricsAPI
	// (metrics.k8s.io, used where the node proxy is not allowed or fails: working set and CPU
	// rates only, so memory columns are working set and the CPU average is integrated from
	// the sampled rates).
	// +optional
	// +kubebuilder:validation:Enum=kubeletSummary;metricsAPI
	Source string `json:"source,omitempty"`
	// samples taken so far.
	// +optional
	Samples int32 `json:"samples,omitempty"`
	// lastSampleTime is when the target was last sampled; the next sample waits a sample interval.
	// +optional
	LastSampleTime *metav1.Time `json:"lastSampleTime,omitempty"`
	// +optional
	Memory *MemoryUsage `json:"memory,omitempty"`
	// +optional
	CPU *CPUUsage `json:"cpu,omitempty"`
	// restarts of target containers during the run.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// oomKills of target containers during the run.
	// +optional
	OOMKills int32 `json:"oomKills,omitempty"`
	// logFindings count the target's log lines matching each pattern.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	LogFindings []LogFinding `json:"logFindings,omitempty"`
}

// MemoryUsage follows seed 000's stability columns: before, after and peak are resident memory
// (RSS; the working set when the source is metricsAPI, which has no RSS); utilization is the
// working set after the load over the profile's memory.
type MemoryUsage struct {
	BeforeMiB   int64 `json:"beforeMiB,omitempty"`
	AfterMiB    int64 `json:"afterMiB,omitempty"`
	PeakMiB     int64 `json:"peakMiB,omitempty"`
	IncreaseMiB int64 `json:"increaseMiB,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	IncreasePercent string `json:"increasePercent,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	PerDeviceMiB string `json:"perDeviceMiB,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	UtilizationPercent string `json:"utilizationPercent,omitempty"`
	// trend is the leak verdict: memory fitted over time after the warm-up (stability runs).
	// +optional
	Trend *MemoryTrend `json:"trend,omitempty"`
}

// MemoryTrend is memory fitted over the run after the warm-up (pkg/judge/trend): the slope
// with its 95 % confidence interval, widened for autocorrelated samples, the projected time
// to the profile's memory, and the verdict.
type MemoryTrend struct {
	// verdict: leak when the slope's intervals (least squares and Theil–Sen) lie above zero,
	// however far the projection; stable when they do not, from a fit of at least 20 minutes
	// and 6 effective samples; insufficient otherwise (too few samples after the warm-up, too
	// short a fit, or samples that move together), the message saying which.
	// +kubebuilder:validation:Enum=leak;stable;insufficient
	Verdict string `json:"verdict"`
	// slopeMiBPerHour is the least-squares slope; slopeLow and slopeHigh its 95 % interval.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SlopeMiBPerHour string `json:"slopeMiBPerHour,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SlopeLow string `json:"slopeLow,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SlopeHigh string `json:"slopeHigh,omitempty"`
	// theilSenMiBPerHour is the robust (median pairwise) slope; a leak needs its interval
	// above zero too.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TheilSenMiBPerHour string `json:"theilSenMiBPerHour,omitempty"`
	// warmUpSeconds were cut from the load's start before the fit: spec.stability.leak.warmUp,
	// or, not given (warmUpDetected), the first half of the load (after a runner's settling),
	// held out so that the cut is not picked on the samples fitted; the message says where the
	// registration ramp ended within it.
	// +optional
	WarmUpSeconds int64 `json:"warmUpSeconds,omitempty"`
	// +optional
	WarmUpDetected bool `json:"warmUpDetected,omitempty"`
	// samples fitted after the warm-up.
	// +optional
	Samples int32 `json:"samples,omitempty"`
	// fitStartMiB and fitEndMiB are the fitted line at the first and last samples fitted, the
	// latter at fitEnd: what the report draws, and where the projection starts.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	FitStartMiB string `json:"fitStartMiB,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	FitEndMiB string `json:"fitEndMiB,omitempty"`
	// +optional
	FitEnd *metav1.Time `json:"fitEnd,omitempty"`
	// projectedFullIn is how long after fitEnd the line reaches the profile's memory, when the
	// slope is positive.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ProjectedFullIn string `json:"projectedFullIn,omitempty"`
	// horizon: a leak whose projection reaches the profile's memory further away than this is
	// still a leak, but fails no run (spec.stability.leak.failOn).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Horizon string `json:"horizon,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// CPUUsage of the target, as load per core (seed 000).
type CPUUsage struct {
	// +kubebuilder:validation:MaxLength=64
	AverageCoresPerCore string `json:"averageCoresPerCore,omitempty"`
	// +kubebuilder:validation:MaxLength=64
	PeakCoresPerCore string `json:"peakCoresPerCore,omitempty"`
	// usageCoreSecondsBefore is the target's cumulative CPU time at the start, from which the
	// average over the run is computed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UsageCoreSecondsBefore string `json:"usageCoreSecondsBefore,omitempty"`
	// estimatedCoreSeconds is, with source metricsAPI, the CPU time since the start integrated
	// from the sampled rates (the API has no cumulative counter).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	EstimatedCoreSeconds string `json:"estimatedCoreSeconds,omitempty"`
}

// LogFinding counts matching log lines and keeps a sample.
type LogFinding struct {
	// +kubebuilder:validation:MaxLength=64
	Pattern string `json:"pattern"`
	Count   int64  `json:"count"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Sample string `json:"sample,omitempty"`
	// incomplete says why count does not cover every target log line read: the pattern's
	// compiled program is larger than the manager runs, or its search stopped at its byte cap
	// or deadline, or some logs could not be read. A pattern with failAbove whose count is
	// incomplete and within the limit makes the verdict INCONCLUSIVE. Empty: the count is whole.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Incomplete string `json:"incomplete,omitempty"`
}

// CapacityResult turns rates and memory into device counts (seed 000's formulas).
type CapacityResult struct {
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PushesPerSecond string `json:"pushesPerSecond,omitempty"`
	// +optional
	IdealMaxDevices int64 `json:"idealMaxDevices,omitempty"`
	// +optional
	TypicalMaxDevices int64 `json:"typicalMaxDevices,omitempty"`
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// maxSafeDevicesByMemory is seed 000's "max safe # of devs": devices ÷ RAM utilisation,
	// the devices at which this run's RAM use, all of it taken to grow with devices, fills
	// 100 % of the profile's memory. A CapacityPlan's answer uses its own memory bound instead
	// (status.summary[].memoryBound).
	// +optional
	MaxSafeDevicesByMemory int64 `json:"maxSafeDevicesByMemory,omitempty"`
	// breakingPointDevices is where a peak test's stop rule fired.
	// +optional
	BreakingPointDevices int64 `json:"breakingPointDevices,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=fleetbench,shortName=tr
// +kubebuilder:printcolumn:name="PROFILE",type=string,JSONPath=`.spec.profile`
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="VERDICT",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="COMPARED",type=string,JSONPath=`.status.comparison.decision`
// +kubebuilder:printcolumn:name="PROGRESS",type=string,JSONPath=`.status.progress.summary`
// +kubebuilder:printcolumn:name="RPS",type=string,JSONPath=`.status.results.throughput.requestsPerSecond`
// +kubebuilder:printcolumn:name="P95",type=string,JSONPath=`.status.results.latency.p95`
// +kubebuilder:printcolumn:name="DROPPED%",type=string,JSONPath=`.status.results.requests.droppedPercent`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it is the value of the fleetbench.dev/testrun label on the runner pods and the target's objects, and a label value holds 63; choose a shorter name"

// TestRun provisions a target sized by a Profile, runs a k6 script across N runner pods
// started together, and writes the merged results, verdict and capacity into its status.
type TestRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec cannot change once created, like a Job's template: a changed test is a new TestRun.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a TestRun describes one run; create a new TestRun (or delete and re-create this one) to change it"
	// +kubebuilder:validation:XValidation:rule="has(self.profile) || !has(self.target.components)",message="spec.profile is required when spec.target.components are provisioned; name a Profile such as C1 (kubectl get profiles)"
	Spec TestRunSpec `json:"spec"`

	// +optional
	Status TestRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TestRunList is a list of TestRuns.
type TestRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TestRun `json:"items"`
}

// Outcomes of a peak test's climb.
const (
	// PeakReached: a stop rule fired; the step before is the breaking point.
	PeakReached = "Reached"
	// PeakNotReached: every step up to maxDevices held.
	PeakNotReached = "NotReached"
)

// PeakResult is a peak test's climb.
type PeakResult struct {
	// steps judged so far, in order.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	// +listType=atomic
	Steps []PeakStepResult `json:"steps,omitempty"`
	// breakingPoint: Reached (a stop rule fired) or NotReached (maxDevices held); empty while climbing.
	// +optional
	// +kubebuilder:validation:Enum=Reached;NotReached
	BreakingPoint string `json:"breakingPoint,omitempty"`
	// lastHeldDevices is the largest step that held: the breaking point when Reached.
	// +optional
	LastHeldDevices int64 `json:"lastHeldDevices,omitempty"`
	// firstFailedDevices is the step a stop rule fired on.
	// +optional
	FirstFailedDevices int64 `json:"firstFailedDevices,omitempty"`
	// stopRule says what fired, e.g. "errors 7.10% > 5%".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	StopRule string `json:"stopRule,omitempty"`
	// stopRequestTime is when the operator asked every runner to stop.
	// +optional
	StopRequestTime *metav1.Time `json:"stopRequestTime,omitempty"`
}

// PeakStepResult is one step of the climb, merged from every runner over the step's hold.
type PeakStepResult struct {
	Devices int64 `json:"devices"`
	// +optional
	Requests int64 `json:"requests,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RequestsPerSecond string `json:"requestsPerSecond,omitempty"`
	// droppedPercent of the devices' actions k6 could not start on time.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	DroppedPercent string `json:"droppedPercent,omitempty"`
	// errorPercent of requests that failed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ErrorPercent string `json:"errorPercent,omitempty"`
	// p95 of http_req_duration, e.g. "21.40ms".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	P95 string `json:"p95,omitempty"`
	// held is false for the step a stop rule fired on.
	Held bool `json:"held"`
}

// AbortWatch is what the operator watches for a fleet-wide abort.
type AbortWatch struct {
	// thresholds watched, as "metric expression"; empty when the script marks none.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=640
	// +listType=atomic
	Thresholds []string `json:"thresholds,omitempty"`
	// aborted says which threshold failed on the merged data and ended the test early.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Aborted string `json:"aborted,omitempty"`
	// abortTime is when the operator stopped the runners for it.
	// +optional
	AbortTime *metav1.Time `json:"abortTime,omitempty"`
}
