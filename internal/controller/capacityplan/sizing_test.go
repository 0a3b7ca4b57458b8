package capacityplan

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// stabilityRun makes a finished stability TestRun on c1 (512Mi) whose target held 100 MiB
// before the load and grew perDevice MiB per device, as spec.memoryFrom reads it.
func stabilityRun(t *testing.T, ns, perDevice string) *v1alpha1.TestRun {
	t.Helper()
	run := tw.MakeTestRun("stab-c1", ns).Type(v1alpha1.TestTypeStability).Profile("c1").Components(template(ns).Spec.Target.Components...).Devices(3000, "6s").Duration("1h").Obj()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	setStabilityMemory(t, run, perDevice)
	return run
}

func setStabilityMemory(t *testing.T, run *v1alpha1.TestRun, perDevice string) {
	t.Helper()
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed, Reason: v1alpha1.ReasonCompleted,
		Profile: &v1alpha1.ProfileSnapshot{Name: "c1", Generation: 1, Spec: v1alpha1.ProfileSnapshotSpec{CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")}},
		Target:  &v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{BeforeMiB: 100, AfterMiB: 1600, PerDeviceMiB: perDevice}}}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
}

// TestPlanSizesWithRangesMemoryAndAModel: a plan over c1 (1 core) and c2 (2 cores), 2
// repetitions each, predicting c3 (4 cores) and bounded by the memory of a stability run on c1.
//   - c1's ideal devices 1000 and 1040: median 1020, min-max 1000–1040; safe 80 % of the low
//     end = 800, but 0.5 MiB per device from 100 MiB fills 80 % of 512 MiB at
//     (409.6−100)/0.5 = 619 devices: the safe fleet is 619, bound by memory, and says so.
//   - the model: capacity doubles with cores (1020 → 2040), so c3 is predicted at 4080 with the
//     assumed ±15 % of a 2-point model.
//   - the question (1500 devices every 12 s) is answered with c2.
//   - the stability run measured again at 1 MiB per device wakes the finished plan through its
//     watch: the bound becomes (409.6−100)/1 = 309.
func TestPlanSizesWithRangesMemoryAndAModel(t *testing.T) {
	ns := setup(t)
	c3 := tw.MakeProfile("c3", "4", "2Gi").PricePerHour("0.10", "EUR", "2026-11-01").Obj()
	if err := env.Client.Create(ctx, c3); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	stab := stabilityRun(t, ns, "0.5")
	p := tw.MakeCapacityPlan("sized", ns, template(ns), "c1", "c2").Repetitions(2).Parallel(4).
		Predict("c3").MemoryFrom("stab-c1", "not-there").Question(1500, "12s").Obj()
	create(t, p)
	kids := waitChildren(t, p, "sized-c1-0", "sized-c1-1", "sized-c2-2", "sized-c2-3")
	for name, ideal := range map[string]int64{"sized-c1-0": 1000, "sized-c1-1": 1040, "sized-c2-2": 2000, "sized-c2-3": 2080} {
		finish(t, kids[name], v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted, fmt.Sprintf("%.2f", float64(ideal)/6), ideal/2)
	}
	got := waitPlan(t, p, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted)
	c1 := got.Status.Summary[0]
	if f := c1.Floor; f == nil || f.IdealMaxDevices == nil || f.IdealMaxDevices.Median != "1020" || f.IdealMaxDevices.Low != "1000" ||
		f.IdealMaxDevices.High != "1040" || f.IdealMaxDevices.Interval != v1alpha1.IntervalMinMax || f.Passed != 2 || f.SafeMaxDevices != 800 {
		t.Errorf("c1 floor %+v ideal %+v", f, f.IdealMaxDevices)
	}
	if c1.SafeFleet != 619 || c1.Limit != v1alpha1.LimitMemory || !strings.Contains(c1.LimitMessage, "stability run stab-c1") || c1.SafeRule == "" {
		t.Errorf("c1 safe fleet %d limit %q %q rule %q: want 619 bound by the stability run's memory", c1.SafeFleet, c1.Limit, c1.LimitMessage, c1.SafeRule)
	}
	if c2 := got.Status.Summary[1]; c2.SafeFleet != 1600 || c2.Limit == v1alpha1.LimitMemory {
		t.Errorf("c2 safe fleet %d limit %q: want 80 %% of 2000, no stability run on c2", c2.SafeFleet, c2.Limit)
	}
	m := got.Status.Model
	if m == nil || m.Points != 2 || m.Exponent != "1.000" || len(m.Predictions) != 1 {
		t.Fatalf("model %+v", m)
	}
	if pr := m.Predictions[0]; pr.Profile != "c3" || pr.IdealMaxDevices == nil || pr.IdealMaxDevices.Median != "4080" ||
		pr.IdealMaxDevices.Low != "3468" || pr.CPU != "4" || pr.MeasuredIdealMaxDevices != 0 {
		t.Errorf("prediction %+v ideal %+v", pr, pr.IdealMaxDevices)
	}
	// 1500 devices every 12 s are 750 every 6 s (the plan's period): c1's throughput (800 at
	// 6 s) would allow 1600 at 12 s, but its memory holds 619 at any period; c2 holds 1600 at
	// 6 s, so 3200 at 12 s: the smallest that holds 1500, with (3200−1500)/3200 = 53.1 %
	// headroom; no price on c2.
	if a := got.Status.Answer; a == nil || a.Profile != "c2" || a.SafeMaxDevices != 3200 || a.HeadroomPercent != "53.1" || a.Predicted || a.MonthlyCost != "" {
		t.Errorf("answer %+v", a)
	}

	setStabilityMemory(t, stab, "1")
	eventually(t, "the memory bound to follow the stability run", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if s := got.Status.Summary[0].SafeFleet; s != 309 {
			return fmt.Errorf("c1 safe fleet %d, want 309", s)
		}
		return nil
	})
}

// TestPlanSizingAdmission: a price is either per machine or per resource, dated.
func TestPlanSizingAdmission(t *testing.T) {
	amount := ptr.To[v1alpha1.PriceAmount]("0.1")
	for _, tc := range []struct {
		name  string
		price v1alpha1.ProfilePrice
		says  string
	}{
		{"both forms", v1alpha1.ProfilePrice{PerHour: amount, PerVCPUHour: amount, PerGiBHour: amount, Currency: "EUR", AsOf: "2026-11-01"}, "not both"},
		{"half a pair", v1alpha1.ProfilePrice{PerVCPUHour: amount, Currency: "EUR", AsOf: "2026-11-01"}, "go together"},
		{"no date", v1alpha1.ProfilePrice{PerHour: amount, Currency: "EUR"}, "asOf"},
		{"not a number", v1alpha1.ProfilePrice{PerHour: ptr.To[v1alpha1.PriceAmount]("ten"), Currency: "EUR", AsOf: "2026-11-01"}, "perHour"},
	} {
		p := &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: "priced-" + strings.ReplaceAll(tc.name, " ", "-")},
			Spec: v1alpha1.ProfileSpec{CPU: resource.MustParse("1"), Memory: resource.MustParse("1Gi"), Price: &tc.price}}
		err := env.Client.Create(ctx, p)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.says)
			_ = env.Client.Delete(ctx, p)
		}
	}
}
