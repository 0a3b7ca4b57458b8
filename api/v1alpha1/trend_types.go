package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrendOnShift says what a change for the worse in the trend does to a run.
// +kubebuilder:validation:Enum=Warn;Regressed
type TrendOnShift string

const (
	// TrendShiftWarn says it in status.trend, the message and a Warning event.
	TrendShiftWarn TrendOnShift = "Warn"
	// TrendShiftRegressed makes a run that would pass REGRESSED.
	TrendShiftRegressed TrendOnShift = "Regressed"
)

// TrendSpec holds a run against the trend of its test: once its results are merged, the change
// points of throughput, latency and the target's resources over the kept runs its selector
// matches, this run the last (pkg/judge/shift: E-Divisive means, a permutation test). A release
// train asks "did anything shift in the last N releases", which one run against one baseline
// cannot answer.
type TrendSpec struct {
	// selector picks the kept runs of this test in this namespace (the kept results of every run
	// that Succeeded, whatever its verdict; at most the newest 50), e.g. matchLabels {test: ingest}.
	// +required
	Selector metav1.LabelSelector `json:"selector"`

	// orderBy puts the runs in sequence: completion (the default), or label:KEY, the value of a
	// release label compared as versions (v1.9 before v1.10); runs without it are left out.
	// +optional
	// +kubebuilder:validation:MaxLength=80
	// +kubebuilder:validation:XValidation:rule="self == 'completion' || self.matches('^label:([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="spec.trend.orderBy must be completion, or label: and a label key, e.g. label:release"
	OrderBy string `json:"orderBy,omitempty"`

	// lastRuns is how far back a change counts: a change point whose new level starts within
	// the last lastRuns runs (this one included). Default 5.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	LastRuns int32 `json:"lastRuns,omitempty"`

	// onShift: Warn (the default) says a change for the worse in status.trend, the message and a
	// Warning event TrendShift; Regressed also makes a run that would pass REGRESSED.
	// +optional
	// +kubebuilder:default=Warn
	OnShift TrendOnShift `json:"onShift,omitempty"`
}

// TrendResult is status.trend: the change points found over the run's kept runs.
type TrendResult struct {
	// runs is how many runs were analysed, this one included.
	Runs int32 `json:"runs"`
	// first and last name the oldest and the newest run analysed.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	First string `json:"first,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Last string `json:"last,omitempty"`
	// method is the analysis, e.g. "E-Divisive means over whole-run values, permutation test
	// (199 permutations), p ≤ 0.01, window 50".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Method string `json:"method,omitempty"`
	// message says what was found, or why nothing could be (too few runs, records unreadable).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// shifts are the change points within the last spec.trend.lastRuns runs, oldest first.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Shifts []TrendShift `json:"shifts,omitempty"`
}

// TrendShift is one change point: the run where a metric's new level starts.
type TrendShift struct {
	// +kubebuilder:validation:MaxLength=256
	Metric string `json:"metric"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Stat string `json:"stat,omitempty"`
	// run is the first run of the new level.
	// +kubebuilder:validation:MaxLength=253
	Run string `json:"run"`
	// before and after are the levels' means; shiftPercent after against before, in %.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Before string `json:"before,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	After string `json:"after,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ShiftPercent string `json:"shiftPercent,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PValue string `json:"pValue,omitempty"`
	// direction: better or worse, as the metric's direction reads the shift.
	// +optional
	// +kubebuilder:validation:Enum=better;worse
	Direction string `json:"direction,omitempty"`
}
