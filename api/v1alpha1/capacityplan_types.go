package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapacityPlanSpec runs one TestRun per profile, sweep combination and repetition, and keeps
// the sizing table seed 000 keeps by hand ("Ideal max devs", "Safe max devs").
// +kubebuilder:validation:XValidation:rule="!has(self.template.profile)",message="spec.template.profile must be empty: list the profiles to compare in spec.profiles"
// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || self.sweep.all(s, !has(s.component) || (has(self.template.target.components) && self.template.target.components.exists(c, c.name == s.component)))",message="spec.sweep[].component must name a component of spec.template.target.components"
// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !self.sweep.exists(s, has(s.field) && s.field == 'devices') || (has(self.template.load) && has(self.template.load.period))",message="spec.sweep[].field: devices needs spec.template.load.period (how often each device acts)"
// +kubebuilder:validation:XValidation:rule="size(self.profiles) * (has(self.sweep) && size(self.sweep) > 0 ? size(self.sweep[0].values) : 1) * (has(self.sweep) && size(self.sweep) > 1 ? size(self.sweep[1].values) : 1) * (has(self.sweep) && size(self.sweep) > 2 ? size(self.sweep[2].values) : 1) * (has(self.sweep) && size(self.sweep) > 3 ? size(self.sweep[3].values) : 1) * (has(self.repetitions) ? self.repetitions : 1) <= 256",message="the plan has more than 256 cells: the number of spec.profiles × the number of values of each spec.sweep dimension × spec.repetitions must be at most 256; split it into several plans"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || (has(self.repetitions) ? self.repetitions : 1) >= 4",message="spec.baseline compares each cell over its repetitions with a one-sided rank test, which needs 4 repetitions a side to reach p < 0.05 (3 a side give at best p = 1/20 = 0.05): set spec.repetitions: 4 or more, here and on the baseline plan"
// +kubebuilder:validation:XValidation:rule="!has(self.maxParallel) || self.concurrency == 'Parallel'",message="spec.maxParallel applies only with spec.concurrency: Parallel"
// +kubebuilder:validation:XValidation:rule="!has(self.template.ttlSecondsAfterFinished)",message="spec.template.ttlSecondsAfterFinished must be empty: the plan's table is rebuilt from its children, so they live as long as the plan; delete the plan to remove them"
// +kubebuilder:validation:XValidation:rule="self.concurrency != 'Serial' || !has(self.template.cleanup) || !has(self.template.cleanup.target) || self.template.cleanup.target != 'KeepUntilDeleted'",message="spec.template.cleanup.target: KeepUntilDeleted keeps every child's target, and Serial starts the next child only once the previous target is gone: use DeleteAfterRun, or spec.concurrency: Parallel"
type CapacityPlanSpec struct {
	// profiles to compare, e.g. [C1, C2, C3, C4]; case does not matter, as in TestRun.spec.profile.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.filter(q, q.lowerAscii() == p.lowerAscii()).size() == 1)",message="spec.profiles lists a profile twice (names are compared without case: C1 and c1 are one profile)"
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Profiles []string `json:"profiles"`

	// sweep lists what varies; every combination of values runs on every profile (seed 000's
	// Bench-6: WORKERS 1, 2, 4, 8; seed 001: 1, 32, 56, 128 threads).
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	Sweep []SweepDimension `json:"sweep,omitempty"`

	// repetitions runs every cell this many times, as seed 001's first and second runs; each
	// repetition is a row. From 2, the summary gives each figure as a median with its min–max;
	// from 6, with the distribution-free 95 % confidence interval of the median.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	Repetitions int32 `json:"repetitions,omitempty"`

	// template is the TestRun every child is made from.
	// +required
	// +kubebuilder:validation:XValidation:rule="!has(self.baseline)",message="spec.template.baseline must be empty: the children would all compare with one run; set spec.baseline to compare this plan with an earlier CapacityPlan, cell by cell"
	// +kubebuilder:validation:XValidation:rule="!has(self.zones) && !has(self.zoneOf)",message="spec.template.zones is not implemented yet for a CapacityPlan: apply zoned TestRuns one by one"
	// +kubebuilder:validation:XValidation:rule="!has(self.managedBy)",message="spec.template.managedBy is not implemented yet for a CapacityPlan: its children carry an owner reference that MultiKueue would copy into the worker cluster, where no such owner exists; dispatch single TestRuns instead"
	Template TestRunSpec `json:"template"`

	// capacity holds the assumptions behind the table's device counts; children whose template
	// sets none get these.
	// +optional
	Capacity *CapacitySpec `json:"capacity,omitempty"`

	// concurrency: Serial (default) runs one child at a time and starts the next only once the
	// previous child's target namespace is gone, so only one machine-sized target exists at a
	// time; Parallel runs up to maxParallel side by side, which compares fairly only when each
	// lands on its own nodes.
	// +optional
	// +kubebuilder:default=Serial
	// +kubebuilder:validation:Enum=Serial;Parallel
	Concurrency string `json:"concurrency,omitempty"`

	// maxParallel bounds how many children run at once with concurrency Parallel; defaults to 2.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	MaxParallel *int32 `json:"maxParallel,omitempty"`

	// failurePolicy: Continue (default) records a failed child as a Failed row and goes on;
	// StopOnFailure starts no further child after one failed and ends the plan Failed.
	// +optional
	// +kubebuilder:default=Continue
	// +kubebuilder:validation:Enum=Continue;StopOnFailure
	FailurePolicy string `json:"failurePolicy,omitempty"`

	// baseline names a CapacityPlan in this namespace this plan is compared with once every
	// cell is done: per cell (profile and sweep values) memory peak, memory per device,
	// pushes/s (or req/s) and safe max devices, in % of the baseline's, with seed 000's bands
	// and a rank test over the repetitions (4 or more a side decide). A regression ends the
	// plan Ready=False, Stalled=True VerdictRegressed; cells the comparison could not judge
	// (the baseline plan had fewer than 4 repetitions, or lacks the cell) end it as
	// spec.baseline.onUndecided says, Ready=False, Stalled=True VerdictInconclusive by
	// default. Admission refuses it with fewer than 4 spec.repetitions: the comparison could
	// then never decide.
	// +optional
	Baseline *PlanBaselineSpec `json:"baseline,omitempty"`

	// predict names Profiles whose capacity the plan predicts from the measured ones (a model
	// of capacity against the profile's cores), e.g. C3 from C1, C2 and C4. A profile also in
	// spec.profiles is held out of the model, predicted, and measured: status.model's
	// predictions then say how far the prediction was off (the scoreboard).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Predict []string `json:"predict,omitempty"`

	// question: which of the plan's profiles (measured or predicted) holds this fleet with
	// the plan's headroom, and at what cost; answered in status.answer once every cell is done.
	// kubectl fleetbench size asks the same of any finished plan.
	// +optional
	Question *FleetQuestion `json:"question,omitempty"`

	// memoryFrom names stability TestRuns in this namespace whose memory per device bounds
	// the profile they ran on: a benchmark's few devices say little about memory. The
	// summary's safe fleet is then the smaller of the throughput and the memory bound.
	// Without it, the plan's own rows' memory per device is used, and said to be extrapolated.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=63
	MemoryFrom []string `json:"memoryFrom,omitempty"`
}

// Concurrency and failure policies of a CapacityPlan.
const (
	ConcurrencySerial   = "Serial"
	ConcurrencyParallel = "Parallel"
	FailureContinue     = "Continue"
	FailureStop         = "StopOnFailure"
)

// Fields of a TestRun a sweep may vary.
const (
	SweepFieldDevices     = "devices"
	SweepFieldParallelism = "parallelism"
	SweepFieldTLS         = "tls"
)

// SweepDimension is one thing that varies and the values it takes: an environment variable of
// a target component (component and env), whether a component serves TLS (component and
// field: tls, values "true"/"false": seed 000's SSL and noSSL), a variable of the script
// (scriptEnv, seen as __ENV.NAME), or a field of the TestRun (field: devices or parallelism).
// +kubebuilder:validation:XValidation:rule="(has(self.env) ? 1 : 0) + (has(self.scriptEnv) ? 1 : 0) + (has(self.field) ? 1 : 0) == 1",message="spec.sweep[]: set exactly one of env (with component), scriptEnv or field"
// +kubebuilder:validation:XValidation:rule="has(self.env) == (has(self.component) && !has(self.field))",message="spec.sweep[]: component and env go together (the variable env of component), or component and field: tls"
// +kubebuilder:validation:XValidation:rule="!has(self.field) || (self.field == 'tls') == has(self.component)",message="spec.sweep[]: field tls needs the component that serves it; devices and parallelism take no component"
// +kubebuilder:validation:XValidation:rule="!has(self.field) || self.field == 'tls' || self.values.all(v, v.matches('^[1-9][0-9]{0,6}$'))",message="spec.sweep[].values of a devices or parallelism sweep must be positive whole numbers"
// +kubebuilder:validation:XValidation:rule="!has(self.field) || self.field != 'tls' || self.values.all(v, v == 'true' || v == 'false')",message="spec.sweep[].values of a tls sweep are \"true\" and \"false\""
// +kubebuilder:validation:XValidation:rule="!has(self.field) || self.field != 'parallelism' || self.values.all(v, !v.matches('^[0-9]{1,7}$') || int(v) <= 5000)",message="spec.sweep[].values: parallelism is at most 5000"
type SweepDimension struct {
	// component names a component of the template's target whose env (or tls) varies.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Component string `json:"component,omitempty"`

	// env is the component's variable to set.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="must be an environment variable name such as WORKERS"
	Env string `json:"env,omitempty"`

	// scriptEnv is a variable the script reads as __ENV.NAME (k6 -e NAME=value), e.g. THREADS
	// or PAYLOAD_BYTES; it is set on every runner.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="must be an environment variable name such as THREADS"
	ScriptEnv string `json:"scriptEnv,omitempty"`

	// field is a TestRun field: devices (spec.load.devices) or parallelism; or, with component,
	// tls (the component's tls).
	// +optional
	// +kubebuilder:validation:Enum=devices;parallelism;tls
	Field string `json:"field,omitempty"`

	// values it takes, one child TestRun each.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=256
	Values []string `json:"values"`
}

// Name is how the dimension is shown in the table: the variable's or the field's name.
func (d SweepDimension) Name() string {
	switch {
	case d.Env != "":
		return d.Env
	case d.ScriptEnv != "":
		return d.ScriptEnv
	case d.Component != "":
		return d.Component + "." + d.Field
	}
	return d.Field
}

// CapacityPlan phases. A new plan has none until its first pass.
const (
	PlanRunning   = "Running"
	PlanSucceeded = "Succeeded"
	PlanFailed    = "Failed"
)

// Reasons of a CapacityPlan.
const (
	// ReasonChildFailed: a child failed and failurePolicy is StopOnFailure.
	ReasonChildFailed = "ChildFailed"
	// ReasonPlanCompleted: every cell has a row; the verdicts are in the table.
	ReasonPlanCompleted = "Completed"
	// ReasonRunningChildren: children are running or waiting their turn.
	ReasonRunningChildren = "RunningChildren"
	// ReasonWaitingForTargetNamespace: Serial waits for the previous child's target namespace to go.
	ReasonWaitingForTargetNamespace = "WaitingForTargetNamespace"
	// ReasonRepetitionsTooFew: a Warning event when a compared plan starts: its repetitions
	// cannot find a regression under Holm's correction over all its rows (plan.RepetitionsWarning).
	ReasonRepetitionsTooFew = "RepetitionsTooFew"
)

// CapacityPlanStatus is the sizing table, rebuilt from the children on every pass.
type CapacityPlanStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase: Running, Succeeded (every cell has its row) or Failed (StopOnFailure stopped it).
	// +optional
	// +kubebuilder:validation:Enum=Running;Succeeded;Failed
	Phase string `json:"phase,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// progress is "done/total" cells.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Progress string `json:"progress,omitempty"`
	// conditions, as on a TestRun: Ready (every cell was measured: each child Succeeded, whatever
	// its verdict, which the table shows; and the comparison with spec.baseline neither
	// regressed nor, unless spec.baseline.onUndecided is Pass, left cells undecided),
	// Reconciling, Stalled (a child failed, or Ready is False for the comparison) and Complete.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// table has one row per cell: profile × sweep values × repetition.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	Table []CapacityRow `json:"table,omitempty"`
	// summary has one row per profile: the device counts of its weakest passing row, as seed
	// 000's sizing table takes them.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Summary []ProfileSummary `json:"summary,omitempty"`
	// comparison is the plan against spec.baseline, cell by cell; written once.
	// +optional
	Comparison *PlanComparison `json:"comparison,omitempty"`
	// model is capacity across profiles and its predictions (spec.predict); written when
	// every cell is done.
	// +optional
	Model *SizeModel `json:"model,omitempty"`
	// answer to spec.question, written when every cell is done.
	// +optional
	Answer *FleetAnswer `json:"answer,omitempty"`
}

// CapacityRow is one line of the sizing table.
type CapacityRow struct {
	// +kubebuilder:validation:MaxLength=253
	Profile string `json:"profile"`
	// values of the sweep dimensions, keyed by their names (spec.sweep: at most 4, each value
	// at most 256 characters).
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 256)",message="status.table[].values: names of at most 253 and values of at most 256 characters"
	Values map[string]string `json:"values,omitempty"`
	// repetition, from 1.
	// +optional
	Repetition int32 `json:"repetition,omitempty"`
	// testRun is the child TestRun that produced the row.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	TestRun string `json:"testRun,omitempty"`
	// phase of the child; empty while it waits its turn.
	// +optional
	Phase TestRunPhase `json:"phase,omitempty"`
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// reason the child failed, e.g. ProfileNotFound.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`
	// +optional
	RequestsAccepted int64 `json:"requestsAccepted,omitempty"`
	// +optional
	RequestsDropped int64 `json:"requestsDropped,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	DroppedPercent string `json:"droppedPercent,omitempty"`
	// requestsPerSecond is the throughput the run kept.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RequestsPerSecond string `json:"requestsPerSecond,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PushesPerSecond string `json:"pushesPerSecond,omitempty"`
	// receivedMbps and sentMbps: the child's data rates (throughput.receivedMbps, sentMbps).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ReceivedMbps string `json:"receivedMbps,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SentMbps string `json:"sentMbps,omitempty"`
	// +optional
	Latency *Latency `json:"latency,omitempty"`
	// memoryPeakMiB is the target's peak memory.
	// +optional
	MemoryPeakMiB int64 `json:"memoryPeakMiB,omitempty"`
	// memoryPerDeviceMiB is the target's memory increase per device.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	MemoryPerDeviceMiB string `json:"memoryPerDeviceMiB,omitempty"`
	// cpuPerCore is the target's average load per core.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CPUPerCore string `json:"cpuPerCore,omitempty"`
	// generatorBound: the load generators, not the target, were the limit.
	// +optional
	GeneratorBound bool `json:"generatorBound,omitempty"`
	// limit is what bound the row: cpu, memory, latency or errors (a peak stop rule),
	// generator, or target (saturated below its CPU and memory).
	// +optional
	// +kubebuilder:validation:Enum=cpu;memory;latency;errors;generator;target
	Limit string `json:"limit,omitempty"`
	// +optional
	IdealMaxDevices int64 `json:"idealMaxDevices,omitempty"`
	// +optional
	TypicalMaxDevices int64 `json:"typicalMaxDevices,omitempty"`
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// maxSafeDevicesByMemory: the child's seed 000 figure (devices ÷ RAM utilisation).
	// +optional
	MaxSafeDevicesByMemory int64 `json:"maxSafeDevicesByMemory,omitempty"`
	// +optional
	BreakingPointDevices int64 `json:"breakingPointDevices,omitempty"`
}

// ProfileSummary is one profile's line of the sizing table.
type ProfileSummary struct {
	// +kubebuilder:validation:MaxLength=253
	Profile string `json:"profile"`
	// rows and passed count the profile's rows and those that PASSED.
	Rows   int32 `json:"rows"`
	Passed int32 `json:"passed"`
	// the device counts of the weakest passing row (the smallest of each column).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PushesPerSecond string `json:"pushesPerSecond,omitempty"`
	// +optional
	IdealMaxDevices int64 `json:"idealMaxDevices,omitempty"`
	// +optional
	TypicalMaxDevices int64 `json:"typicalMaxDevices,omitempty"`
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// maxSafeDevicesByMemory is seed 000's figure of the weakest row: the devices at which
	// that run's RAM use, all of it taken to grow with devices, fills 100 % of the profile's
	// memory (devices ÷ RAM utilisation). Not the memory bound the answer uses: memoryBound.
	// +optional
	MaxSafeDevicesByMemory int64 `json:"maxSafeDevicesByMemory,omitempty"`
	// +optional
	BreakingPointDevices int64 `json:"breakingPointDevices,omitempty"`

	// floor is the weakest sweep setting (lowest median ideal devices) over its repetitions,
	// with ranges: seed 000's floor. best is the strongest setting.
	// +optional
	Floor *CellFigures `json:"floor,omitempty"`
	// +optional
	Best *CellFigures `json:"best,omitempty"`
	// safeFleet is what the profile holds at the plan's push period: the floor's safe count
	// (its low end × the safe percentage), or memoryBound when smaller.
	// +optional
	SafeFleet int64 `json:"safeFleet,omitempty"`
	// memoryBound is the devices whose memory fills the profile's memory at the safe
	// percentage: (memory × safePercent − memory before the load) / memory per device, the
	// source in limitMessage. It does not follow the push period, so the answer caps the safe
	// fleet at it at any period. 0 when memory per device is unknown or did not grow.
	// +optional
	MemoryBound int64 `json:"memoryBound,omitempty"`
	// droppedRepetitions says how many of the profile's finished repetitions are left out of
	// its ranges (only PASSED ones size a deployment) and why, and whether one of them measured
	// less than the floor's low end.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	DroppedRepetitions string `json:"droppedRepetitions,omitempty"`
	// limit is what bounds the safe fleet.
	// +optional
	// +kubebuilder:validation:Enum=cpu;memory;latency;errors;generator;target
	Limit string `json:"limit,omitempty"`
	// limitMessage says how the limit was found, e.g. "memory: 0.31 MiB per device (stability
	// run stab-c2, 3,000 devices) fills 80 % of 4096 MiB at 9,800 devices".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LimitMessage string `json:"limitMessage,omitempty"`
	// safeRule states the headroom rule behind safeFleet.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	SafeRule string `json:"safeRule,omitempty"`
	// noise is set when the floor's or the best setting's repetitions vary too much to trust
	// the figures (CV above 10 %): the worse of the two, naming it, with how many repetitions
	// would help. Each setting's own is floor.noise and best.noise.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Noise string `json:"noise,omitempty"`
	// scaling is the USL fitted to this profile's throughput against its load.
	// +optional
	Scaling *ScalingFit `json:"scaling,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=fleetbench,shortName=cp
// +kubebuilder:printcolumn:name="PROFILES",type=string,JSONPath=`.spec.profiles`
// +kubebuilder:printcolumn:name="PROGRESS",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it is the value of the fleetbench.dev/capacityplan label on the plan's TestRuns, and a label value holds 63; choose a shorter name"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.baseline) || self.spec.baseline.name != self.metadata.name",message="spec.baseline.name names this CapacityPlan: name an earlier plan"

// CapacityPlan runs a TestRun template across profiles and sweep values and keeps the sizing table.
type CapacityPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec cannot change once created: children are named by their cell.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: a CapacityPlan's children are made from it; create a new CapacityPlan to change it"
	Spec CapacityPlanSpec `json:"spec"`
	// +optional
	Status CapacityPlanStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CapacityPlanList is a list of CapacityPlans.
type CapacityPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CapacityPlan `json:"items"`
}
