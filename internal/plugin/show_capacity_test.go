package plugin

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestGetPlanCapacity: `get cp/NAME` shows, per profile, the safe fleet, its limit and its
// memory bound, the floor and best settings as "median (low–high)" with the kind of range,
// each row's own noise warning (the floor's beside the floor's range, the best's in the notes),
// the repetitions left out, the model's predictions marked predicted with their scoreboard
// error, and "—" for every missing value (the issue saw "Safe by memory 0" and "Breaking
// point 0"). Seed 000's per-run memory figure is named for what it is, apart from the bound
// the answer uses.
func TestGetPlanCapacity(t *testing.T) {
	ns := namespace(t)
	p := tw.MakeCapacityPlan("ranges", ns, tw.MakeTestRun("t", ns).Devices(1000, "260s").Iterations(2).Obj(), "C1", "C2").
		Sweep("web", "WORKERS", "1", "4").Repetitions(2).Obj()
	p.Spec.Predict = []string{"C2", "C4"}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	minmax := func(median, low, high, cv string) *v1alpha1.FigureRange {
		return &v1alpha1.FigureRange{Median: median, Low: low, High: high, Interval: v1alpha1.IntervalMinMax, CVPercent: cv, N: 2}
	}
	p.Status = v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "8/8",
		Summary: []v1alpha1.ProfileSummary{{
			Profile: "C1", Rows: 4, Passed: 4, PushesPerSecond: "75.00", IdealMaxDevices: 19500, SafeMaxDevices: 15600,
			MaxSafeDevicesByMemory: 462,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 2, PushesPerSecond: minmax("77.50", "75.00", "80.00", "12.6"),
				IdealMaxDevices: minmax("20150", "19500", "20800", "12.6"), MemoryPerDeviceMiB: minmax("0.31", "0.30", "0.32", ""), SafeMaxDevices: 13650, Limit: v1alpha1.LimitTarget,
				Noise: "capacity varies 12.6 % (CV) over 2 repetitions"},
			Best: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "4"}, Passed: 2, PushesPerSecond: minmax("220.00", "207.00", "233.00", "44.2"),
				IdealMaxDevices: minmax("57200", "53820", "60580", "44.2"), SafeMaxDevices: 37674, Limit: v1alpha1.LimitTarget,
				Noise: "capacity varies 44.2 % (CV) over 2 repetitions: about 472 repetitions"},
			SafeFleet: 13650, MemoryBound: 16730, Limit: v1alpha1.LimitTarget, LimitMessage: "target: 77 pushes/s at 0.18 of its cores: a worker pool, not CPU",
			Noise:              "the best setting (WORKERS=4): capacity varies 44.2 % (CV) over 2 repetitions: about 472 repetitions",
			DroppedRepetitions: "1 of 5 finished repetitions left out of the ranges, as only PASSED runs size a deployment: 1 FAILED",
			SafeRule:           "safe = low end × 70 % (M/M/1: response time 3.3× service time)",
			Scaling:            &v1alpha1.ScalingFit{By: "WORKERS", Points: 2, Trusted: false, Untrusted: []string{"too few points: 2 (want 1 low plus 4 higher)"}},
		}, {
			Profile: "C2", Rows: 4, Passed: 4,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 6,
				IdealMaxDevices: &v1alpha1.FigureRange{Median: "21000", Low: "18000", High: "25000", Interval: v1alpha1.IntervalCI95, Coverage: "96.9", CVPercent: "12.5", N: 6}},
			SafeFleet: 12600, Limit: v1alpha1.LimitMemory, Noise: "CV 12.5 % above 10 %: about 4 more repetitions would narrow it",
		}},
		Model: &v1alpha1.SizeModel{Exponent: "0.92", Scale: "20100", Points: 1, Untrusted: []string{"one measured profile: the exponent is assumed"},
			Predictions: []v1alpha1.SizePrediction{
				{Profile: "C2", IdealMaxDevices: &v1alpha1.FigureRange{Median: "38000", Low: "30000", High: "46000", Interval: v1alpha1.IntervalPI95, N: 3},
					SafeMaxDevices: 21000, Limit: v1alpha1.LimitCPU, MeasuredIdealMaxDevices: 21000, ErrorPercent: "81.0"},
				{Profile: "C3", IdealMaxDevices: &v1alpha1.FigureRange{Median: "30000", Low: "25500", High: "34500", Interval: v1alpha1.IntervalAssumed, N: 2},
					SafeMaxDevices: 20400, MemoryBound: 50000, Limit: v1alpha1.LimitCPU, Message: "its range is an assumed ±15 %"},
				{Profile: "C4", Message: "Profile C4 not found"},
			}},
		Answer: &v1alpha1.FleetAnswer{Devices: 10000, Period: "260s", Rate: "38.46", Profile: "C2", SafeMaxDevices: 12600, HeadroomPercent: "20.6",
			Message: "C2 holds 10,000 devices pushing every 260s (38.46/s): safe 12,600 (20.6 % headroom), bound by memory"},
	}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	res := plugin(t, ns, "get", "cp/ranges")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	capacity := tableRows(t, res.stdout, "PROFILE SOURCE")
	wantCapacity := [][]string{
		{"PROFILE", "SOURCE", "SAFE FLEET", "LIMIT", "MEMORY BOUND", "IDEAL MAX", "RANGE", "NOTE"},
		{"C1", "measured", "13650", "target", "16730", "20150 (19500–20800)", "min–max, n=2, CV 12.6%", "capacity varies 12.6 % (CV) over 2 repetitions"},
		{"C2", "measured", "12600", "memory", "—", "21000 (18000–25000)", "95% CI (96.9%), n=6, CV 12.5%", "—"},
		{"C2", "predicted", "21000", "cpu", "—", "38000 (30000–46000)", "95% prediction interval, n=3", "scoreboard: measured 21000, predicted +81.0 % off"},
		{"C3", "predicted", "20400", "cpu", "50000", "30000 (25500–34500)", "assumed, not measured, n=2", "its range is an assumed ±15 %"},
		{"C4", "predicted", "—", "—", "—", "—", "—", "Profile C4 not found"},
	}
	if !slices.EqualFunc(capacity, wantCapacity, slices.Equal) {
		t.Errorf("capacity per profile %q\n%s", capacity, res.stdout)
	}
	settings := tableRows(t, res.stdout, "PROFILE SETTING")
	wantSettings := [][]string{
		{"PROFILE", "SETTING", "CELL", "PASSED", "PUSHES/S", "IDEAL MAX", "TYPICAL MAX", "BREAKING POINT", "MIB/DEVICE", "SAFE", "LIMIT", "RANGE"},
		{"C1", "floor", "WORKERS=1", "2", "77.50 (75.00–80.00)", "20150 (19500–20800)", "—", "—", "0.31 (0.30–0.32)", "13650", "target", "min–max, n=2, CV 12.6%"},
		{"C1", "best", "WORKERS=4", "2", "220.00 (207.00–233.00)", "57200 (53820–60580)", "—", "—", "—", "37674", "target", "min–max, n=2, CV 44.2%"},
		{"C2", "floor", "WORKERS=1", "6", "—", "21000 (18000–25000)", "—", "—", "—", "—", "—", "95% CI (96.9%), n=6, CV 12.5%"},
	}
	if !slices.EqualFunc(settings, wantSettings, slices.Equal) {
		t.Errorf("floor and best %q\n%s", settings, res.stdout)
	}
	for _, line := range []string{
		"C1 limit: target: 77 pushes/s at 0.18 of its cores: a worker pool, not CPU",
		"C1 safe rule: safe = low end × 70 % (M/M/1: response time 3.3× service time)",
		"C1 best setting noise: capacity varies 44.2 % (CV) over 2 repetitions: about 472 repetitions",
		"C1 left out: 1 of 5 finished repetitions left out of the ranges, as only PASSED runs size a deployment: 1 FAILED",
		"C1 scaling: USL over WORKERS, 2 points: σ —, κ —, λ —, peak at — (—/s), residual —; untrusted: too few points: 2 (want 1 low plus 4 higher)",
		// A status from before each setting kept its own: the profile's noise, in the notes.
		"C2 noise: CV 12.5 % above 10 %: about 4 more repetitions would narrow it",
		"Model: capacity = 20100 × cores^0.92, fitted to 1 measured profiles",
		"Model untrusted: one measured profile: the exponent is assumed",
		"Answer: C2 holds 10,000 devices pushing every 260s (38.46/s): safe 12,600 (20.6 % headroom), bound by memory",
	} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	// The weakest-row summary of earlier plans stays, its missing counts as "-", not 0, and
	// seed 000's memory figure is named apart from the memory bound.
	if got := cells(lineWith(t, res.stdout, "C1 4 4")); !slices.Equal(got, []string{"C1", "4", "4", "75.00", "19500", "-", "15600", "462", "-"}) {
		t.Errorf("summary row %q", got)
	}
	if !strings.Contains(norm(res.stdout), "DEVS AT FULL RAM: seed 000's figure of each run above: devices ÷ RAM utilisation") ||
		strings.Contains(res.stdout, "SAFE BY MEM") {
		t.Errorf("seed 000's memory figure is not told from the memory bound:\n%s", res.stdout)
	}
	if strings.Contains(res.stdout, " 0 ") {
		t.Errorf("a missing value printed as 0:\n%s", res.stdout)
	}
}

// TestGetTestRunCapacityMissing: a TestRun's capacity line shows "-" for a count it does
// not have, never "safe by memory 0".
func TestGetTestRunCapacityMissing(t *testing.T) {
	ns := namespace(t)
	if err := env.Client.Create(ctx, tw.MakeTestRun("nomem", ns).Obj()); err != nil {
		t.Fatal(err)
	}
	setStatus(t, ns, "nomem", func(s *v1alpha1.TestRunStatus) {
		s.Phase, s.Verdict = v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed
		s.Capacity = &v1alpha1.CapacityResult{PushesPerSecond: "125.53", IdealMaxDevices: 25106, TypicalMaxDevices: 5021, SafeMaxDevices: 20085}
	})
	res := plugin(t, ns, "get", "nomem")
	if res.code != 0 || !slices.Contains(normLines(res.stdout), "Max devices: ideal 25106 typical 5021 safe 20085 at full RAM (seed 000) -") {
		t.Errorf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestCapacityOutputsEscapeControlCharacters: what a tenant writes into a plan (profile names,
// sweep values) and what the status repeats of it reach the terminal escaped, in get's
// capacity sections and in size's answer and table.
func TestCapacityOutputsEscapeControlCharacters(t *testing.T) {
	var st v1alpha1.CapacityPlanStatus
	var opts []SizeOptionRow
	for _, s := range hostile {
		fr := &v1alpha1.FigureRange{Median: s, Low: s, High: s, Interval: s, CVPercent: s, Coverage: s, N: 2}
		cell := &v1alpha1.CellFigures{Values: map[string]string{s: s}, IdealMaxDevices: fr, PushesPerSecond: fr, Limit: s}
		st.Summary = append(st.Summary, v1alpha1.ProfileSummary{Profile: s, Floor: cell, Best: cell, Limit: s, LimitMessage: s, SafeRule: s, Noise: s,
			Scaling: &v1alpha1.ScalingFit{By: s, PeakN: s, Untrusted: []string{s}, Sigma: &v1alpha1.Estimate{Value: s, Low: s, High: s}}})
		if st.Model == nil {
			st.Model = &v1alpha1.SizeModel{Scale: s, Exponent: s, Untrusted: []string{s}}
		}
		st.Model.Predictions = append(st.Model.Predictions, v1alpha1.SizePrediction{Profile: s, IdealMaxDevices: fr, Limit: s, Message: s, ErrorPercent: s})
		opts = append(opts, SizeOptionRow{Profile: s, Limit: s, MonthlyCost: s, Currency: s, Safe: 1})
	}
	st.Answer = &v1alpha1.FleetAnswer{Message: hostile["clear screen"]}
	var shown bytes.Buffer
	writePlanCapacity(&shown, &st)
	controlFree(t, "get cp capacity", shown.String())
	if strings.Contains(shown.String(), "\n  Verdict: PASSED") {
		t.Errorf("a newline in a profile name made a row of its own:\n%s", shown.String())
	}
	var sized bytes.Buffer
	writeSize(&sized, &SizeDocument{Namespace: "team-a", Plan: hostile["title"], PlanPeriod: hostile["CR overwrite"], Notes: []string{hostile["bidi override"]},
		Answer: v1alpha1.FleetAnswer{Profile: hostile["OSC 8 link"], Period: hostile["C1 CSI"], Rate: hostile["backspaces"], Limit: hostile["title"],
			Message: hostile["newline in row"], HeadroomPercent: hostile["clear screen"], MonthlyCost: "1", Currency: hostile["title"]}, Options: opts})
	controlFree(t, "size", sized.String())
}
