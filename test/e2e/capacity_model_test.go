//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// pushWork is the CPU each push burns in the sample backend (PUSH_WORK SHA-256 rounds, about
// 2.4 ms of one core on this cluster: a 100m profile serves about 40 a second), so its
// throughput follows the cores a profile grants.
const pushWork = "32000"

// pushWaiting pushes without a client timeout: in a closed-loop benchmark a push that waits for
// a busy target is the measurement, and one given up on would waste the target's work.
const pushWaiting = `import http from 'k6/http';
export default function () {
  http.post(` + "`${__ENV.TARGET_APP_URL}/api/push`" + `, JSON.stringify({ device: 'dev-' + __VU, rssi: -67 }),
    { headers: { 'Content-Type': 'application/json' } });
}
`

// TestCapacityRangesModelAndPrediction is issue 27 on the local cluster: a CapacityPlan of the
// CPU-bound sample backend over three small profiles (50m, 100m and 200m of CPU: small, so that
// the 2-core cluster's own processes leave each its whole share), 3 repetitions each, and a
// fourth (150m) that the plan predicts from the other three and then measures: the scoreboard. Status must carry each profile's figures as medians with their
// min–max, the safe fleet and what bounds it (cpu), the size model and the prediction with its
// error; and the fleet question's answer with a price. A second, short plan climbs one profile
// in a peak test and fits the USL to its steps.
func TestCapacityRangesModelAndPrediction(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-sizing")
	sizes := map[string]string{"fb-size-050": "50m", "fb-size-100": "100m", "fb-size-150": "150m", "fb-size-200": "200m"}
	for name, cpu := range sizes {
		e.profile(t, &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProfileSpec{
			CPU: resource.MustParse(cpu), Memory: resource.MustParse("1Gi"), Description: "e2e: a " + cpu + " machine",
			Price: &v1alpha1.ProfilePrice{PerVCPUHour: ptr.To[v1alpha1.PriceAmount]("0.04"), PerGiBHour: ptr.To[v1alpha1.PriceAmount]("0.005"),
				Currency: "EUR", AsOf: "2026-11-01"}}})
	}
	app := sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		corev1.EnvVar{Name: "WORKERS", Value: "8"}, corev1.EnvVar{Name: "PUSH_WORK", Value: pushWork}, corev1.EnvVar{Name: "GRPC_LISTEN", Value: "off"})
	// A saturated 50m target answers its probe slowly: out of the Service it would refuse pushes.
	app.ReadinessProbe.TimeoutSeconds, app.ReadinessProbe.PeriodSeconds, app.ReadinessProbe.FailureThreshold = 5, 5, 12
	template := tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypeBenchmark).Components(app).
		Devices(20, "10s").Iterations(20).Inline(pushWaiting).Parallelism(1).Obj()
	plan := tw.MakeCapacityPlan("sizes", ns, template, "fb-size-050", "fb-size-100", "fb-size-200", "fb-size-150").
		Repetitions(3).Predict("fb-size-150").Question(300, "20s").Obj()
	got := e.runPlan(t, plan, 15*time.Minute)
	if got.Status.Phase != v1alpha1.PlanSucceeded || len(got.Status.Table) != 12 {
		t.Fatalf("plan %s %s with %d rows: %s", got.Status.Phase, got.Status.Progress, len(got.Status.Table), got.Status.Message)
	}
	for _, row := range got.Status.Table {
		t.Logf("row %-12s rep %d: %s/%s accepted %d pushes/s %7s ideal %5d cpu/core %5s limit %q", row.Profile, row.Repetition, row.Phase, row.Verdict,
			row.RequestsAccepted, row.PushesPerSecond, row.IdealMaxDevices, row.CPUPerCore, row.Limit)
		if row.RequestsAccepted != 400 {
			t.Errorf("row %s rep %d accepted %d of 400 pushes", row.Profile, row.Repetition, row.RequestsAccepted)
		}
	}
	for _, s := range got.Status.Summary {
		f := s.Floor
		if f == nil || f.IdealMaxDevices == nil || f.PushesPerSecond == nil {
			t.Errorf("%s: no floor figures: %+v", s.Profile, s)
			continue
		}
		t.Logf("profile %-12s pushes/s %s (%s–%s %s, CV %s %%), ideal %s (%s–%s), safe fleet %d, limit %s: %s; %s",
			s.Profile, f.PushesPerSecond.Median, f.PushesPerSecond.Low, f.PushesPerSecond.High, f.PushesPerSecond.Interval, f.PushesPerSecond.CVPercent,
			f.IdealMaxDevices.Median, f.IdealMaxDevices.Low, f.IdealMaxDevices.High, s.SafeFleet, s.Limit, s.LimitMessage, s.Noise)
		if f.Passed != 3 || f.IdealMaxDevices.Interval != v1alpha1.IntervalMinMax || f.IdealMaxDevices.Low == "" || f.IdealMaxDevices.High == "" {
			t.Errorf("%s: want a min-max range over 3 passed repetitions, got %+v", s.Profile, f.IdealMaxDevices)
		}
		low, _ := strconv.ParseFloat(f.IdealMaxDevices.Low, 64)
		// Safe comes from the low end, not the median: 80 % of it (seed 000's safePercent).
		if want := int64(low * 0.8); s.SafeFleet == 0 || s.SafeFleet > want || s.SafeFleet < want-1 {
			t.Errorf("%s: safe fleet %d, want 80 %% of the low end %s", s.Profile, s.SafeFleet, f.IdealMaxDevices.Low)
		}
		if s.Limit != v1alpha1.LimitCPU || s.SafeRule == "" {
			t.Errorf("%s: limit %q (%s), safe rule %q: the CPU-bound backend must be bound by cpu", s.Profile, s.Limit, s.LimitMessage, s.SafeRule)
		}
	}
	m := got.Status.Model
	if m == nil || m.Points != 3 || len(m.Predictions) != 1 {
		t.Fatalf("model %+v: want a fit to 3 measured profiles and one prediction", m)
	}
	p := m.Predictions[0]
	t.Logf("model: ideal devices = %s × cores^%s over %d profiles %v", m.Scale, m.Exponent, m.Points, m.Untrusted)
	if p.IdealMaxDevices == nil || p.MeasuredIdealMaxDevices == 0 || p.ErrorPercent == "" {
		t.Fatalf("prediction %+v: want a predicted range and the held-out measurement", p)
	}
	errPct, _ := strconv.ParseFloat(p.ErrorPercent, 64)
	// The scoreboard: the goal is ±15 %; the line is printed for the note either way.
	t.Logf("SCOREBOARD %s predicted %s (%s–%s), measured %d: error %s %% (goal ±15 %%)", p.Profile,
		p.IdealMaxDevices.Median, p.IdealMaxDevices.Low, p.IdealMaxDevices.High, p.MeasuredIdealMaxDevices, p.ErrorPercent)
	if errPct < -40 || errPct > 40 {
		t.Errorf("prediction off by %s %%: the model or the measurement is broken", p.ErrorPercent)
	}
	if a := got.Status.Answer; a == nil || a.Message == "" {
		t.Errorf("answer %+v: want an answer to spec.question", a)
	} else {
		t.Logf("answer: %s", a.Message)
		if a.Profile != "" && (a.MonthlyCost == "" || a.Currency != "EUR" || a.PriceAsOf != "2026-11-01") {
			t.Errorf("answer %+v: the chosen profile has a price", a)
		}
	}
}

// TestPeakClimbFitsTheUSL climbs the CPU-bound sample backend on a 200m profile in a one-cell
// peak plan and checks the USL fit of its steps: devices pushing every second, 10 more each 4 s
// step, until more than 5 % of the pushes fail (about 80 pushes a second: the climb breaks near
// 90 devices). A short queue turns saturation into refused pushes rather than growing latency,
// which would hold the runners' VUs and make the climb generator-bound (INCONCLUSIVE) instead.
func TestPeakClimbFitsTheUSL(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-usl")
	e.profile(t, &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: "fb-climb-200"}, Spec: v1alpha1.ProfileSpec{
		CPU: resource.MustParse("200m"), Memory: resource.MustParse("1Gi"), Description: "e2e: a 200m machine"}})
	app := sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		corev1.EnvVar{Name: "WORKERS", Value: "4"}, corev1.EnvVar{Name: "PUSH_WORK", Value: pushWork}, corev1.EnvVar{Name: "GRPC_LISTEN", Value: "off"},
		corev1.EnvVar{Name: "QUEUE_SIZE", Value: "4"}, corev1.EnvVar{Name: "QUEUE_TIMEOUT", Value: "100ms"})
	template := tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypePeak).Components(app).
		Devices(10, "1s").
		Peak(&v1alpha1.PeakSpec{StepDevices: 10, StepDuration: "4s", MaxDevices: ptr.To[int32](150),
			StopWhen: v1alpha1.PeakStopRules{ErrorPercentAbove: ptr.To[v1alpha1.Percent](5)}}).
		Inline(pushDirect).Parallelism(1).Obj()
	// Enough VUs for the breaking step, where pushes wait up to their 2 s timeout: too few would
	// drop iterations there and make the whole climb generator-bound (INCONCLUSIVE).
	template.Spec.Load.PreAllocatedVUs, template.Spec.Load.MaxVUs = ptr.To[int32](100), ptr.To[int32](400)
	got := e.runPlan(t, tw.MakeCapacityPlan("climb", ns, template, "fb-climb-200").Obj(), 5*time.Minute)
	if got.Status.Phase != v1alpha1.PlanSucceeded || len(got.Status.Summary) != 1 || len(got.Status.Table) != 1 {
		t.Fatalf("peak plan %s: %s", got.Status.Phase, got.Status.Message)
	}
	child := e.child(t, ns, got.Status.Table[0].TestRun)
	t.Logf("climb: %s/%s: %s", child.Status.Phase, child.Status.Verdict, child.Status.Message)
	s := got.Status.Summary[0]
	f := s.Scaling
	if f == nil || f.Points < 3 || f.Lambda == nil || f.Sigma == nil || f.Kappa == nil || len(f.Measured) == 0 {
		t.Fatalf("scaling %+v: want a USL fit of the climb's steps", f)
	}
	t.Logf("USL by %s over %d points: λ %s σ %s [%s, %s] κ %s [%s, %s], residual %s, peak N %s (X %s), trusted %v %v; limit %s",
		f.By, f.Points, f.Lambda.Value, f.Sigma.Value, f.Sigma.Low, f.Sigma.High, f.Kappa.Value, f.Kappa.Low, f.Kappa.High,
		f.ResidualStdErr, f.PeakN, f.PeakThroughput, f.Trusted, f.Untrusted, s.Limit)
	if f.By != "devices (peak steps)" || (!f.Trusted && len(f.Untrusted) == 0) {
		t.Errorf("scaling by %q, trusted %v with reasons %v", f.By, f.Trusted, f.Untrusted)
	}
}

// profile creates a cluster-scoped Profile for the test, first deleting one an earlier run left.
func (e *env) profile(t *testing.T, p *v1alpha1.Profile) {
	t.Helper()
	_ = e.c.Delete(e.ctx, p.DeepCopy())
	e.waitGone(t, p.DeepCopy(), time.Minute)
	if err := e.c.Create(e.ctx, p); err != nil {
		t.Fatal(fmt.Errorf("profile %s: %w", p.Name, err))
	}
	t.Cleanup(func() { _ = e.c.Delete(e.ctx, p) })
}
