package judge

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// Two runners share each step; step 2 fails a fifth of its requests and is slow. Each step
// is judged on the merged windows of its hold alone.
func TestMeasureStepMergesRunnersWithinTheHold(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	steps := []tw.StepLoad{
		{From: time.Second, To: 6 * time.Second, Requests: 50, LatencyMs: 10},
		{From: 7 * time.Second, To: 12 * time.Second, Requests: 100, LatencyMs: 20},
		{From: 13 * time.Second, To: 18 * time.Second, Requests: 150, Failed: 30, LatencyMs: 400},
	}
	upTo := start.Add(20 * time.Second)
	envs := []measure.Envelope{
		tw.LiveEnvelope("r0", start, time.Second, steps, upTo),
		tw.LiveEnvelope("r1", start, time.Second, steps, upTo),
	}
	rules := v1alpha1.PeakStopRules{ErrorPercentAbove: ptr.To[v1alpha1.Percent](5), P95Above: "300ms"}
	for i, want := range []struct {
		requests uint64
		rps      float64
		errors   float64
		p95      float64
		rule     string
	}{
		{100, 20, 0, 10, ""},
		{200, 40, 0, 20, ""},
		{300, 60, 20, 400, "errors 20.00% > 5%"},
	} {
		st := steps[i]
		m := MeasureStep(envs, start.Add(st.From), start.Add(st.To))
		if m.Requests != want.requests || m.RequestsPerSecond != want.rps || m.ErrorPercent != want.errors || m.Iterations != want.requests {
			t.Errorf("step %d: %+v, want %d requests at %g/s, %g%% errors", i, m, want.requests, want.rps, want.errors)
		}
		if m.P95Millis < want.p95*0.99 || m.P95Millis > want.p95*1.01 {
			t.Errorf("step %d: p95 %g ms, want %g", i, m.P95Millis, want.p95)
		}
		if got := StopRule(rules, m); got != want.rule {
			t.Errorf("step %d: stop rule %q, want %q", i, got, want.rule)
		}
	}
}

func TestStopRule(t *testing.T) {
	cases := []struct {
		name  string
		rules v1alpha1.PeakStopRules
		m     StepMeasure
		want  string
	}{
		{"held", v1alpha1.PeakStopRules{DroppedPercentAbove: ptr.To[v1alpha1.Percent](1)}, StepMeasure{Requests: 10, Iterations: 10, DroppedPercent: 1}, ""},
		{"dropped", v1alpha1.PeakStopRules{DroppedPercentAbove: ptr.To[v1alpha1.Percent](1)}, StepMeasure{Requests: 10, Iterations: 10, DroppedPercent: 1.5}, "dropped 1.50% > 1%"},
		{"p95", v1alpha1.PeakStopRules{P95Above: "250ms"}, StepMeasure{Requests: 10, Iterations: 10, P95Millis: 251}, "p95 251ms > 250ms"},
		{"nothing got through", v1alpha1.PeakStopRules{P95Above: "250ms"}, StepMeasure{}, "nothing completed during the step"},
		{"sessions without HTTP hold", v1alpha1.PeakStopRules{ErrorPercentAbove: ptr.To[v1alpha1.Percent](1)}, StepMeasure{Iterations: 40}, ""},
	}
	for _, tc := range cases {
		if got := StopRule(tc.rules, tc.m); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
