package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BaselineOnMissing says what a run does when its baseline cannot be found.
// +kubebuilder:validation:Enum=Fail;Warn
type BaselineOnMissing string

const (
	// BaselineMissingFail ends the run Failed BaselineNotFound before anything is provisioned.
	BaselineMissingFail BaselineOnMissing = "Fail"
	// BaselineMissingWarn runs without a comparison; status.comparison and a Warning event say
	// that no baseline was found.
	BaselineMissingWarn BaselineOnMissing = "Warn"
)

// BaselineOnUndecided says how a run ends when its comparison could not judge a row.
// +kubebuilder:validation:Enum=Pass;Inconclusive;Fail
type BaselineOnUndecided string

const (
	// BaselineUndecidedInconclusive ends a run that would otherwise pass INCONCLUSIVE.
	BaselineUndecidedInconclusive BaselineOnUndecided = "Inconclusive"
	// BaselineUndecidedFail ends it FAILED.
	BaselineUndecidedFail BaselineOnUndecided = "Fail"
	// BaselineUndecidedPass leaves it PASSED; the message still names the rows.
	BaselineUndecidedPass BaselineOnUndecided = "Pass"
)

// Direction says which way a compared metric gets better.
// +kubebuilder:validation:Enum=LowerIsBetter;HigherIsBetter
type Direction string

const (
	LowerIsBetter  Direction = "LowerIsBetter"
	HigherIsBetter Direction = "HigherIsBetter"
)

// BaselineSpec names the run a TestRun is compared with, and how. The comparison is made once
// the run's results are merged; a regression makes the verdict REGRESSED.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.selector)",message="spec.baseline needs exactly one of name (a TestRun in this namespace) or selector (the newest Succeeded TestRun whose labels match)"
type BaselineSpec struct {
	// name of a TestRun in this TestRun's namespace, or of its kept results once it was
	// deleted (by its TTL or a prune). Baselines are never read from another namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="spec.baseline.name must be the name of a TestRun in this namespace (no namespace prefix: a baseline is never read from another namespace)"
	Name string `json:"name,omitempty"`

	// selector picks the newest Succeeded TestRun in this namespace whose labels match, among
	// the TestRuns and the kept results of deleted ones; the run itself is never its own
	// baseline. A pipeline says "the last run of this test on the previous release" with it,
	// e.g. matchLabels {test: ingest, release: v1.4}.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// onMissing: Fail (the default) ends the run Failed BaselineNotFound, before anything is
	// provisioned; Warn runs without a comparison and says so in status and in an event.
	// +optional
	// +kubebuilder:default=Fail
	OnMissing BaselineOnMissing `json:"onMissing,omitempty"`

	// onUndecided is what a run that would otherwise be PASSED becomes when its comparison
	// could not judge a row: TooFewSamples (too few windows for the rank test to reach
	// p < 0.05) or NoData (a metric missing from a side, a baseline of 0, the pinned
	// baseline's kept record deleted or unreadable). Inconclusive (the default) ends it
	// INCONCLUSIVE, Fail FAILED, Pass leaves it PASSED; the message names the rows either way.
	// A regression still ends the run REGRESSED, and a run that failed stays FAILED.
	// +optional
	// +kubebuilder:default=Inconclusive
	OnUndecided BaselineOnUndecided `json:"onUndecided,omitempty"`

	// metrics are compared in addition to the built-in ones, or replace a built-in's bands
	// when they name it. Built-ins: throughput, latencyP95, latencyP99, targetMemory,
	// targetCPU. Any other name is a k6 metric of status.results.metrics, with an optional tag
	// filter (http_req_duration{name:push}, a custom Trend).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Metrics []ComparedMetric `json:"metrics,omitempty"`

	// reference holds the run against a fixed bar as well: the run named, or the OLDEST run that
	// PASSED among those the selector matches (the first accepted release, or the one a label
	// pins). The baseline moves with every release that passes, so a slide of a few percent per
	// release never leaves its band; the reference does not move, so the slide is caught once
	// its sum is beyond the band. Compared with the same metrics and bands, into
	// status.referenceComparison; a regression against either makes the verdict REGRESSED.
	// Its kept record is spared by the namespace's retention while runs pin it.
	// +optional
	Reference *BaselineReference `json:"reference,omitempty"`

	// allowDifferent names the differences between this run and its baseline (or reference)
	// that are intended: Load (spec.load and the k6 flags that set load), Script (the script's
	// text), Type (spec.type) or Profile (spec.profile). Any other difference ends the run
	// Failed BaselineMismatch before anything is provisioned: a run at another load is another
	// experiment, not a regression.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	AllowDifferent []ShapePart `json:"allowDifferent,omitempty"`
}

// ShapePart is one thing that makes two runs the same experiment.
// +kubebuilder:validation:Enum=Load;Script;Type;Profile
type ShapePart string

const (
	ShapeLoad    ShapePart = "Load"
	ShapeScript  ShapePart = "Script"
	ShapeType    ShapePart = "Type"
	ShapeProfile ShapePart = "Profile"
)

// BaselineReference names the fixed reference of spec.baseline.reference.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.selector)",message="spec.baseline.reference needs exactly one of name (a TestRun in this namespace) or selector (the oldest TestRun that PASSED whose labels match)"
type BaselineReference struct {
	// name of a TestRun in this namespace, or of its kept results once it was deleted.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="spec.baseline.reference.name must be the name of a TestRun in this namespace"
	Name string `json:"name,omitempty"`

	// selector picks the oldest TestRun that PASSED in this namespace whose labels match,
	// among the TestRuns and the kept results of deleted ones; never the run itself.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ComparedMetric is one metric of a comparison with its direction and bands. The bands are
// percentages of the baseline's value. Without bands a metric gets seed 000's rule: lower is
// better (resources, latency) is success up to 100 %, ok up to 120 %, regressed above; higher
// is better (throughput) is success from 100 %, ok from 80 %, regressed below.
//
// +kubebuilder:validation:XValidation:rule="!has(self.successPercent) || !has(self.okPercent) || ((has(self.direction) ? self.direction == 'HigherIsBetter' : self.name == 'throughput') ? self.okPercent <= self.successPercent : self.okPercent >= self.successPercent)",message="okPercent must be the wider band: at most successPercent for HigherIsBetter (throughput's own direction), at least successPercent for LowerIsBetter"
// +kubebuilder:validation:XValidation:rule="!has(self.stat) || !(self.name in ['throughput', 'latencyP95', 'latencyP99', 'targetMemory', 'targetCPU'])",message="stat is for a k6 metric: a built-in comparison has its own (latencyP95 is p95); name the k6 metric instead, e.g. http_req_duration with stat p90"
type ComparedMetric struct {
	// name: a built-in comparison, or a k6 metric name with an optional tag filter.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z_][a-zA-Z0-9_]*(\\\\{[^{}]+\\\\})?$')",message="must be a built-in comparison (throughput, latencyP95, latencyP99, targetMemory, targetCPU) or a k6 metric name with an optional tag filter, e.g. http_req_duration{name:push}"
	Name string `json:"name"`

	// stat of a k6 metric compared: avg, med, p90, p95 or p99 of a Trend (default p95), rate
	// of a Counter (per second) or of a Rate, value of a Gauge. Built-ins have their own.
	// +optional
	// +kubebuilder:validation:Enum=avg;med;p90;p95;p99;rate;value
	Stat string `json:"stat,omitempty"`

	// direction: LowerIsBetter or HigherIsBetter. Unset keeps the metric's own: a built-in's
	// (throughput HigherIsBetter, the others LowerIsBetter), LowerIsBetter for a k6 metric.
	// (No API default: it would turn throughput LowerIsBetter whenever only its bands are set.)
	// +optional
	Direction Direction `json:"direction,omitempty"`

	// successPercent is the band's edge for success, in % of the baseline's value.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	SuccessPercent *int32 `json:"successPercent,omitempty"`

	// okPercent is the band's edge for ok; beyond it, a difference that is not noise is a
	// regression.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	OKPercent *int32 `json:"okPercent,omitempty"`
}

// ComparisonDecision is the outcome of one compared metric, or of the whole comparison.
// +kubebuilder:validation:Enum=Success;OK;Regressed;TooFewSamples;NoData
type ComparisonDecision string

const (
	// ComparisonSuccess: as good as the baseline or better, or a difference that may be noise.
	ComparisonSuccess ComparisonDecision = "Success"
	// ComparisonOK: worse than the baseline, within the ok band.
	ComparisonOK ComparisonDecision = "OK"
	// ComparisonRegressed: beyond the ok band, and significantly worse than its edge.
	ComparisonRegressed ComparisonDecision = "Regressed"
	// ComparisonTooFewSamples: too few windows or repetitions on a side for the test to reach
	// its significance level; no decision is made.
	ComparisonTooFewSamples ComparisonDecision = "TooFewSamples"
	// ComparisonNoData: the metric is missing from this run or from the baseline.
	ComparisonNoData ComparisonDecision = "NoData"
)

// Comparison is a run compared with its baseline, written once when the run's results are
// merged.
type Comparison struct {
	// baseline is the run compared with; empty when none was found (onMissing Warn).
	// +optional
	Baseline *ComparedRun `json:"baseline,omitempty"`

	// decision of the whole comparison: Regressed when any metric regressed, else the worst
	// of the others.
	// +optional
	Decision ComparisonDecision `json:"decision,omitempty"`

	// worst names the metric that decided, e.g. "throughput 71.20 % of baseline".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Worst string `json:"worst,omitempty"`

	// method is the statistical test, e.g. "Mann-Whitney U over 10 s window blocks, one-sided,
	// alpha 0.05; bootstrap 95 % CI of the ratio".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Method string `json:"method,omitempty"`

	// message says what was compared, or why nothing was.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// metrics has one row per compared metric.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Metrics []MetricComparison `json:"metrics,omitempty"`
}

// ComparedRun identifies the baseline.
type ComparedRun struct {
	// name of the baseline TestRun.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// uid of the baseline TestRun.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`
	// source: TestRun (read from the run itself) or Kept (from the kept results of a deleted run).
	// +kubebuilder:validation:Enum=TestRun;Kept
	Source string `json:"source"`
	// completionTime of the baseline run.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// shape is what made the two runs the same experiment, as the baseline's kept record
	// says (type, Profile, load, script digest), once checked against this run's; a difference
	// spec.baseline.allowDifferent allows is named.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Shape string `json:"shape,omitempty"`
}

// MetricComparison is one metric of this run against the baseline. Numbers are text with
// fixed decimals, as elsewhere in status.
type MetricComparison struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Stat string `json:"stat,omitempty"`
	// unit of baseline and current, e.g. req/s, ms, MiB, cores.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Unit      string    `json:"unit,omitempty"`
	Direction Direction `json:"direction"`
	// baseline and current are the whole-run values.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Baseline string `json:"baseline,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Current string `json:"current,omitempty"`
	// ratioPercent is current in % of baseline, two decimals.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RatioPercent string `json:"ratioPercent,omitempty"`
	// band, e.g. "success ≤ 100 %, ok ≤ 120 %".
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Band string `json:"band,omitempty"`
	// ciLowPercent and ciHighPercent bound the ratio at 95 % confidence.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CILowPercent string `json:"ciLowPercent,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CIHighPercent string `json:"ciHighPercent,omitempty"`
	// pValue of the one-sided test that the run is worse than the band edge that decided: the
	// ok edge for Regressed, the success edge otherwise (the baseline itself by default).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PValue string `json:"pValue,omitempty"`
	// samples on each side: windows within a run, or repetitions across runs.
	// +optional
	BaselineSamples int32 `json:"baselineSamples,omitempty"`
	// +optional
	CurrentSamples int32              `json:"currentSamples,omitempty"`
	Decision       ComparisonDecision `json:"decision"`
	// note says why, e.g. "3 windows a side: a rank test needs 4 to reach p < 0.05".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Note string `json:"note,omitempty"`
}
