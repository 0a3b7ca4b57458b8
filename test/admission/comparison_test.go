package admission

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A compared metric without a direction keeps its own: throughput's bands are read as
// HigherIsBetter (ok 90 % is wider than success 100 %), so setting only them is accepted and
// stored without a direction; the same bands on a k6 metric (LowerIsBetter) are refused. An
// API default of LowerIsBetter would refuse the first and store throughput as LowerIsBetter.
func TestComparedMetricDirectionDefaultsToTheMetricsOwn(t *testing.T) {
	ctx := context.Background()
	bands := func(name string, dir v1alpha1.Direction) *v1alpha1.TestRun {
		run := tw.MakeTestRun("cmp-"+strings.ToLower(strings.ReplaceAll(name, "_", "-")), ns).Obj()
		run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "previous", Metrics: []v1alpha1.ComparedMetric{
			{Name: name, Direction: dir, SuccessPercent: ptr.To[int32](100), OKPercent: ptr.To[int32](90)},
		}}
		return run
	}

	run := bands("throughput", "")
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("throughput with only its bands refused: %v", err)
	}
	defer func() { _ = env.Client.Delete(ctx, run) }()
	var got v1alpha1.TestRun
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &got); err != nil {
		t.Fatal(err)
	}
	if d := got.Spec.Baseline.Metrics[0].Direction; d != "" {
		t.Fatalf("direction stored as %q, want unset (the comparison uses the metric's own)", d)
	}

	err := env.Client.Create(ctx, bands("http_req_duration", ""))
	if err == nil || !strings.Contains(err.Error(), "okPercent must be the wider band") {
		t.Fatalf("LowerIsBetter k6 metric with ok inside success: %v, want refused", err)
	}
	pushes := bands("pushes", v1alpha1.HigherIsBetter)
	if err := env.Client.Create(ctx, pushes); err != nil {
		t.Fatalf("HigherIsBetter k6 metric with ok 90 %% refused: %v", err)
	}
	_ = env.Client.Delete(ctx, pushes)
}

// stat picks a k6 metric's number; a built-in comparison has its own, so a stat beside one
// would be accepted and ignored: refused, naming what to write instead.
func TestComparedBuiltinRefusesStat(t *testing.T) {
	ctx := context.Background()
	run := tw.MakeTestRun("cmp-builtin-stat", ns).Obj()
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "previous", Metrics: []v1alpha1.ComparedMetric{{Name: "latencyP95", Stat: "p90"}}}
	err := env.Client.Create(ctx, run)
	if err == nil || !strings.Contains(err.Error(), "stat is for a k6 metric") {
		t.Fatalf("latencyP95 with stat p90: %v, want refused", err)
	}
	run = tw.MakeTestRun("cmp-k6-stat", ns).Obj()
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "previous", Metrics: []v1alpha1.ComparedMetric{{Name: "http_req_duration", Stat: "p90"}}}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatalf("a k6 metric with its stat refused: %v", err)
	}
	_ = env.Client.Delete(ctx, run)
}
