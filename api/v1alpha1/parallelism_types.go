package v1alpha1

import "k8s.io/apimachinery/pkg/util/intstr"

// ParallelismAuto is spec.parallelism's word for "choose the runner count from the load".
const ParallelismAuto = "auto"

// MaxParallelism is the most runners a TestRun has; MaxSeparateParallelism with spec.separate.
const (
	MaxParallelism         = 5000
	MaxSeparateParallelism = 100
)

// RunnerCapacitySpec is how much load one runner, as spec.runner shapes it, carries. Set the
// figure of the load model the run uses, and only that one (the other is refused at admission):
// iterationsPerSecond for an arrival rate (devices over period; a peak test's highest step), vus
// for a load of spec.load.iterations (type benchmark, or load with iterations: every device a VU).
// +kubebuilder:validation:XValidation:rule="has(self.iterationsPerSecond) || has(self.vus)",message="spec.runnerCapacity needs iterationsPerSecond (arrival-rate load: devices/period) or vus (benchmark: devices as VUs)"
type RunnerCapacitySpec struct {
	// iterationsPerSecond one runner sustains: device actions (k6 iterations) per second, for an
	// arrival-rate load (devices over period, no spec.load.iterations; a peak test).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	IterationsPerSecond *int32 `json:"iterationsPerSecond,omitempty"`

	// vus one runner runs, for a load of spec.load.iterations (every device a VU).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	VUs *int32 `json:"vus,omitempty"`
}

// Sources of status.parallelism.
const (
	// ParallelismFromSpec: spec.parallelism is a number.
	ParallelismFromSpec = "spec"
	// ParallelismFromGiven: auto, sized with spec.runnerCapacity.
	ParallelismFromGiven = "given"
	// ParallelismFromCalibration: auto, sized with the capacity an earlier run measured.
	ParallelismFromCalibration = "calibrated"
	// ParallelismUncalibrated: auto with no capacity known yet: one runner, and this run measures it.
	ParallelismUncalibrated = "uncalibrated"
)

// ParallelismStatus is the runner count a run was made with, chosen once before its runners.
type ParallelismStatus struct {
	// chosen is how many runners the run has; fixed once written.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5000
	Chosen int32 `json:"chosen"`
	// source: spec (a number), given (auto with spec.runnerCapacity), calibrated (auto with a
	// capacity measured here before) or uncalibrated (auto, none known: one runner).
	// +kubebuilder:validation:Enum=spec;given;calibrated;uncalibrated
	Source string `json:"source"`
	// reason says how chosen was reached, with the numbers.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// suggested is set when the run ended generator-bound on runner CPU: about how many
	// runners the same load needs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5000
	Suggested int32 `json:"suggested,omitempty"`
}

// AutoParallelism says whether the run's runner count is chosen from the load: parallelism
// auto, or unset with a device model.
func (s *TestRunSpec) AutoParallelism() bool {
	if s.Parallelism == nil {
		return len(s.Zones) == 0 && s.Load != nil && s.Load.Devices != nil
	}
	return s.Parallelism.Type == intstr.String
}

// FixedParallelism is spec.parallelism when it is a number (1 when unset and not auto; the
// home zone's runners with zones); 0 when it is auto.
func (s *TestRunSpec) FixedParallelism() int {
	switch {
	case s.AutoParallelism():
		return 0
	case s.HomeZone() != nil:
		return int(s.HomeZone().Runners)
	case s.Parallelism == nil:
		return 1
	}
	return max(s.Parallelism.IntValue(), 1)
}

// RunnerCount is how many runners the run has: status.parallelism.chosen once written, else a
// numeric spec.parallelism (runs made before status.parallelism existed have one); 0 while an
// auto choice is not made yet.
func (r *TestRun) RunnerCount() int {
	if p := r.Status.Parallelism; p != nil && p.Chosen > 0 {
		return int(p.Chosen)
	}
	return r.Spec.FixedParallelism()
}

// FixedParallelism returns a spec.parallelism of n runners.
func FixedParallelism(n int32) *intstr.IntOrString {
	v := intstr.FromInt32(n)
	return &v
}
