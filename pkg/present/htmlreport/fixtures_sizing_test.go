package htmlreport

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// fixtureUSL are the coefficients the C1 fixture's points lie on (peak N ≈ 21.8).
var fixtureUSL = struct{ lambda, sigma, kappa float64 }{60, 0.05, 0.002}

// fixtureUSLLoads are C1's measured load levels.
var fixtureUSLLoads = []float64{1, 2, 4, 8, 16, 24, 32}

func minMax(median, low, high string) *v1alpha1.FigureRange {
	return &v1alpha1.FigureRange{Median: median, Low: low, High: high, Interval: v1alpha1.IntervalMinMax, CVPercent: "3.1", N: 3}
}

// fixtureSizingPlan is issue 27's plan: C1, C2 and C4 measured (WORKERS 1 and 4, 3
// repetitions each), C3 held out of the size model, predicted and measured (the scoreboard);
// ranges, a limit per profile, a trusted USL fit on C1 and an untrusted one on C2, and an
// answer with its cost. Push rows, no round trip: every answer is the same few bytes.
func fixtureSizingPlan() *v1alpha1.CapacityPlan {
	profiles := []string{"C1", "C2", "C3", "C4"}
	p := &v1alpha1.CapacityPlan{
		ObjectMeta: metav1.ObjectMeta{Name: "sizing", Namespace: "bench"},
		Spec: v1alpha1.CapacityPlanSpec{Profiles: profiles, Repetitions: 3, Predict: []string{"C3"},
			Sweep:    []v1alpha1.SweepDimension{{Component: "dwarfgd", Env: "WORKERS", Values: []string{"1", "4"}}},
			Question: &v1alpha1.FleetQuestion{Devices: 40000, Period: "260s"}},
		Status: v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "24/24"},
	}
	for pi, profile := range profiles {
		for wi, workers := range []int{1, 4} {
			for rep := int32(1); rep <= 3; rep++ {
				pushes := 120 * float64(int(1)<<pi) * (1 + 1.5*float64(wi)) * (1 + 0.03*float64(rep-2))
				avg := 9.0 + 4*float64(wi) + float64(rep)
				p.Status.Table = append(p.Status.Table, v1alpha1.CapacityRow{
					Profile: profile, Values: map[string]string{"WORKERS": fmt.Sprint(workers)}, Repetition: rep,
					TestRun: fmt.Sprintf("sizing-%s-w%d-r%d", profile, workers, rep), Phase: v1alpha1.PhaseSucceeded,
					Verdict: v1alpha1.VerdictPassed, RequestsAccepted: 12000, DroppedPercent: "0.00",
					RequestsPerSecond: fmt.Sprintf("%.2f", pushes), PushesPerSecond: fmt.Sprintf("%.2f", pushes),
					ReceivedMbps: fmt.Sprintf("%.4f", pushes*180*8/1e6),
					Latency: &v1alpha1.Latency{Avg: fmt.Sprintf("%.2fms", avg), P95: fmt.Sprintf("%.0fms", avg*2.5),
						P99: fmt.Sprintf("%.0fms", avg*4)},
					CPUPerCore: "0.91", Limit: v1alpha1.LimitCPU,
					IdealMaxDevices: int64(pushes * 200), SafeMaxDevices: int64(pushes * 140),
				})
			}
		}
	}
	var measured []v1alpha1.ScalingPoint
	for _, n := range fixtureUSLLoads {
		x := USLThroughput(fixtureUSL.lambda, fixtureUSL.sigma, fixtureUSL.kappa, n)
		measured = append(measured, v1alpha1.ScalingPoint{N: fmt.Sprint(n), Throughput: fmt.Sprintf("%.1f", x*(1+0.01*float64(int(n)%3-1)))})
	}
	rule := "safe = 70 % of the low end of ideal devices (M/M/1 response time 3.3× service time)"
	p.Status.Summary = []v1alpha1.ProfileSummary{
		{Profile: "C1", Rows: 6, Passed: 6, PushesPerSecond: "116.40", IdealMaxDevices: 23280, SafeMaxDevices: 16296,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 3,
				PushesPerSecond: minMax("120.00", "116.40", "123.60"), IdealMaxDevices: minMax("24000", "23280", "24720"),
				TypicalMaxDevices: minMax("4800", "4656", "4944"), BreakingPointDevices: minMax("31000", "30000", "32500"),
				MemoryPerDeviceMiB: minMax("0.012", "0.011", "0.013"), SafeMaxDevices: 16296, Limit: v1alpha1.LimitCPU},
			Best: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "4"}, Passed: 3,
				PushesPerSecond: minMax("300.00", "291.00", "309.00"), IdealMaxDevices: minMax("60000", "58200", "61800"),
				SafeMaxDevices: 40740, Limit: v1alpha1.LimitCPU},
			SafeFleet: 16296, Limit: v1alpha1.LimitCPU, LimitMessage: "cpu: 0.91 of the profile's cores at the floor setting", SafeRule: rule,
			Scaling: &v1alpha1.ScalingFit{By: "devices", Points: int32(len(measured)), Trusted: true, Measured: measured,
				Lambda: &v1alpha1.Estimate{Value: "60.0", Low: "57.1", High: "62.9"}, Sigma: &v1alpha1.Estimate{Value: "0.050", Low: "0.031", High: "0.069"},
				Kappa: &v1alpha1.Estimate{Value: "0.0020", Low: "0.0014", High: "0.0026"}, ResidualStdErr: "4.2", PeakN: "21.8", PeakThroughput: "432"}},
		{Profile: "C2", Rows: 6, Passed: 6, PushesPerSecond: "232.80", IdealMaxDevices: 46560,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 3,
				PushesPerSecond: minMax("240.00", "232.80", "247.20"), IdealMaxDevices: minMax("48000", "46560", "49440"),
				MemoryPerDeviceMiB: minMax("0.31", "0.30", "0.33"), SafeMaxDevices: 32592, Limit: v1alpha1.LimitCPU},
			Best: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "4"}, Passed: 3,
				PushesPerSecond: minMax("600.00", "582.00", "618.00"), IdealMaxDevices: minMax("120000", "116400", "123600"),
				SafeMaxDevices: 81480, Limit: v1alpha1.LimitCPU},
			SafeFleet: 10570, Limit: v1alpha1.LimitMemory, SafeRule: rule,
			LimitMessage: "memory: 0.31 MiB per device (stability run stab-c2, 3,000 devices) fills 80 % of 4096 MiB at 10,570 devices",
			Scaling: &v1alpha1.ScalingFit{By: "WORKERS", Points: 2, Trusted: false,
				Untrusted: []string{"σ < 0", "too few points: 2, need 1 low plus 4 higher"},
				Measured:  []v1alpha1.ScalingPoint{{N: "1", Throughput: "240"}, {N: "4", Throughput: "600"}},
				Lambda:    &v1alpha1.Estimate{Value: "240"}, Sigma: &v1alpha1.Estimate{Value: "-0.02"}, Kappa: &v1alpha1.Estimate{Value: "0.03"}}},
		{Profile: "C3", Rows: 6, Passed: 6,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 3,
				PushesPerSecond: minMax("355.00", "320.00", "410.00"), IdealMaxDevices: &v1alpha1.FigureRange{Median: "71000", Low: "64000", High: "82000",
					Interval: v1alpha1.IntervalMinMax, CVPercent: "12.4", N: 3}, SafeMaxDevices: 44800, Limit: v1alpha1.LimitGenerator},
			SafeFleet: 44800, Limit: v1alpha1.LimitGenerator, SafeRule: rule,
			LimitMessage: "generator: the load generators were the limit; 71000 is a lower bound",
			Noise:        "CV 12.4 % > 10 %: about 6 more repetitions would help"},
		{Profile: "C4", Rows: 6, Passed: 6,
			Floor: &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 3,
				PushesPerSecond: minMax("700.00", "655.00", "750.00"), IdealMaxDevices: minMax("140000", "131000", "150000"),
				SafeMaxDevices: 91700, Limit: v1alpha1.LimitTarget},
			SafeFleet: 91700, Limit: v1alpha1.LimitTarget, SafeRule: rule},
	}
	p.Status.Model = &v1alpha1.SizeModel{Exponent: "0.93", Scale: "24200", Points: 3, Predictions: []v1alpha1.SizePrediction{{
		Profile: "C3", CPU: "3", Memory: "6Gi", Limit: v1alpha1.LimitCPU, SafeMaxDevices: 46200,
		IdealMaxDevices:         &v1alpha1.FigureRange{Median: "74050", Low: "66000", High: "82000", Interval: v1alpha1.IntervalCI95, N: 3},
		MeasuredIdealMaxDevices: 71000, ErrorPercent: "+4.3", Message: "C3 predicted from C1, C2 and C4",
	}}}
	p.Status.Answer = &v1alpha1.FleetAnswer{Devices: 40000, Period: "260s", Rate: "153.85", Profile: "C3", SafeMaxDevices: 44800,
		HeadroomPercent: "10.7", Limit: v1alpha1.LimitGenerator, MonthlyCost: "146.00", CostPer1000Devices: "3.65", Currency: "EUR",
		PriceAsOf: "2026-11-01", Message: "C3 holds 40000 devices every 260s with 10.7 % headroom; its figure is a lower bound (generator)."}
	return p
}
