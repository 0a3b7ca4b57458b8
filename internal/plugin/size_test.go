package plugin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// sizedPlan creates Profiles sz1, sz2 (priced per hour), sz4 (priced per vCPU-hour and
// GiB-hour) and sz3 (predicted, priced per hour), and a finished plan measured at 260s whose
// status, written as the operator would, holds sz1 20,000, sz2 52,000, sz4 100,000 and the
// prediction sz3 75,000.
func sizedPlan(t *testing.T, ns string) {
	t.Helper()
	perHour := func(a string) *v1alpha1.ProfilePrice {
		return &v1alpha1.ProfilePrice{PerHour: ptr.To(v1alpha1.PriceAmount(a)), Currency: "EUR", AsOf: "2026-11-01"}
	}
	profiles := []*v1alpha1.Profile{
		tw.MakeProfile("sz1", "1", "2Gi").Obj(),
		tw.MakeProfile("sz2", "2", "4Gi").Obj(),
		tw.MakeProfile("sz3", "3", "6Gi").Obj(),
		tw.MakeProfile("sz4", "4", "8Gi").Obj(),
	}
	profiles[1].Spec.Price = perHour("0.084")
	profiles[2].Spec.Price = perHour("0.1")
	profiles[3].Spec.Price = &v1alpha1.ProfilePrice{PerVCPUHour: ptr.To(v1alpha1.PriceAmount("0.02")), PerGiBHour: ptr.To(v1alpha1.PriceAmount("0.005")),
		Currency: "EUR", AsOf: "2026-10-01"}
	for _, p := range profiles {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })
	}
	p := tw.MakeCapacityPlan("fleet", ns, tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypeBenchmark).Devices(1000, "260s").Iterations(2).Obj(), "SZ1", "SZ2", "SZ4").Obj()
	p.Spec.Predict = []string{"SZ3"}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status = v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "3/3",
		Summary: []v1alpha1.ProfileSummary{
			{Profile: "SZ1", Rows: 1, Passed: 1, SafeFleet: 20000, Limit: v1alpha1.LimitCPU},
			{Profile: "SZ2", Rows: 1, Passed: 1, SafeFleet: 52000, Limit: v1alpha1.LimitCPU, MemoryBound: 60000,
				Floor: &v1alpha1.CellFigures{SafeMaxDevices: 52000, Limit: v1alpha1.LimitCPU}},
			{Profile: "SZ4", Rows: 1, Passed: 1, SafeFleet: 100000, Limit: v1alpha1.LimitMemory},
		},
		Model: &v1alpha1.SizeModel{Exponent: "0.9", Scale: "21000", Points: 3,
			Predictions: []v1alpha1.SizePrediction{{Profile: "SZ3", CPU: "3", Memory: "6Gi", SafeMaxDevices: 75000, Limit: v1alpha1.LimitCPU}}},
	}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// TestSize: `size PLAN --devices N --period P` answers from the plan's status and its
// Profiles: the smallest that holds, its headroom, limit and cost, and every option in a
// table; the period rescales (half the period, half the devices); nothing holding exits 1.
func TestSize(t *testing.T) {
	ns := namespace(t)
	sizedPlan(t, ns)

	res := plugin(t, ns, "size", "cp/fleet", "--devices", "40000", "--period", "260s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s\n%s", res.code, res.stderr, res.stdout)
	}
	for _, line := range []string{
		"Answer: SZ2",
		"Message: SZ2 holds 40,000 devices pushing every 260s (153.8/s): safe 52,000 (23.1 % headroom), bound by cpu; 61.32 EUR a month, 1.53 EUR per 1,000 devices (price of 2026-11-01)",
		"Headroom: 23.1 %",
		"Bound by: cpu",
		"Cost: 61.32 EUR a month, 1.53 EUR per 1,000 devices a month (price of 2026-11-01)",
	} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	rows := tableRows(t, res.stdout, "PROFILE CPU")
	want := [][]string{
		{"PROFILE", "CPU", "MEMORY", "SOURCE", "SAFE AS RUN (260s)", "MEMORY BOUND", "SAFE AT 260s", "HOLDS", "LIMIT", "MONTHLY COST"},
		{"SZ1", "1", "2 GiB", "measured", "20000", "—", "20000", "no", "cpu", "—"},
		{"SZ2", "2", "4 GiB", "measured", "52000", "60000", "52000", "yes", "cpu", "61.32 EUR"},
		{"SZ3", "3", "6 GiB", "predicted", "75000", "—", "75000", "yes", "cpu", "73.00 EUR"},
		{"SZ4", "4", "8 GiB", "measured", "100000", "100000", "100000", "yes", "memory", "87.60 EUR"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("table %q\n%s", rows, res.stdout)
	}

	// Seed 000's "for a period of 100 s you need to divide the number by 2": at 130s every
	// safe fleet halves, SZ3's predicted 37,500 no longer holds 40,000, SZ4's 50,000 does.
	res = plugin(t, ns, "size", "fleet", "--devices", "40000", "--period", "130s", "-o", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s\n%s", res.code, res.stderr, res.stdout)
	}
	var doc SizeDocument
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, res.stdout)
	}
	a := doc.Answer
	if doc.Kind != SizeKind || a.Profile != "SZ4" || a.Predicted || a.SafeMaxDevices != 50000 || a.HeadroomPercent != "20.0" || a.MonthlyCost != "87.60" ||
		a.CostPer1000Devices != "2.19" || a.PriceAsOf != "2026-10-01" || len(doc.Options) != 4 || doc.Options[2].Safe != 37500 || doc.Options[2].Holds || !doc.Options[2].Predicted {
		t.Errorf("json document %+v", doc)
	}

	// A predicted size is the answer when it is the smallest that holds.
	res = plugin(t, ns, "size", "fleet", "--devices", "60000", "--period", "260s")
	if res.code != 0 || !slices.Contains(normLines(res.stdout), "Answer: SZ3 (predicted)") {
		t.Errorf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	// Nothing holds: exit 1, the largest named.
	res = plugin(t, ns, "size", "fleet", "--devices", "500000")
	if res.code != ExitFailed || !strings.Contains(norm(res.stdout), "no measured or predicted profile holds 500,000 devices pushing every 260s (1923/s): the largest, SZ4, holds 100,000") ||
		!slices.Contains(normLines(res.stdout), "Answer: —") {
		t.Errorf("nothing holds: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	// Twice the period doubles SZ2's throughput bound to 104,000, but its memory holds 60,000
	// at any period: 80,000 devices need the next size, SZ3.
	res = plugin(t, ns, "size", "fleet", "--devices", "80000", "--period", "520s", "-o", "json")
	doc = SizeDocument{}
	if err := json.Unmarshal([]byte(res.stdout), &doc); res.code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	if sz2 := doc.Options[1]; doc.Answer.Profile != "SZ3" || sz2.Profile != "SZ2" || sz2.Safe != 60000 || sz2.Limit != v1alpha1.LimitMemory || sz2.MemoryBound != 60000 || sz2.Holds {
		t.Errorf("answer %s, SZ2 %+v: want SZ3, SZ2 capped at its memory bound of 60000", doc.Answer.Profile, doc.Options[1])
	}

	for _, args := range [][]string{
		{"size", "fleet", "--devices", "0"},
		{"size", "fleet", "--devices", "10", "--period", "soon"},
		{"size", "fleet"},
		{"size", "nope", "--devices", "10"},
	} {
		if res := plugin(t, ns, args...); res.code != ExitError || res.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
}
