package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestType is what a TestRun sets out to learn (seed 000's three kinds, plus a plain load test).
// +kubebuilder:validation:Enum=load;stability;benchmark;peak
type TestType string

const (
	// TestTypeLoad runs the script with its own options once.
	TestTypeLoad TestType = "load"
	// TestTypeStability holds a steady device load for hours and watches memory growth and logs.
	TestTypeStability TestType = "stability"
	// TestTypeBenchmark times a fixed amount of device work, for comparing machine sizes.
	TestTypeBenchmark TestType = "benchmark"
	// TestTypePeak raises the device count step by step until the target breaks.
	TestTypePeak TestType = "peak"
)

// TestRunSpec describes one distributed load test: what to provision, what to run, how hard,
// and what counts as passing. Field names shared with k6-operator's TestRun (script.configMap,
// parallelism, separate, arguments, runner) mean the same so manifests migrate easily.
//
// +kubebuilder:validation:XValidation:rule="(has(self.parallelism) ? (type(self.parallelism) == int && self.parallelism <= 1) : !(has(self.load) && has(self.load.devices))) || ((!has(self.args) || !self.args.exists(a, a.matches('^--rps(=|$)'))) && (!has(self.arguments) || !self.arguments.matches('(^|\\\\s)--rps(=|\\\\s|$)')))",message="--rps limits each k6 process: with spec.parallelism above 1 the fleet would send parallelism times that rate; use an arrival-rate scenario (constant-arrival-rate), which fleetbench splits across the runners, or spec.parallelism: 1 (unset with spec.load.devices is auto, which may choose more)"
// +kubebuilder:validation:XValidation:rule="!has(self.load) || ((!has(self.args) || !self.args.exists(a, a.matches('^--config(=|$)') || a.matches('^-[^-=cdeistu]*c'))) && (!has(self.arguments) || !self.arguments.matches('(^|\\\\s)(--config(=|\\\\s|$)|-[^-=\\\\scdeistu]*c)')))",message="spec.load gives the runners fleetbench's k6 config with --config, and a --config (-c) in spec.args would replace it: put those options in the script or in spec.args flags"
// +kubebuilder:validation:XValidation:rule="!has(self.arguments) || !has(self.args)",message="set spec.args or spec.arguments, not both: spec.args is the argv form that replaces arguments"
// +kubebuilder:validation:XValidation:rule="self.type != 'stability' || (has(self.load) && has(self.load.duration))",message="spec.load.duration is required when spec.type is stability (for example 2h)"
// +kubebuilder:validation:XValidation:rule="self.type != 'stability' || !has(self.load) || !has(self.load.iterations)",message="spec.load.iterations cannot be used when spec.type is stability; a stability test is bounded by spec.load.duration"
// +kubebuilder:validation:XValidation:rule="self.type != 'benchmark' || (has(self.load) && has(self.load.devices) && has(self.load.iterations))",message="spec.load.devices and spec.load.iterations are required when spec.type is benchmark (a benchmark times a fixed amount of device work)"
// +kubebuilder:validation:XValidation:rule="self.type != 'peak' || (has(self.load) && has(self.load.devices))",message="spec.load.devices and spec.load.period are required when spec.type is peak (the starting device count)"
// +kubebuilder:validation:XValidation:rule="(self.type == 'peak') == has(self.peak)",message="spec.peak is required when spec.type is peak, and only allowed then"
// +kubebuilder:validation:XValidation:rule="self.type == 'stability' || !has(self.stability)",message="spec.stability is only allowed when spec.type is stability"
// +kubebuilder:validation:XValidation:rule="self.type == 'benchmark' || !has(self.benchmark)",message="spec.benchmark is only allowed when spec.type is benchmark"
// +kubebuilder:validation:XValidation:rule="!has(self.load) || !has(self.load.devices) || self.type == 'peak' || has(self.load.duration) || has(self.load.iterations)",message="spec.load with devices needs duration or iterations to bound the test (a peak test is bounded by spec.peak instead)"
// +kubebuilder:validation:XValidation:rule="!has(self.peak) || !has(self.peak.maxDevices) || !has(self.load) || !has(self.load.devices) || self.peak.maxDevices > self.load.devices",message="spec.peak.maxDevices must be greater than spec.load.devices, the starting point"
// +kubebuilder:validation:XValidation:rule="!has(self.peak) || !has(self.peak.maxDevices) || !has(self.load) || !has(self.load.devices) || (self.peak.maxDevices - self.load.devices + self.peak.stepDevices - 1) / self.peak.stepDevices <= 199",message="spec.peak: the climb from spec.load.devices to spec.peak.maxDevices by spec.peak.stepDevices takes more than 200 steps; raise stepDevices or lower maxDevices"
// +kubebuilder:validation:XValidation:rule="!has(self.separate) || !self.separate || !has(self.parallelism) || type(self.parallelism) == string || self.parallelism <= 100",message="spec.separate puts every runner on its own node: at most 100 runners (spec.parallelism); unset spec.separate to let the scheduler spread more runners over the nodes"
// +kubebuilder:validation:XValidation:rule="has(self.script.localFile) || !has(self.runner) || ((!has(self.runner.volumeMounts) || self.runner.volumeMounts.all(m, m.mountPath != '/test' && !m.mountPath.startsWith('/test/'))) && (!has(self.runner.initContainers) || self.runner.initContainers.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, m.mountPath != '/test' && !m.mountPath.startsWith('/test/')))))",message="spec.runner volumeMounts must not use /test: fleetbench mounts the script's volume there too, as k6-operator does (except for spec.script.localFile); mount the volume elsewhere, e.g. /data"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || type(self.parallelism) == int || (has(self.load) && has(self.load.devices))",message="spec.parallelism: auto sizes the fleet from spec.load.devices (and period); without a device model the load is only known to the script: give a number"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerCapacity) || (has(self.parallelism) ? type(self.parallelism) == string : (has(self.load) && has(self.load.devices)))",message="spec.runnerCapacity is used only when parallelism is auto (or unset with spec.load.devices); remove it or set parallelism: auto"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerCapacity) || !has(self.runnerCapacity.vus) || (has(self.load) && has(self.load.iterations) && self.type != 'peak')",message="spec.runnerCapacity.vus is read only by a load of spec.load.iterations (every device a VU: type benchmark, or load with iterations); this run's arrival-rate load (devices over period) reads spec.runnerCapacity.iterationsPerSecond: set that instead"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerCapacity) || !has(self.runnerCapacity.iterationsPerSecond) || !has(self.load) || !has(self.load.iterations) || self.type == 'peak'",message="spec.runnerCapacity.iterationsPerSecond is read only by an arrival-rate load (devices over period); this run's load of spec.load.iterations runs every device as a VU and reads spec.runnerCapacity.vus: set that instead"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerLoss) || !has(self.runnerLoss.policy) || self.runnerLoss.policy != 'Replace' || !has(self.load) || !has(self.load.iterations)",message="spec.runnerLoss.policy Replace needs a load bounded by time: a load of spec.load.iterations cannot be resumed exactly (k6 cannot say which iterations the lost runner finished); use spec.load.duration, or policy Fail"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerLoss) || !has(self.runnerLoss.policy) || self.runnerLoss.policy != 'Replace' || (has(self.parallelism) && (type(self.parallelism) == string || self.parallelism >= 2))",message="spec.runnerLoss.policy Replace needs spec.parallelism 2 or more (or auto, checked when it chooses): a lone runner runs setup() itself, so the operator holds no setup() data to hand a replacement"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerLoss) || !has(self.runnerLoss.policy) || self.runnerLoss.policy != 'Replace' || (has(self.load) && (has(self.load.duration) || (has(self.type) && self.type == 'peak')))",message="spec.runnerLoss.policy Replace needs a load bounded by time (spec.load.duration, or a peak climb): the script's own scenarios cannot be resumed for their remaining time; use policy Fail"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerLoss) || (!has(self.runnerLoss.maxReplacements) && !has(self.runnerLoss.maxGaps)) || (has(self.runnerLoss.policy) ? self.runnerLoss.policy == 'Replace' : (has(self.type) && self.type == 'stability'))",message="spec.runnerLoss.maxReplacements and maxGaps apply only when lost runners are replaced: set spec.runnerLoss.policy Replace (the default for type stability only), or remove them"
// +kubebuilder:validation:XValidation:rule="!has(self.runnerLoss) || !has(self.runnerLoss.drain) || self.runnerLoss.drain != 'Replace' || (has(self.runnerLoss.policy) ? self.runnerLoss.policy == 'Replace' : self.type == 'stability')",message="spec.runnerLoss.drain Replace sends drained runners through the replacement path: it needs spec.runnerLoss.policy Replace (the default for type stability only)"
// +kubebuilder:validation:XValidation:rule="!has(self.managedBy) || (has(self.parallelism) ? type(self.parallelism) == int : !(has(self.load) && has(self.load.devices)))",message="spec.managedBy: a run Kueue's MultiKueue dispatches needs a fixed runner count, so that the manager cluster queues the fleet the worker runs: set spec.parallelism to a number (auto is chosen from measurements the worker cluster does not share)"
// +kubebuilder:validation:XValidation:rule="!has(self.zones) || (!has(self.managedBy) && !has(self.parallelism) && !has(self.zoneOf) && !has(self.runnerCapacity))",message="spec.zones: each zone's runners make the runner count, and fleetbench dispatches the zones itself; remove spec.parallelism, spec.runnerCapacity, spec.managedBy and spec.zoneOf"
// +kubebuilder:validation:XValidation:rule="!has(self.zones) || !has(self.script.volumeClaim)",message="spec.zones: a script on a volumeClaim is not implemented yet for zones (the volume is not in the other clusters); use spec.script.inline, or a configMap of the same name in every zone's namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.zones) || !has(self.type) || self.type != 'peak'",message="spec.zones with type peak is not implemented yet: a peak's steps are driven live; use type load, stability or benchmark"
// +kubebuilder:validation:XValidation:rule="!has(self.zoneOf) || (has(self.parallelism) && type(self.parallelism) == int && self.zoneOf.firstSegment + self.parallelism <= self.zoneOf.fleetRunners)",message="spec.zoneOf: a zone run holds spec.parallelism segments from firstSegment, all within fleetRunners; fleetbench sets these on the zone runs it makes"
type TestRunSpec struct {
	// type is what the test sets out to learn: load (default), stability, benchmark or peak.
	// +optional
	// +kubebuilder:default=load
	Type TestType `json:"type,omitempty"`

	// profile names the Profile that sizes the target. Required when the target is provisioned.
	// Case does not matter: the seeds' C1 names the Profile c1 (Kubernetes names are lower-case).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii().matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be the name of a Profile, such as C1 or h3 (kubectl get profiles)"
	Profile string `json:"profile,omitempty"`

	// target is the system under test: components fleetbench provisions, or an external URL.
	// +required
	Target TargetSpec `json:"target"`

	// script is the k6 script every runner executes, unchanged.
	// +required
	Script ScriptSpec `json:"script"`

	// load is the device-fleet load model. Omit it to let the script's own k6 options decide.
	// +optional
	Load *LoadSpec `json:"load,omitempty"`

	// parallelism is how many runner pods share the load, each with its own execution segment:
	// a number from 1 to 5000, or auto, which chooses it from spec.load's devices, the runner's
	// CPU and the runner capacity (spec.runnerCapacity, else the one measured in this namespace
	// by an earlier run of the same script). Unset is auto when spec.load.devices is set and 1
	// otherwise. The choice and its reason are in status.parallelism.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self == 'auto' : (self >= 1 && self <= 5000)",message="spec.parallelism must be a number from 1 to 5000, or auto"
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// runnerCapacity is how much load one runner carries, for parallelism auto. Without it the
	// capacity measured in this namespace by an earlier run of the same script is used.
	// +optional
	RunnerCapacity *RunnerCapacitySpec `json:"runnerCapacity,omitempty"`

	// separate puts every runner on its own node, as k6-operator's field of the same name does
	// (required pod anti-affinity among the runners), so at most 100 runners. A cluster with
	// fewer schedulable nodes than runners ends the run Failed RunnerUnschedulable at once.
	// Without it runners are spread across nodes as evenly as the scheduler can.
	// +optional
	Separate bool `json:"separate,omitempty"`

	// arguments are extra k6 run flags as one string split at spaces, e.g. "--tag team=checkout
	// --summary-trend-stats=avg,p(99)"; kept for manifests from k6-operator. A value with a space
	// cannot be written here (quotes are refused: nothing would remove them): use args.
	// Short flags are read as k6 reads a group: its letters up to the first that takes a value
	// (c, d, e, i, s, t, u: the rest is that value), so -qo and -vo are -o, and -eDATA=1 is -e.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('\"') && !self.contains(\"'\")",message="must not contain quotes: arguments is split at spaces, so a quoted value would reach k6 in pieces, quotes included; write the flags as an argv array in spec.args instead, e.g. args: [\"--tag\", \"team=a b\"]"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|\\\\s)--(execution-segment|execution-segment-sequence|paused)(=|\\\\s|$)') && !self.matches('(^|\\\\s)-[^-=\\\\scdeistu]*p')",message="must not set --execution-segment, --execution-segment-sequence or --paused (-p): fleetbench sets them to split and synchronize the runners"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|\\\\s)--(summary-export|summary-mode|summary-trend-stats|summary-time-unit|new-machine-readable-summary)(=|\\\\s|$)')",message="must not set --summary-export, --summary-mode, --summary-trend-stats, --summary-time-unit or --new-machine-readable-summary: each runner holds only its share and runs with --summary-mode=disabled; fleetbench keeps the merged end-of-test summary, in k6's --summary-export shape, in the results ConfigMap (status.results), and kubectl fleetbench report NAME --format json writes it"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|\\\\s)--no-thresholds(=|\\\\s|$)')",message="must not set --no-thresholds: every runner already runs without k6's own thresholds, and fleetbench judges the script's thresholds and spec.thresholds on the merged results; remove the thresholds to not judge them"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|\\\\s)--(linger|help)(=|\\\\s|$)') && !self.matches('(^|\\\\s)-[^-=\\\\scdeistu]*[lh]')",message="must not set --linger (-l) or --help (-h): a runner must end for its results to be collected (fleetbench holds runner 0 itself while teardown() runs), and --help runs no test"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|\\\\s)--(out|o|address|a)(=|\\\\s|$)') && !self.matches('(^|\\\\s)-[^-=\\\\scdeistu]*[oa]')",message="must not set --out, -o, --address or -a, alone or grouped with other short flags (-qo): the runners keep fleetbench's own output and REST address; list k6 outputs (Prometheus remote write, OpenTelemetry) in spec.outputs instead"
	Arguments string `json:"arguments,omitempty"`

	// args are extra k6 run flags as an argv array, one element per argument, passed to k6 as
	// they are (no shell, no splitting), e.g. ["--tag", "team=a b"]; as k6-operator 1.6's args.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(execution-segment|execution-segment-sequence|paused)(=|$)') && !a.matches('^-[^-=cdeistu]*p'))",message="must not set --execution-segment, --execution-segment-sequence or --paused (-p): fleetbench sets them to split and synchronize the runners"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(summary-export|summary-mode|summary-trend-stats|summary-time-unit|new-machine-readable-summary)(=|$)'))",message="must not set --summary-export, --summary-mode, --summary-trend-stats, --summary-time-unit or --new-machine-readable-summary: each runner holds only its share and runs with --summary-mode=disabled; fleetbench keeps the merged end-of-test summary, in k6's --summary-export shape, in the results ConfigMap (status.results), and kubectl fleetbench report NAME --format json writes it"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--no-thresholds(=|$)'))",message="must not set --no-thresholds: every runner already runs without k6's own thresholds, and fleetbench judges the script's thresholds and spec.thresholds on the merged results; remove the thresholds to not judge them"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(linger|help)(=|$)') && !a.matches('^-[^-=cdeistu]*[lh]'))",message="must not set --linger (-l) or --help (-h): a runner must end for its results to be collected (fleetbench holds runner 0 itself while teardown() runs), and --help runs no test"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(out|address)(=|$)') && !a.matches('^-[^-=cdeistu]*[oa]'))",message="must not set --out, -o, --address or -a, alone or grouped with other short flags (-qo): the runners keep fleetbench's own output and REST address; list k6 outputs (Prometheus remote write, OpenTelemetry) in spec.outputs instead"
	Args []string `json:"args,omitempty"`

	// outputs stream every runner's samples to k6's own outputs too, each tagged with
	// testid=status.testID so the runners of one run are one test in Grafana.
	// +optional
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(o, self.exists_one(p, p.type == o.type))",message="spec.outputs: at most one output of each type (k6 configures each through its environment)"
	// +listType=atomic
	Outputs []OutputSpec `json:"outputs,omitempty"`

	// runner shapes the runner pods.
	// +optional
	Runner *RunnerSpec `json:"runner,omitempty"`

	// thresholds are global pass/fail rules evaluated on the results merged from all runners
	// (k6 alone evaluates them per runner). Keys are metric names, optionally with a tag filter:
	// http_req_duration{scenario:push}.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-zA-Z_][a-zA-Z0-9_]*(\\\\{[^{}]+\\\\})?$'))",message="spec.thresholds keys must be k6 metric names, optionally with a tag filter, e.g. http_req_duration or http_req_duration{scenario:push}"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) > 0)",message="spec.thresholds entries need at least one expression, e.g. http_req_failed: [\"rate<0.01\"]"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256)",message="spec.thresholds keys must be at most 256 characters (a metric name and its tag filter): each is written into status.results.thresholds, which holds no more; shorten the metric name or the tag filter"
	Thresholds map[string]ThresholdList `json:"thresholds,omitempty"`

	// thresholdsOnNoData judges a threshold whose metric or sub-metric matched no sample (say
	// http_req_duration{name:push} when no request carries that tag), in spec.thresholds or
	// the script's own: Pass (the default, as k6 does: judged on zero values, or skipped for a
	// rate, so it usually passes) or Fail (it fails, and so does the verdict). Either way
	// status.results.warnings names it.
	// +optional
	// +kubebuilder:validation:Enum=Pass;Fail
	ThresholdsOnNoData ThresholdsOnNoData `json:"thresholdsOnNoData,omitempty"`

	// stability holds the knobs of a stability test.
	// +optional
	Stability *StabilitySpec `json:"stability,omitempty"`

	// benchmark holds the knobs of a benchmark test.
	// +optional
	Benchmark *BenchmarkSpec `json:"benchmark,omitempty"`

	// peak holds the knobs of a peak test.
	// +optional
	Peak *PeakSpec `json:"peak,omitempty"`

	// capacity holds the assumptions that turn measured rates into device counts.
	// +optional
	Capacity *CapacitySpec `json:"capacity,omitempty"`

	// baseline names the run this one is compared with: its results against the baseline's,
	// metric by metric, in status.comparison. A regression (beyond the band and unlikely to be
	// noise) makes the verdict REGRESSED.
	// +optional
	Baseline *BaselineSpec `json:"baseline,omitempty"`

	// trend holds the run against the trend of its test's kept runs: where throughput, latency
	// or the target's resources shifted, and by how much, in status.trend.
	// +optional
	Trend *TrendSpec `json:"trend,omitempty"`

	// runnerLoss says what a runner lost after the start does to the run: Fail, or Replace it
	// for the remaining time (the default for type stability), and whether kubectl drain waits.
	// +optional
	RunnerLoss *RunnerLossSpec `json:"runnerLoss,omitempty"`

	// queue admits the run through Kueue as one all-or-nothing workload; it waits Queued,
	// holding no pods, until admitted. Ignored without Kueue installed.
	// +optional
	Queue *QueueSpec `json:"queue,omitempty"`

	// managedBy: unset, this cluster's fleetbench runs the TestRun. kueue.x-k8s.io/multikueue:
	// Kueue's MultiKueue dispatches it to a worker cluster, whose fleetbench runs it; here it is
	// only queued (its LocalQueue's ClusterQueue must carry a MultiKueue AdmissionCheck), and
	// its status is the worker's, which MultiKueue copies here. See testrun_dispatch.go.
	// +optional
	// +kubebuilder:validation:Enum=kueue.x-k8s.io/multikueue
	ManagedBy string `json:"managedBy,omitempty"`

	// zones spread the runners over clusters: each zone names a cluster (a MultiKueueCluster;
	// unset: this one) and its runners. The fleet's execution segments are cut once over
	// every zone, all zones start together, and their results merge exactly. The runner
	// count is the zones' sum. See testrun_zones.go.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.filter(z, !has(z.cluster)).size() == 1",message="spec.zones needs exactly one zone of this cluster (no cluster): its runners run here, beside the run's own measurements; give the other zones a cluster"
	Zones []ZoneSpec `json:"zones,omitempty"`

	// zoneOf marks a zone run, the part of a zoned run that one other cluster runs;
	// fleetbench sets it on the zone runs it makes (testrun_zones.go).
	// +optional
	ZoneOf *ZoneOfSpec `json:"zoneOf,omitempty"`

	// timeouts bound every wait; each ends the TestRun Failed with a reason when it passes.
	// +optional
	Timeouts *TimeoutsSpec `json:"timeouts,omitempty"`

	// cleanup says what happens to the provisioned target when the test ends. (k6-operator's
	// `cleanup: post` is spec.ttlSecondsAfterFinished: 0 here, and is refused saying so.)
	// +optional
	Cleanup *CleanupSpec `json:"cleanup,omitempty"`

	// ttlSecondsAfterFinished deletes the TestRun, and with it every child, this long after it
	// finished, as a Job's field of the same name does. Unset keeps it until deleted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// k6-operator's remaining fields: honoured or refused (k6operator_types.go).
	K6OperatorFields `json:",inline"`
}

// OutputType is one of k6's built-in outputs.
// +kubebuilder:validation:Enum=prometheusRemoteWrite;openTelemetry
type OutputType string

const (
	// OutputPrometheusRemoteWrite is k6's experimental-prometheus-rw output.
	OutputPrometheusRemoteWrite OutputType = "prometheusRemoteWrite"
	// OutputOpenTelemetry is k6's opentelemetry output (OTLP metrics).
	OutputOpenTelemetry OutputType = "openTelemetry"
)

// OutputSpec is one k6 output the runners stream to, besides fleetbench's own.
// +kubebuilder:validation:XValidation:rule="self.type == 'openTelemetry' || !has(self.protocol)",message="spec.outputs[].protocol is only for type openTelemetry (grpc or http)"
// +kubebuilder:validation:XValidation:rule="self.type == 'prometheusRemoteWrite' || !has(self.trendStats)",message="spec.outputs[].trendStats is only for type prometheusRemoteWrite"
type OutputSpec struct {
	// type: prometheusRemoteWrite or openTelemetry.
	// +required
	Type OutputType `json:"type"`
	// url of the receiver: the remote-write endpoint, e.g.
	// http://prometheus.monitoring:9090/api/v1/write, or the OTLP collector's host:port, e.g.
	// otel-collector.monitoring:4317.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	URL string `json:"url"`
	// protocol of OTLP: grpc (default) or http.
	// +optional
	// +kubebuilder:validation:Enum=grpc;http
	Protocol string `json:"protocol,omitempty"`
	// insecure sends OTLP in plain text, or skips TLS verification of the remote-write endpoint.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// trendStats are the statistics remote-write sends for trends, e.g. ["p(95)", "p(99)", "avg"];
	// k6's default when empty.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=16
	// +kubebuilder:validation:items:Pattern=`^(avg|min|max|med|count|sum|p\([0-9]{1,2}(\.[0-9]+)?\))$`
	// +listType=atomic
	TrendStats []string `json:"trendStats,omitempty"`
}

// ThresholdsOnNoData is how a threshold on no data is judged.
type ThresholdsOnNoData string

const (
	// ThresholdsOnNoDataPass judges it as k6 does (the default).
	ThresholdsOnNoDataPass ThresholdsOnNoData = "Pass"
	// ThresholdsOnNoDataFail fails it.
	ThresholdsOnNoDataFail ThresholdsOnNoData = "Fail"
)

// ThresholdList is the list of expressions for one metric.
// +kubebuilder:validation:MaxItems=8
type ThresholdList []ThresholdExpression

// SizingMode says how a Profile's CPU and memory are shared among target components.
// +kubebuilder:validation:Enum=oneMachine;perComponent
type SizingMode string

const (
	// SizingOneMachine runs every component in one pod under the profile's limits, as the
	// seed's C1 container held Apache, MariaDB and the daemon together.
	SizingOneMachine SizingMode = "oneMachine"
	// SizingPerComponent gives each component its own pod and share (seed 003: Apache 4 GB,
	// MySQL 2 GB, ejabberd 8 GB).
	SizingPerComponent SizingMode = "perComponent"
)

// PodSecurityLevel is a Pod Security Standard a target namespace enforces.
// +kubebuilder:validation:Enum=restricted;baseline
type PodSecurityLevel string

const (
	PodSecurityRestricted PodSecurityLevel = "restricted"
	PodSecurityBaseline   PodSecurityLevel = "baseline"
)

// TargetSpec is the system under test.
// +kubebuilder:validation:XValidation:rule="!has(self.components) || (has(self.podSecurity) && self.podSecurity == 'baseline') || self.components.all(c, !has(c.runAsUser) || c.runAsUser != 0)",message="spec.target.components[].runAsUser 0 runs as root, which the restricted Pod Security Standard refuses; set spec.target.podSecurity: baseline or a non-zero uid"
// +kubebuilder:validation:XValidation:rule="has(self.components) != has(self.external)",message="spec.target needs exactly one of components (fleetbench provisions them) or external (a URL it only loads)"
// +kubebuilder:validation:XValidation:rule="!has(self.components) || self.components.all(c, self.components.exists_one(d, d.name == c.name))",message="spec.target.components names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.sizing) || self.sizing != 'perComponent' || !has(self.components) || self.components.all(c, has(c.share) || has(c.resources))",message="with spec.target.sizing perComponent every component needs a share (percent of the profile) or resources"
// +kubebuilder:validation:XValidation:rule="!has(self.components) || self.components.filter(c, has(c.share)).map(c, c.share).sum() <= 100",message="spec.target.components shares add up to more than 100 percent of the profile"
// +kubebuilder:validation:XValidation:rule="!has(self.egress) || has(self.components)",message="spec.target.egress applies to components fleetbench provisions; an external target's network is not fleetbench's"
type TargetSpec struct {
	// sizing says how the profile is split among components: oneMachine (default) or perComponent.
	// +optional
	// +kubebuilder:default=oneMachine
	Sizing SizingMode `json:"sizing,omitempty"`

	// podSecurity is the Pod Security Standard enforced in the target's namespace. restricted
	// (default): every component runs as a non-root user, without capabilities or privilege
	// escalation; the built-in images are made for it. baseline: a custom image may run as root.
	// +optional
	// +kubebuilder:default=restricted
	PodSecurity PodSecurityLevel `json:"podSecurity,omitempty"`

	// imagePullSecrets are Secrets of the TestRun's namespace, of type
	// kubernetes.io/dockerconfigjson, for component images in a private registry: each is copied
	// into the target's namespace (and goes with it) and named in every target pod.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// components fleetbench provisions in the TestRun's own namespace.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Components []Component `json:"components,omitempty"`

	// external is a target fleetbench does not provision, reached by URL.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`

	// egress lets the target's pods open connections to these addresses too. Without it they
	// reach only the cluster's DNS (port 53 in kube-system) and the run's own components:
	// the target's NetworkPolicy denies every other egress (where the CNI enforces policies).
	// Replies to the runners are always allowed.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Egress []TargetEgress `json:"egress,omitempty"`
}

// TargetEgress is one destination the target's pods may connect to.
type TargetEgress struct {
	// cidr is the destination's address block, e.g. 10.20.0.0/16 or 203.0.113.7/32.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && string(cidr(self).masked()) == self",message="spec.target.egress[].cidr must be a CIDR in canonical form with no bits set beyond the prefix, e.g. 10.20.0.0/16"
	CIDR string `json:"cidr"`

	// ports limit the destination to these ports; none allows every port.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Ports []EgressPort `json:"ports,omitempty"`
}

// EgressPort is a port a target may connect to.
type EgressPort struct {
	// port number.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// protocol is TCP (default), UDP or SCTP.
	// +optional
	// +kubebuilder:default=TCP
	// +kubebuilder:validation:Enum=TCP;UDP;SCTP
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// ComponentKind is a built-in component or a custom container.
// +kubebuilder:validation:Enum=webServer;database;xmppBroker;custom
type ComponentKind string

const (
	ComponentWebServer  ComponentKind = "webServer"
	ComponentDatabase   ComponentKind = "database"
	ComponentXMPPBroker ComponentKind = "xmppBroker"
	ComponentCustom     ComponentKind = "custom"
)

// Component is one part of the target stack. Runners find it through
// TARGET_<NAME>_URL (and _HOST, _PORT) environment variables.
// +kubebuilder:validation:XValidation:rule="self.kind != 'custom' || has(self.image)",message="a component of kind custom needs an image"
// +kubebuilder:validation:XValidation:rule="self.kind != 'custom' || !has(self.engine)",message="engine applies to built-in kinds only; a custom component sets image instead"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || (self.kind == 'webServer' && self.engine in ['nginx', 'apache']) || (self.kind == 'database' && self.engine in ['postgresql', 'mariadb']) || (self.kind == 'xmppBroker' && self.engine in ['prosody', 'ejabberd'])",message="engine must fit kind: webServer takes nginx or apache, database takes postgresql or mariadb, xmppBroker takes prosody or ejabberd"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !self.tls || self.kind in ['webServer', 'xmppBroker', 'custom']",message="tls applies to webServer, xmppBroker and custom components"
// +kubebuilder:validation:XValidation:rule="!has(self.database) || self.kind == 'database'",message="database settings are only allowed on a component of kind database"
// +kubebuilder:validation:XValidation:rule="!has(self.xmpp) || self.kind == 'xmppBroker'",message="xmpp settings are only allowed on a component of kind xmppBroker"
// +kubebuilder:validation:XValidation:rule="!has(self.share) || !has(self.resources)",message="set either share or resources on a component, not both"
type Component struct {
	// name identifies the component; it names its Service and its TARGET_<NAME>_URL variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="must be a DNS label: lower-case letters, digits and '-', starting with a letter, e.g. web or app-db"
	Name string `json:"name"`

	// kind is webServer, database, xmppBroker or custom.
	// +required
	Kind ComponentKind `json:"kind"`

	// engine picks the software of a built-in kind: nginx (default) or apache; postgresql
	// (default) or mariadb; prosody (default) or ejabberd.
	// +optional
	// +kubebuilder:validation:Enum=nginx;apache;postgresql;mariadb;prosody;ejabberd
	Engine string `json:"engine,omitempty"`

	// tls serves the component over TLS with a generated certificate (seed 000's SSL benchmarks).
	// +optional
	TLS *bool `json:"tls,omitempty"`

	// image overrides the built-in image, or is the image of a custom component.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// command overrides the image's entrypoint. An element may carry an inline shell script.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=32768
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args are passed to the entrypoint.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=32768
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// env is added to the component's container.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`

	// ports the component listens on; the first is the one runners are pointed at.
	// Built-in kinds have defaults.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.containerPort >= 1 && p.containerPort <= 65535)",message="spec.target.components[].ports[].containerPort must be between 1 and 65535: the first port is also the component's Service port and readiness check"
	Ports []corev1.ContainerPort `json:"ports,omitempty"`

	// runAsUser runs the component as this uid. Needed for an image whose USER is a name
	// (the kubelet cannot prove a name is not root) or root; 0 needs podSecurity baseline.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// readinessProbe gates the load: no runner starts before every component is Ready.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="spec.target.components[].readinessProbe needs exactly one of exec, httpGet, tcpSocket or grpc, e.g. httpGet: {path: /healthz, port: 8080}"
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// share is the percent of the profile's CPU and memory this component gets (perComponent sizing).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Share *int32 `json:"share,omitempty"`

	// resources give this component explicit requests and limits (perComponent sizing).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// database holds settings of a database component.
	// +optional
	Database *DatabaseSettings `json:"database,omitempty"`

	// xmpp holds settings of an XMPP broker component.
	// +optional
	XMPP *XMPPSettings `json:"xmpp,omitempty"`
}

// DatabaseSettings prepare a database component before the load starts.
type DatabaseSettings struct {
	// name of the database to create; defaults to fleetbench.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z_][a-zA-Z0-9_]*$')",message="must be a SQL identifier: letters, digits and '_', not starting with a digit"
	Name string `json:"name,omitempty"`

	// initSQL runs once after the database starts, e.g. to create tables.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	InitSQL string `json:"initSQL,omitempty"`
}

// XMPPSettings prepare an XMPP broker before the load starts.
type XMPPSettings struct {
	// domain the broker serves; defaults to fleetbench.local.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a DNS domain such as fleetbench.local"
	Domain string `json:"domain,omitempty"`

	// users is how many accounts to provision, named <userPrefix><n> for n from 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Users int32 `json:"users,omitempty"`

	// userPrefix starts every provisioned account name; defaults to device.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9_-]*$')",message="must be lower-case letters, digits, '_' or '-', starting with a letter"
	UserPrefix string `json:"userPrefix,omitempty"`
}

// ExternalTarget is a system under test that fleetbench does not provision.
type ExternalTarget struct {
	// url runners receive as TARGET_URL.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https', 'ws', 'wss', 'grpc', 'tcp']",message="must be an absolute URL with scheme http, https, ws, wss, grpc or tcp, e.g. http://api.example.svc:8080"
	URL string `json:"url"`
}

// ScriptSpec is where the k6 script comes from: exactly one source.
// +kubebuilder:validation:XValidation:rule="[has(self.inline), has(self.configMap), has(self.volumeClaim), has(self.localFile)].filter(x, x).size() == 1",message="spec.script needs exactly one of inline, configMap, volumeClaim or localFile"
type ScriptSpec struct {
	// inline is the script's source; fleetbench stores it in a ConfigMap it owns.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Inline string `json:"inline,omitempty"`

	// configMap holds the script (and any modules it imports) in the TestRun's namespace.
	// +optional
	ConfigMap *ConfigMapScript `json:"configMap,omitempty"`

	// volumeClaim mounts a PersistentVolumeClaim holding the script.
	// +optional
	VolumeClaim *VolumeClaimScript `json:"volumeClaim,omitempty"`

	// localFile is a path inside the runner image.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path inside the runner image, e.g. /scripts/test.js"
	LocalFile string `json:"localFile,omitempty"`
}

// ConfigMapScript names a ConfigMap and the file of it k6 runs.
type ConfigMapScript struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// file is the key of the entry k6 runs; defaults to test.js.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a ConfigMap key such as test.js"
	File string `json:"file,omitempty"`
}

// VolumeClaimScript names a PersistentVolumeClaim and the file in it k6 runs.
type VolumeClaimScript struct {
	// name of the PersistentVolumeClaim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// file is the path of the script inside the volume; defaults to test.js.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="must be a path relative to the volume's root, without '..', e.g. scripts/test.js"
	File string `json:"file,omitempty"`

	// readOnly mounts the volume read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}

// LoadSpec is the device-fleet load model of the seeds: devices, each acting every period.
// 1000 devices pushing every 200s is 5 requests per second. Each runner gets a disjoint range
// of device ids (DEVICE_ID_FIRST, DEVICE_ID_LAST) and its share of the rate.
// +kubebuilder:validation:XValidation:rule="has(self.devices) == has(self.period)",message="spec.load.devices and spec.load.period go together: devices each act once per period (e.g. devices: 1000, period: 200s)"
// +kubebuilder:validation:XValidation:rule="!has(self.iterations) || !has(self.duration)",message="set either spec.load.iterations or spec.load.duration, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.iterations) || has(self.devices)",message="spec.load.iterations counts rounds per device; it needs spec.load.devices and spec.load.period"
type LoadSpec struct {
	// devices is how many emulated devices act against the target.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	Devices *int32 `json:"devices,omitempty"`

	// period is how often each device acts, e.g. 200s.
	// +optional
	Period Duration `json:"period,omitempty"`

	// duration bounds the test in time, e.g. 2h.
	// +optional
	Duration Duration `json:"duration,omitempty"`

	// iterations bounds the test in work: rounds per device (seed 000's "loops").
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	Iterations *int32 `json:"iterations,omitempty"`

	// rampUp spreads the devices' first actions over this span instead of starting all at once.
	// +optional
	RampUp Duration `json:"rampUp,omitempty"`

	// preAllocatedVUs per runner for the arrival-rate executor; too few drop iterations.
	// Defaults to a number derived from the rate.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	PreAllocatedVUs *int32 `json:"preAllocatedVUs,omitempty"`

	// maxVUs per runner.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxVUs *int32 `json:"maxVUs,omitempty"`
}

// RunnerSpec shapes the runner pods (k6-operator's "runner" knobs, plus sysctls).
type RunnerSpec struct {
	// image of the runner: k6 with fleetbench's result output compiled in, from the same
	// fleetbench release as the manager (the two speak one protocol: readiness, envelopes).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the runner image: Always, IfNotPresent (default) or Never.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// metadata adds labels and annotations to the runner pods.
	// +optional
	Metadata *PodMetadata `json:"metadata,omitempty"`

	// env is added to every runner container.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`

	// envFrom adds every key of these ConfigMaps or Secrets of the TestRun's namespace to the
	// runner's environment (credentials the script reads through __ENV).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// imagePullSecrets of the TestRun's namespace, for a runner image in a private registry.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// volumes are added to the runner pod, for volumeMounts (test data, certificates). Names
	// config, script and tmp are fleetbench's.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(v, !(v.name in ['config', 'script', 'tmp']))",message="volume names config, script and tmp are fleetbench's own; rename the volume"
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// volumeMounts mount volumes into the runner container; not under /fleetbench (fleetbench's
	// script and config) and not at /tmp. A mount of a volume not in volumes is refused when
	// the runner's Job is created (Failed RunnerRejected, with the API server's words): core
	// types carry no length bounds, so admission cannot afford to cross-check the two lists.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(m, !m.mountPath.startsWith('/fleetbench') && m.mountPath != '/tmp')",message="volumeMounts must not use /fleetbench (fleetbench mounts the script and config there) or /tmp"
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// securityContext is merged over the runner pod's and container's hardened defaults
	// (non-root uid 65532, RuntimeDefault seccomp, no capabilities, no privilege escalation,
	// read-only root file system): a key left out keeps its default. It takes the pod-level keys
	// of k6-operator's runner.securityContext (fsGroup, supplementalGroups, ...) and the
	// container-level ones (capabilities, readOnlyRootFilesystem, ...). The pod stays in the
	// TestRun's namespace, so its Pod Security level decides what a weakened default may be.
	// +optional
	SecurityContext *RunnerSecurityContext `json:"securityContext,omitempty"`

	// resources of each runner container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// nodeSelector places the runners.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && self[k].size() <= 63)",message="a node label's key is at most 317 characters (a 253-character prefix, '/' and a 63-character name) and its value at most 63, Kubernetes' own limits"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let runners use tainted nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity is added to fleetbench's own spreading of runners and keeping them off the target's nodes.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// avoidTarget keeps the runners off the nodes the target runs on, so load generation does
	// not steal the target's CPU: preferred (default; on a one-node cluster they share it) or
	// required (a runner that finds no node without the target is unschedulable).
	// +optional
	// +kubebuilder:default=preferred
	AvoidTarget AvoidTarget `json:"avoidTarget,omitempty"`

	// topologySpreadConstraints are added to fleetbench's own; one with fleetbench's topologyKey
	// and whenUnsatisfiable (kubernetes.io/hostname, ScheduleAnyway) replaces it, as a pod may
	// have only one constraint per pair.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// sysctls for tests that hold many sockets, e.g. net.ipv4.ip_local_port_range: "1024 65535"
	// (seed 003 hit the 64K port limit). Unsafe sysctls must be allowed on the kubelet.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Sysctls []corev1.Sysctl `json:"sysctls,omitempty"`

	// serviceAccountName the runner pods use.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be the name of a ServiceAccount in the TestRun's namespace: lower-case letters, digits, '-' and '.', e.g. load-runner"
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// priorityClassName of the runner pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be the name of a PriorityClass: lower-case letters, digits, '-' and '.', e.g. high-priority"
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// k6-operator's remaining runner fields: honoured or refused (k6operator_types.go).
	K6OperatorRunnerFields `json:",inline"`
}

// AvoidTarget says how strictly runners keep off the target's nodes.
// +kubebuilder:validation:Enum=preferred;required
type AvoidTarget string

const (
	AvoidTargetPreferred AvoidTarget = "preferred"
	AvoidTargetRequired  AvoidTarget = "required"
)

// PodMetadata is the labels and annotations added to generated pods.
type PodMetadata struct {
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && self[k].size() <= 63)",message="a label's key is at most 317 characters (a 253-character prefix, '/' and a 63-character name) and its value at most 63, Kubernetes' own limits"
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && self[k].size() <= 8192)",message="an annotation's key is at most 317 characters and its value at most 8192 here: put larger data in a ConfigMap the runner mounts (spec.runner.volumes)"
	Annotations map[string]string `json:"annotations,omitempty"`
}

// StabilitySpec holds the knobs of a stability test. Like every runner, its runners keep no
// per-sample state in k6 (k6's own summary and thresholds are off), so memory stays flat for
// days; thresholds, the script's included, are judged on the merged results.
type StabilitySpec struct {
	// maxMemoryGrowthPercent fails the test when target memory grows more than this over the run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MaxMemoryGrowthPercent *int32 `json:"maxMemoryGrowthPercent,omitempty"`

	// sampleInterval is how often target CPU and memory are sampled, at least 1s (each sample
	// reads the kubelet and writes the result ConfigMap and status). It defaults to a thirtieth
	// of the load's length in whole seconds, from 2s to 30s, and to 30s when only the script
	// knows the length.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ms|s|m|h))+$') || duration(self) >= duration('1s')",message="spec.stability.sampleInterval must be at least 1s: every sample reads the kubelet and writes the result ConfigMap and status; use e.g. 10s or 30s"
	SampleInterval Duration `json:"sampleInterval,omitempty"`

	// logPatterns are counted in the target's logs (seed 000's "Log analysis").
	// Defaults to warning and error.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	LogPatterns []LogPattern `json:"logPatterns,omitempty"`

	// leak judges target memory by its trend after the warm-up (status.target.memory.trend)
	// instead of two points: the slope's confidence interval and the projection to the
	// profile's memory. The trend is reported for every stability run; this sets how.
	// +optional
	Leak *LeakSpec `json:"leak,omitempty"`
}

// LeakSpec says how the memory trend is judged.
type LeakSpec struct {
	// warmUp is cut from the load's start before the fit (the devices' registration ramp);
	// empty holds the first half of the load out (the ramp must end within it) and fits the
	// second half.
	// +optional
	WarmUp Duration `json:"warmUp,omitempty"`
	// horizon: a leak (a slope significantly above zero) fails the run under failOn only when
	// its projection reaches the profile's memory within this long; one further away is
	// reported as a leak with its projection. Default 720h (30 days).
	// +optional
	Horizon Duration `json:"horizon,omitempty"`
	// failOn: leak fails the run's verdict (FAILED, naming the slope) when the trend is a
	// leak within the horizon. Empty reports the trend only.
	// +optional
	// +kubebuilder:validation:Enum=leak
	FailOn string `json:"failOn,omitempty"`
}

// LogPattern counts the target log lines matching a regular expression (RE2 syntax).
type LogPattern struct {
	// name labels the finding in status, e.g. warning.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`

	// regex in RE2 syntax, e.g. (?i)warn.
	// matches() on an uncompilable pattern is a CEL evaluation error, which the API server
	// reports against this field: it saves a webhook for the one check OpenAPI cannot make.
	// Every target log line is searched with it, on the manager: a counted repetition is
	// compiled into that many copies of what it repeats, so its count is kept small here (the
	// manager also refuses a pattern whose compiled program is too large, and bounds the bytes
	// each pattern searches: status.target.logFindings[].incomplete says so).
	// +kubebuilder:validation:XValidation:rule="''.matches(self) || !''.matches(self)",message="must be a valid RE2 regular expression, e.g. (?i)warn"
	// +kubebuilder:validation:XValidation:rule=`!self.matches(r'(^|[^\\])(\\\\)*\{(([1-9][0-9]{3,}|[2-9][0-9]{2}|1[1-9][0-9]|10[1-9])(,[0-9]*)?|[0-9]+,([1-9][0-9]{3,}|[2-9][0-9]{2}|1[1-9][0-9]|10[1-9]))\}')`,message="a counted repetition ({n}, {n,} or {n,m}) may count to 100 at most: each repeat is a copy of what it repeats, run on every target log line; use * or + instead, e.g. error.*timeout rather than error.{1000}timeout"
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Regex string `json:"regex"`

	// failAbove fails the test when more lines than this match.
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailAbove *int64 `json:"failAbove,omitempty"`
}

// BenchmarkSpec holds the knobs of a benchmark test.
type BenchmarkSpec struct {
	// repetitions of one TestRun are not implemented yet and must be 1: run the TestRun as the
	// template of a CapacityPlan with spec.repetitions, which gives every repetition (seed
	// 001's first and second run) its own row.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == 1",message="spec.benchmark.repetitions: repeating one TestRun is not implemented yet; use a CapacityPlan with this TestRun as its template and spec.repetitions: N (one row per repetition)"
	Repetitions int32 `json:"repetitions,omitempty"`

	// warmUp runs the devices at their rate (spec.load.devices per spec.load.period) this long
	// before the measured work starts; nothing of the warm-up counts in the results.
	// +optional
	WarmUp Duration `json:"warmUp,omitempty"`
}

// PeakSpec raises the device count step by step until a stop rule fires: the breaking point.
// +kubebuilder:validation:XValidation:rule="has(self.stopWhen.droppedPercentAbove) || has(self.stopWhen.p95Above) || has(self.stopWhen.errorPercentAbove)",message="spec.peak.stopWhen needs at least one rule: droppedPercentAbove, p95Above or errorPercentAbove"
type PeakSpec struct {
	// stepDevices are added at every step.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	StepDevices int32 `json:"stepDevices"`

	// stepDuration is how long each step holds its load.
	// +required
	StepDuration Duration `json:"stepDuration"`

	// maxDevices ends the test, passed, if no stop rule fired before.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	MaxDevices *int32 `json:"maxDevices,omitempty"`

	// stopWhen ends the climb: the step before is the breaking point.
	// +required
	StopWhen PeakStopRules `json:"stopWhen"`
}

// PeakStopRules end a peak test when any of them holds for a step.
type PeakStopRules struct {
	// droppedPercentAbove stops when more than this percent of requests were dropped.
	// +optional
	DroppedPercentAbove *Percent `json:"droppedPercentAbove,omitempty"`

	// errorPercentAbove stops when more than this percent of requests failed.
	// +optional
	ErrorPercentAbove *Percent `json:"errorPercentAbove,omitempty"`

	// p95Above stops when the 95th percentile of http_req_duration exceeds this.
	// +optional
	P95Above Duration `json:"p95Above,omitempty"`
}

// TimeoutsSpec bounds every wait of a TestRun.
type TimeoutsSpec struct {
	// provisioning bounds how long the target may take to become Ready; defaults to 10m.
	// +optional
	Provisioning Duration `json:"provisioning,omitempty"`

	// runnersReady bounds how long runners may take to be scheduled and Ready; defaults to 5m.
	// +optional
	RunnersReady Duration `json:"runnersReady,omitempty"`

	// run bounds the load phase beyond its expected length; defaults to the expected length plus 10m,
	// or 1h when the length is not known in advance.
	// +optional
	Run Duration `json:"run,omitempty"`

	// collection bounds reading and merging the results; defaults to 2m.
	// +optional
	Collection Duration `json:"collection,omitempty"`
}

// TargetCleanupPolicy says when the provisioned target goes.
// +kubebuilder:validation:Enum=DeleteAfterRun;KeepUntilDeleted
type TargetCleanupPolicy string

const (
	// TargetDeleteAfterRun removes the target namespace as soon as results are collected.
	TargetDeleteAfterRun TargetCleanupPolicy = "DeleteAfterRun"
	// TargetKeepUntilDeleted keeps the target for inspection until the TestRun is deleted, or
	// until its kept time (spec.cleanup.keepFor, at most the operator's --max-kept-target) runs
	// out, whichever comes first.
	TargetKeepUntilDeleted TargetCleanupPolicy = "KeepUntilDeleted"
)

// CleanupSpec says what happens to the provisioned target when the test ends.
// +kubebuilder:validation:XValidation:rule="!has(self.keepFor) || self.target == 'KeepUntilDeleted'",message="spec.cleanup.keepFor applies to a kept target only: set spec.cleanup.target: KeepUntilDeleted, or drop keepFor"
type CleanupSpec struct {
	// target is DeleteAfterRun (default) or KeepUntilDeleted.
	// +optional
	// +kubebuilder:default=DeleteAfterRun
	Target TargetCleanupPolicy `json:"target,omitempty"`

	// keepFor is how long after the run's end a KeepUntilDeleted target is kept; then it is
	// released (condition TargetKept False KeepExpired, and an event). Unset: the most the
	// operator allows (its --max-kept-target, the chart's maxKeptTarget, 24h by default). More
	// than that is refused at admission where the chart's admission policy is installed, and
	// otherwise cut to it, which the TargetKept condition says.
	// +optional
	KeepFor Duration `json:"keepFor,omitempty"`
}
