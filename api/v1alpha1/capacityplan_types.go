package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapacityPlanSpec runs one TestRun per profile (and per sweep value) and keeps the sizing
// table seed 000 keeps by hand ("Ideal max devs", "Safe max devs").
// +kubebuilder:validation:XValidation:rule="!has(self.template.profile)",message="spec.template.profile must be empty: list the profiles to compare in spec.profiles"
// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !has(self.template.target.components) || self.sweep.all(s, self.template.target.components.exists(c, c.name == s.component))",message="spec.sweep[].component must name a component of spec.template.target.components"
// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || has(self.template.target.components)",message="spec.sweep varies provisioned components; spec.template.target needs components, not external"
type CapacityPlanSpec struct {
	// profiles to compare, e.g. [C1, C2, C3, C4]; case does not matter, as in TestRun.spec.profile.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.filter(q, q.lowerAscii() == p.lowerAscii()).size() == 1)",message="spec.profiles lists a profile twice (names are compared without case: C1 and c1 are one profile)"
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Profiles []string `json:"profiles"`

	// sweep varies an environment variable of a component; every combination of values runs
	// on every profile (seed 000's Bench-6: WORKERS 1, 2, 4, 8).
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	Sweep []SweepDimension `json:"sweep,omitempty"`

	// template is the TestRun every child is made from.
	// +required
	Template TestRunSpec `json:"template"`

	// capacity holds the assumptions behind the table's device counts.
	// +optional
	Capacity *CapacitySpec `json:"capacity,omitempty"`

	// concurrency: Serial runs one child at a time (default); Parallel runs them side by side,
	// which only compares fairly when each lands on its own nodes.
	// +optional
	// +kubebuilder:default=Serial
	// +kubebuilder:validation:Enum=Serial;Parallel
	Concurrency string `json:"concurrency,omitempty"`
}

// SweepDimension is one environment variable of one component and the values it takes.
type SweepDimension struct {
	// component names a component of the template's target.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Component string `json:"component"`

	// env is the variable to set.
	// +required
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="must be an environment variable name such as WORKERS"
	Env string `json:"env"`

	// values it takes, one child TestRun each.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=256
	Values []string `json:"values"`
}

// CapacityPlanStatus is the sizing table.
type CapacityPlanStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
	Phase string `json:"phase,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// table has one row per profile and sweep combination.
	// +optional
	// +kubebuilder:validation:MaxItems=2048
	// +listType=atomic
	Table []CapacityRow `json:"table,omitempty"`
}

// CapacityRow is one line of the sizing table.
type CapacityRow struct {
	Profile string `json:"profile"`
	// values of the sweep dimensions, keyed by env name.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// testRun is the child TestRun that produced the row.
	// +optional
	TestRun string `json:"testRun,omitempty"`
	// +optional
	Phase TestRunPhase `json:"phase,omitempty"`
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// +optional
	PushesPerSecond string `json:"pushesPerSecond,omitempty"`
	// +optional
	IdealMaxDevices int64 `json:"idealMaxDevices,omitempty"`
	// +optional
	TypicalMaxDevices int64 `json:"typicalMaxDevices,omitempty"`
	// +optional
	SafeMaxDevices int64 `json:"safeMaxDevices,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=fleetbench,shortName=cp
// +kubebuilder:printcolumn:name="PROFILES",type=string,JSONPath=`.spec.profiles`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// CapacityPlan runs a TestRun template across profiles and sweep values and keeps the sizing table.
type CapacityPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
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
