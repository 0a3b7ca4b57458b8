package v1alpha1

// PlanBaselineSpec names the CapacityPlan a plan is compared with: seed 000's "Comparison of
// some data with later versions", cell by cell (profile and sweep values), over the
// repetitions. The bands are seed 000's: resources success ≤ 100 %, ok ≤ 120 %; throughput
// and device counts success ≥ 100 %, ok ≥ 80 %.
type PlanBaselineSpec struct {
	// name of a CapacityPlan in this plan's namespace. Baselines are never read from another
	// namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="spec.baseline.name must be the name of a CapacityPlan in this namespace (no namespace prefix: a baseline is never read from another namespace)"
	Name string `json:"name"`

	// onMissing: Fail (the default) ends the plan Failed BaselineNotFound when the baseline
	// plan does not exist, ended Failed, or is still running at the deadline; Warn keeps the
	// table without a comparison and says so in status.comparison and in an event.
	// +optional
	// +kubebuilder:default=Fail
	OnMissing BaselineOnMissing `json:"onMissing,omitempty"`

	// onUndecided is what a plan that would otherwise pass becomes when its comparison could
	// not judge a cell: TooFewSamples (fewer than 4 repetitions that Succeeded on a side, e.g.
	// a baseline plan of 1 repetition) or NoData (a cell the baseline plan lacks, or that
	// measured nothing). Inconclusive (the default) ends it Ready=False, Stalled=True
	// VerdictInconclusive, Fail Ready=False, Stalled=True VerdictFailed, Pass leaves it Ready;
	// status.message names the cells either way. As spec.baseline.onUndecided of a TestRun.
	// A regression still ends the plan VerdictRegressed.
	// +optional
	// +kubebuilder:default=Inconclusive
	OnUndecided BaselineOnUndecided `json:"onUndecided,omitempty"`
}

// PlanComparison is a plan compared with its baseline plan, written once when every cell is
// done and the baseline plan has ended.
type PlanComparison struct {
	// baseline is the plan compared with; empty when none was found (onMissing Warn or Fail).
	// +optional
	Baseline *ComparedPlan `json:"baseline,omitempty"`

	// decision of the whole comparison: Regressed when any metric of any cell regressed, else
	// the worst of the others.
	// +optional
	Decision ComparisonDecision `json:"decision,omitempty"`

	// worst names the cell and metric that decided, e.g. "C2 WORKERS=4 pushesPerSecond 71.20 %
	// of baseline (ok ≥ 80 %), p 0.0040".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Worst string `json:"worst,omitempty"`

	// method is the statistical test.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Method string `json:"method,omitempty"`

	// message says what was compared, or why nothing was.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// cells has one entry per cell of this plan (profile × sweep values; the repetitions are
	// its samples), in the table's order.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	Cells []CellComparison `json:"cells,omitempty"`
}

// ComparedPlan identifies the baseline plan.
type ComparedPlan struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`
	// repetitions is the baseline plan's spec.repetitions when compared: below 4 no cell can
	// be judged, and the plan's message says to run the baseline plan again.
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
}

// CellComparison is one cell of the plan against the baseline plan's cell of the same profile
// and sweep values.
type CellComparison struct {
	// +kubebuilder:validation:MaxLength=253
	Profile string `json:"profile"`
	// values of the sweep dimensions, as in status.table.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 256)",message="status.comparison.cells[].values: names of at most 253 and values of at most 256 characters"
	Values map[string]string `json:"values,omitempty"`
	// decision of the cell: the worst of its metrics.
	Decision ComparisonDecision `json:"decision"`
	// metrics: memory peak (MiB), memory per device (KiB), pushes/s (req/s when the runs
	// have no pushes) and safe max devices.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	Metrics []MetricComparison `json:"metrics,omitempty"`
}
