package v1alpha1

// FleetQuestion is a planner's question: which profile holds this many devices, each acting
// once per period, with the plan's headroom, and at what cost.
type FleetQuestion struct {
	// devices in the fleet.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	Devices int64 `json:"devices"`

	// period is how often each device acts (pushes); the plan's figures, measured at its own
	// push period, are rescaled through Little's law (rate = devices / period).
	// +required
	Period Duration `json:"period"`
}

// Limits: what bound a row or a profile.
const (
	// LimitCPU: the target's cores were saturated.
	LimitCPU = "cpu"
	// LimitMemory: devices × memory per device reach the profile's memory at the safety margin
	// before the throughput limit.
	LimitMemory = "memory"
	// LimitLatency: a peak test's p95 stop rule fired.
	LimitLatency = "latency"
	// LimitErrors: a peak test's error (or dropped) stop rule fired.
	LimitErrors = "errors"
	// LimitGenerator: the load generators, not the target, were the limit; the figure is a
	// lower bound.
	LimitGenerator = "generator"
	// LimitTarget: the target saturated below its CPU and memory: a worker pool, a lock or I/O
	// inside it.
	LimitTarget = "target"
)

// Interval kinds of a FigureRange.
const (
	IntervalSingle = "single"
	IntervalMinMax = "min-max"
	IntervalCI95   = "ci95"
	// IntervalPI95 is a 95 % prediction interval: a size model's prediction from 3 or more
	// measured profiles.
	IntervalPI95 = "pi95"
	// IntervalAssumed is a range that was assumed, not measured: a size model's prediction
	// from 2 profiles, which leave no residual to estimate an error from, gets ±15 %.
	IntervalAssumed = "assumed"
)

// FigureRange is one figure over a cell's repetitions: the median and its range. From 6
// repetitions upward the range is the distribution-free 95 % confidence interval of the
// median (order statistics); below, it is the min–max. A prediction's range is a 95 %
// prediction interval, or an assumed one.
type FigureRange struct {
	// +kubebuilder:validation:MaxLength=32
	Median string `json:"median"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Low string `json:"low,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	High string `json:"high,omitempty"`
	// interval: single (one repetition), min-max (2 to 5) or ci95 (6 or more); for a
	// prediction, pi95 (from 3 or more profiles) or assumed (from 2: ±15 %, not measured).
	// +kubebuilder:validation:Enum=single;min-max;ci95;pi95;assumed
	Interval string `json:"interval"`
	// coverage of a ci95 interval, exactly, in percent (e.g. 96.9 for 6 repetitions).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Coverage string `json:"coverage,omitempty"`
	// cvPercent is the coefficient of variation over the repetitions.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	CVPercent string `json:"cvPercent,omitempty"`
	// n repetitions behind it.
	N int32 `json:"n"`
}

// CellFigures are one cell's figures (a sweep setting of a profile) over its repetitions.
type CellFigures struct {
	// values of the sweep dimensions, as in status.table.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 256)",message="values: names of at most 253 and values of at most 256 characters"
	Values map[string]string `json:"values,omitempty"`
	// passed repetitions behind the ranges.
	Passed int32 `json:"passed"`
	// +optional
	PushesPerSecond *FigureRange `json:"pushesPerSecond,omitempty"`
	// +optional
	IdealMaxDevices *FigureRange `json:"idealMaxDevices,omitempty"`
	// +optional
	TypicalMaxDevices *FigureRange `json:"typicalMaxDevices,omitempty"`
	// +optional
	BreakingPointDevices *FigureRange `json:"breakingPointDevices,omitempty"`
	// +optional
	MemoryPerDeviceMiB *FigureRange `json:"memoryPerDeviceMiB,omitempty"`
	// safeMaxDevices is the headroom rule applied to the low end of idealMaxDevices: up to 8
	// repetitions the lowest run, from 9 the lower bound of the median's 95 % interval.
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// limit that bound most of its repetitions.
	// +optional
	// +kubebuilder:validation:Enum=cpu;memory;latency;errors;generator;target
	Limit string `json:"limit,omitempty"`
	// noise is set when this setting's repetitions vary more than 10 % (CV), with how many
	// repetitions would pin its median down.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Noise string `json:"noise,omitempty"`
}

// ScalingFit is the Universal Scalability Law (Gunther) fitted to one profile's throughput
// against its load: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
type ScalingFit struct {
	// by says what N is: "devices" (a peak test's steps) or a numeric sweep dimension.
	// +kubebuilder:validation:MaxLength=256
	By string `json:"by"`
	// points measured; each is (N, throughput).
	Points int32 `json:"points"`
	// +optional
	Lambda *Estimate `json:"lambda,omitempty"`
	// +optional
	Sigma *Estimate `json:"sigma,omitempty"`
	// +optional
	Kappa *Estimate `json:"kappa,omitempty"`
	// residualStdErr of the throughput, in its unit.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ResidualStdErr string `json:"residualStdErr,omitempty"`
	// peakN = √((1−σ)/κ): the load past which throughput falls; empty without contention (κ ≤ 0).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PeakN string `json:"peakN,omitempty"`
	// peakThroughput predicted at peakN.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PeakThroughput string `json:"peakThroughput,omitempty"`
	// trusted is false when any of untrusted holds.
	Trusted bool `json:"trusted"`
	// untrusted says why the fit cannot be trusted, or why there is none.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	Untrusted []string `json:"untrusted,omitempty"`
	// measured points the fit used, for the chart.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	// +listType=atomic
	Measured []ScalingPoint `json:"measured,omitempty"`
}

// Estimate is a fitted coefficient with its 95 % confidence interval.
type Estimate struct {
	// +kubebuilder:validation:MaxLength=32
	Value string `json:"value"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Low string `json:"low,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	High string `json:"high,omitempty"`
}

// ScalingPoint is one measured load level.
type ScalingPoint struct {
	// +kubebuilder:validation:MaxLength=32
	N string `json:"n"`
	// +kubebuilder:validation:MaxLength=32
	Throughput string `json:"throughput"`
}

// SizeModel is capacity across profiles: safe devices = scale × cores^exponent, fitted in
// log space to the measured profiles, so a size that was not run gets a predicted range.
type SizeModel struct {
	// +kubebuilder:validation:MaxLength=32
	Exponent string `json:"exponent"`
	// +kubebuilder:validation:MaxLength=32
	Scale string `json:"scale"`
	// points: the measured profiles the model was fitted to.
	Points int32 `json:"points"`
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	Untrusted []string `json:"untrusted,omitempty"`
	// predictions, one per spec.predict entry.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Predictions []SizePrediction `json:"predictions,omitempty"`
}

// SizePrediction is a profile's capacity predicted by the model.
type SizePrediction struct {
	// +kubebuilder:validation:MaxLength=253
	Profile string `json:"profile"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	CPU string `json:"cpu,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Memory string `json:"memory,omitempty"`
	// idealMaxDevices predicted: median with a 95 % prediction interval.
	// +optional
	IdealMaxDevices *FigureRange `json:"idealMaxDevices,omitempty"`
	// safeMaxDevices: the smaller of throughputSafeMaxDevices and memoryBound.
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// throughputSafeMaxDevices: the headroom rule applied to the low end of idealMaxDevices;
	// it follows the push period (Little's law).
	// +optional
	ThroughputSafeMaxDevices int64 `json:"throughputSafeMaxDevices,omitempty"`
	// memoryBound: the devices whose memory, at the measured profiles' median per device,
	// fills the profile's memory at the safe percentage; it does not follow the push period.
	// 0 when the plan knows no memory per device.
	// +optional
	MemoryBound int64 `json:"memoryBound,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=cpu;memory;latency;errors;generator;target
	Limit string `json:"limit,omitempty"`
	// measuredIdealMaxDevices is the median the plan measured for this profile when it also ran
	// it (held out of the model): the scoreboard.
	// +optional
	MeasuredIdealMaxDevices int64 `json:"measuredIdealMaxDevices,omitempty"`
	// errorPercent of the prediction against the measurement: (predicted − measured) / measured.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ErrorPercent string `json:"errorPercent,omitempty"`
	// message says what was predicted, or why nothing could be.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// FleetAnswer answers spec.question.
type FleetAnswer struct {
	Devices int64 `json:"devices"`
	// +kubebuilder:validation:MaxLength=32
	Period string `json:"period"`
	// rate the fleet needs, actions per second (devices / period).
	// +kubebuilder:validation:MaxLength=32
	Rate string `json:"rate"`
	// profile: the smallest profile whose safe count holds the fleet; empty when none does.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Profile string `json:"profile,omitempty"`
	// predicted: the profile was not measured; its safe count comes from the size model.
	// +optional
	Predicted bool `json:"predicted,omitempty"`
	// safeMaxDevices of that profile at the question's period.
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
	// headroomPercent left: (safe − devices) / safe.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	HeadroomPercent string `json:"headroomPercent,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=cpu;memory;latency;errors;generator;target
	Limit string `json:"limit,omitempty"`
	// monthlyCost and costPer1000Devices, when the Profile has a price.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	MonthlyCost string `json:"monthlyCost,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	CostPer1000Devices string `json:"costPer1000Devices,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=8
	Currency string `json:"currency,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	PriceAsOf string `json:"priceAsOf,omitempty"`
	// message is the answer in a sentence, or why there is none.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}
