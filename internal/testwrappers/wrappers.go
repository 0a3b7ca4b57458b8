// Package testwrappers builds fleetbench objects for tests in a few readable lines:
//
//	MakeTestRun("quick", "default").Profile("C1").Inline(script).Parallelism(2).Obj()
package testwrappers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// DefaultScript is a minimal valid k6 script.
const DefaultScript = "import http from 'k6/http';\nexport default function () { http.get(`${__ENV.TARGET_WEB_URL}/`); }\n"

// TestRunWrapper wraps a TestRun under construction.
type TestRunWrapper struct{ v1alpha1.TestRun }

// MakeTestRun starts a TestRun with the smallest spec admission accepts: a C1 nginx target and an
// inline script.
func MakeTestRun(name, namespace string) *TestRunWrapper {
	return &TestRunWrapper{v1alpha1.TestRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "TestRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.TestRunSpec{
			Profile: "C1",
			Target:  v1alpha1.TargetSpec{Components: []v1alpha1.Component{{Name: "web", Kind: v1alpha1.ComponentWebServer}}},
			Script:  v1alpha1.ScriptSpec{Inline: DefaultScript},
		},
	}}
}

// Obj returns the TestRun.
func (w *TestRunWrapper) Obj() *v1alpha1.TestRun { return &w.TestRun }

func (w *TestRunWrapper) Type(t v1alpha1.TestType) *TestRunWrapper { w.Spec.Type = t; return w }

// Annotation sets a metadata annotation.
func (w *TestRunWrapper) Annotation(k, v string) *TestRunWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

func (w *TestRunWrapper) Profile(p string) *TestRunWrapper { w.Spec.Profile = p; return w }
func (w *TestRunWrapper) Parallelism(n int32) *TestRunWrapper {
	w.Spec.Parallelism = v1alpha1.FixedParallelism(n)
	return w
}
func (w *TestRunWrapper) Arguments(a string) *TestRunWrapper { w.Spec.Arguments = a; return w }
func (w *TestRunWrapper) Args(a ...string) *TestRunWrapper   { w.Spec.Args = a; return w }

// Separate puts every runner on its own node.
func (w *TestRunWrapper) Separate() *TestRunWrapper { w.Spec.Separate = true; return w }

// Outputs streams the runners to k6's own outputs too.
func (w *TestRunWrapper) Outputs(o ...v1alpha1.OutputSpec) *TestRunWrapper {
	w.Spec.Outputs = o
	return w
}

// Components replaces the target with these components.
func (w *TestRunWrapper) Components(c ...v1alpha1.Component) *TestRunWrapper {
	w.Spec.Target.Components = c
	w.Spec.Target.External = nil
	return w
}

// Sizing sets how the profile is split among components.
func (w *TestRunWrapper) Sizing(s v1alpha1.SizingMode) *TestRunWrapper {
	w.Spec.Target.Sizing = s
	return w
}

// External replaces the target with an external URL.
func (w *TestRunWrapper) External(url string) *TestRunWrapper {
	w.Spec.Target.Components = nil
	w.Spec.Target.External = &v1alpha1.ExternalTarget{URL: url}
	return w
}

// Script replaces the script source.
func (w *TestRunWrapper) Script(s v1alpha1.ScriptSpec) *TestRunWrapper { w.Spec.Script = s; return w }

// Inline replaces the script source with this inline script.
func (w *TestRunWrapper) Inline(script string) *TestRunWrapper {
	w.Spec.Script = v1alpha1.ScriptSpec{Inline: script}
	return w
}

// Devices sets the device-fleet model: n devices, each acting once per period.
func (w *TestRunWrapper) Devices(n int32, period v1alpha1.Duration) *TestRunWrapper {
	w.load().Devices = ptr.To(n)
	w.load().Period = period
	return w
}

func (w *TestRunWrapper) Duration(d v1alpha1.Duration) *TestRunWrapper {
	w.load().Duration = d
	return w
}

func (w *TestRunWrapper) Iterations(n int32) *TestRunWrapper {
	w.load().Iterations = ptr.To(n)
	return w
}

// PreAllocatedVUs sets the arrival-rate executor's VUs per runner.
func (w *TestRunWrapper) PreAllocatedVUs(n int32) *TestRunWrapper {
	w.load().PreAllocatedVUs = ptr.To(n)
	return w
}

// Load replaces the whole load block.
func (w *TestRunWrapper) Load(l *v1alpha1.LoadSpec) *TestRunWrapper { w.Spec.Load = l; return w }

func (w *TestRunWrapper) load() *v1alpha1.LoadSpec {
	if w.Spec.Load == nil {
		w.Spec.Load = &v1alpha1.LoadSpec{}
	}
	return w.Spec.Load
}

// Threshold adds expressions for a metric.
func (w *TestRunWrapper) Threshold(metric string, exprs ...v1alpha1.ThresholdExpression) *TestRunWrapper {
	if w.Spec.Thresholds == nil {
		w.Spec.Thresholds = map[string]v1alpha1.ThresholdList{}
	}
	w.Spec.Thresholds[metric] = append(w.Spec.Thresholds[metric], exprs...)
	return w
}

func (w *TestRunWrapper) Stability(s *v1alpha1.StabilitySpec) *TestRunWrapper {
	w.Spec.Stability = s
	return w
}
func (w *TestRunWrapper) Benchmark(b *v1alpha1.BenchmarkSpec) *TestRunWrapper {
	w.Spec.Benchmark = b
	return w
}
func (w *TestRunWrapper) Peak(p *v1alpha1.PeakSpec) *TestRunWrapper { w.Spec.Peak = p; return w }

// Sysctl adds a runner sysctl.
func (w *TestRunWrapper) Sysctl(name, value string) *TestRunWrapper {
	w.runner().Sysctls = append(w.runner().Sysctls, corev1.Sysctl{Name: name, Value: value})
	return w
}

// RunnerEnv adds variables to every runner container.
func (w *TestRunWrapper) RunnerEnv(env ...corev1.EnvVar) *TestRunWrapper {
	w.runner().Env = append(w.runner().Env, env...)
	return w
}

// Runner replaces the runner pod knobs.
func (w *TestRunWrapper) Runner(r *v1alpha1.RunnerSpec) *TestRunWrapper { w.Spec.Runner = r; return w }

func (w *TestRunWrapper) runner() *v1alpha1.RunnerSpec {
	if w.Spec.Runner == nil {
		w.Spec.Runner = &v1alpha1.RunnerSpec{}
	}
	return w.Spec.Runner
}

func (w *TestRunWrapper) TTL(seconds int32) *TestRunWrapper {
	w.Spec.TTLSecondsAfterFinished = ptr.To(seconds)
	return w
}

func (w *TestRunWrapper) Timeouts(t *v1alpha1.TimeoutsSpec) *TestRunWrapper {
	w.Spec.Timeouts = t
	return w
}

// Cleanup says what happens to the provisioned target when the test ends.
func (w *TestRunWrapper) Cleanup(p v1alpha1.TargetCleanupPolicy) *TestRunWrapper {
	w.Spec.Cleanup = &v1alpha1.CleanupSpec{Target: p}
	return w
}

// ProfileWrapper wraps a Profile under construction.
type ProfileWrapper struct{ v1alpha1.Profile }

// MakeProfile starts a Profile of the given size.
func MakeProfile(name, cpu, memory string) *ProfileWrapper {
	return &ProfileWrapper{v1alpha1.Profile{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Profile"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.ProfileSpec{CPU: resource.MustParse(cpu), Memory: resource.MustParse(memory)},
	}}
}

func (w *ProfileWrapper) Obj() *v1alpha1.Profile { return &w.Profile }

func (w *ProfileWrapper) Description(d string) *ProfileWrapper { w.Spec.Description = d; return w }

// ForNamespaces lets only namespaces with these labels use the profile.
func (w *ProfileWrapper) ForNamespaces(labels map[string]string) *ProfileWrapper {
	w.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}

// CapacityPlanWrapper wraps a CapacityPlan under construction.
type CapacityPlanWrapper struct{ v1alpha1.CapacityPlan }

// MakeCapacityPlan starts a plan over the given profiles from a template TestRun's spec
// (its profile is cleared: the plan supplies it).
func MakeCapacityPlan(name, namespace string, template *v1alpha1.TestRun, profiles ...string) *CapacityPlanWrapper {
	spec := *template.Spec.DeepCopy()
	spec.Profile = ""
	return &CapacityPlanWrapper{v1alpha1.CapacityPlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "CapacityPlan"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.CapacityPlanSpec{Profiles: profiles, Template: spec},
	}}
}

func (w *CapacityPlanWrapper) Obj() *v1alpha1.CapacityPlan { return &w.CapacityPlan }

// Sweep adds a sweep dimension.
func (w *CapacityPlanWrapper) Sweep(component, env string, values ...string) *CapacityPlanWrapper {
	w.Spec.Sweep = append(w.Spec.Sweep, v1alpha1.SweepDimension{Component: component, Env: env, Values: values})
	return w
}

// TemplateProfile sets the template's profile, which admission refuses.
func (w *CapacityPlanWrapper) TemplateProfile(p string) *CapacityPlanWrapper {
	w.Spec.Template.Profile = p
	return w
}

// Clone returns a copy to change without touching this one.
func (w *TestRunWrapper) Clone() *TestRunWrapper { return &TestRunWrapper{*w.DeepCopy()} }

// Generation sets metadata.generation, as the API server would.
func (w *TestRunWrapper) Generation(g int64) *TestRunWrapper { w.ObjectMeta.Generation = g; return w }

// Phase sets the status phase, reason and message.
func (w *TestRunWrapper) Phase(p v1alpha1.TestRunPhase, reason, message string) *TestRunWrapper {
	w.Status.Phase, w.Status.Reason, w.Status.Message = p, reason, message
	return w
}

// Verdict sets the status verdict.
func (w *TestRunWrapper) Verdict(v v1alpha1.Verdict) *TestRunWrapper { w.Status.Verdict = v; return w }

// SweepScriptEnv adds a dimension that varies a variable the script reads as __ENV.NAME.
func (w *CapacityPlanWrapper) SweepScriptEnv(name string, values ...string) *CapacityPlanWrapper {
	w.Spec.Sweep = append(w.Spec.Sweep, v1alpha1.SweepDimension{ScriptEnv: name, Values: values})
	return w
}

// SweepField adds a dimension that varies a TestRun field (devices, parallelism).
func (w *CapacityPlanWrapper) SweepField(field string, values ...string) *CapacityPlanWrapper {
	w.Spec.Sweep = append(w.Spec.Sweep, v1alpha1.SweepDimension{Field: field, Values: values})
	return w
}

func (w *CapacityPlanWrapper) Repetitions(n int32) *CapacityPlanWrapper {
	w.Spec.Repetitions = n
	return w
}

// Parallel runs up to n children at once.
func (w *CapacityPlanWrapper) Parallel(n int32) *CapacityPlanWrapper {
	w.Spec.Concurrency, w.Spec.MaxParallel = v1alpha1.ConcurrencyParallel, &n
	return w
}

func (w *CapacityPlanWrapper) FailurePolicy(p string) *CapacityPlanWrapper {
	w.Spec.FailurePolicy = p
	return w
}

// SweepComponentField adds a dimension that varies a component's field (tls).
func (w *CapacityPlanWrapper) SweepComponentField(component, field string, values ...string) *CapacityPlanWrapper {
	w.Spec.Sweep = append(w.Spec.Sweep, v1alpha1.SweepDimension{Component: component, Field: field, Values: values})
	return w
}

// Predict names profiles the plan predicts from the measured ones.
func (w *CapacityPlanWrapper) Predict(profiles ...string) *CapacityPlanWrapper {
	w.Spec.Predict = append(w.Spec.Predict, profiles...)
	return w
}

// Question asks which profile holds devices acting once per period.
func (w *CapacityPlanWrapper) Question(devices int64, period string) *CapacityPlanWrapper {
	w.Spec.Question = &v1alpha1.FleetQuestion{Devices: devices, Period: v1alpha1.Duration(period)}
	return w
}

// MemoryFrom names stability runs whose memory per device bounds their profile.
func (w *CapacityPlanWrapper) MemoryFrom(runs ...string) *CapacityPlanWrapper {
	w.Spec.MemoryFrom = append(w.Spec.MemoryFrom, runs...)
	return w
}

// PricePerHour prices the whole machine per hour, as of a date.
func (w *ProfileWrapper) PricePerHour(amount, currency, asOf string) *ProfileWrapper {
	a := v1alpha1.PriceAmount(amount)
	w.Spec.Price = &v1alpha1.ProfilePrice{PerHour: &a, Currency: currency, AsOf: asOf}
	return w
}

// Zones spreads the run over zones (spec.zones); the runner count is theirs.
func (w *TestRunWrapper) Zones(z ...v1alpha1.ZoneSpec) *TestRunWrapper {
	w.Spec.Zones, w.Spec.Parallelism = z, nil
	return w
}
