package v1alpha1

// Duration is a positive span of time written as k6 and Go write it: 30s, 5m, 2h, 1h30m, 250ms.
// A string rather than metav1.Duration so a bad value is refused at admission with a clear
// message instead of failing later when a client decodes the object.
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="must be a positive duration such as 250ms, 30s, 5m, 2h or 1h30m"
type Duration string

// ThresholdExpression is one k6 threshold condition: an aggregation, an operator and a number,
// e.g. p(95)<200, rate<0.01, avg<=150, count>100.
// The rule is pkg/measure.ThresholdExpressionPattern verbatim (a CEL raw string), which the
// operator's parser uses too; test/admission checks the generated CRD still holds it.
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[ \t]*(avg|min|max|med|count|rate|value|p\((100(\.0+)?|[0-9]{1,2}(\.[0-9]+)?)\))[ \t]*(<=|<|>=|>|===|==|!=)[ \t]*([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?)[ \t]*$')`,message="must be a k6 threshold expression: an aggregation (avg, min, max, med, count, rate, value or p(N) with N from 0 to 100), an operator (<, <=, >, >=, ==, !=) and a number, e.g. p(95)<200 or rate<0.01"
type ThresholdExpression string

// Percent is a whole percentage from 0 to 100.
// +kubebuilder:validation:Minimum=0
// +kubebuilder:validation:Maximum=100
type Percent int32

// CapacitySpec holds the assumptions that turn a measured rate into device counts (seed 000):
// ideal max devices = pushes per second × push period; safe max = safePercent of ideal;
// typical max = typicalPercent of ideal.
type CapacitySpec struct {
	// pushPeriod is how often one device pushes; defaults to spec.load.period.
	// +optional
	PushPeriod Duration `json:"pushPeriod,omitempty"`

	// safePercent of the ideal maximum is recommended as the safe maximum.
	// +optional
	// +kubebuilder:default=80
	SafePercent Percent `json:"safePercent,omitempty"`

	// typicalPercent of the ideal maximum is the typical sustained throughput.
	// +optional
	// +kubebuilder:default=20
	TypicalPercent Percent `json:"typicalPercent,omitempty"`
}
