package htmlreport

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

var loadStart = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

const (
	fixtureWindows      = 30
	fixtureTargetPoints = 29
	fixtureBuckets      = 40
)

// fixtureTimeline is a 5-minute run in 10 s windows, target sampled every 15 s from a minute
// before to a minute after, three runners (one saturated), and a latency histogram.
func fixtureTimeline() *judge.Timeline {
	tl := &judge.Timeline{Protocol: "http", WindowSeconds: 10, LoadStart: loadStart,
		LoadEnd: loadStart.Add(fixtureWindows * 10 * time.Second), TargetMemory: "rss"}
	for i := range fixtureWindows {
		ramp := math.Min(1, float64(i+1)/6)
		w := judge.TimelineWindow{Start: loadStart.Add(time.Duration(i) * 10 * time.Second),
			RequestsPerSecond: 190*ramp + 8*math.Sin(float64(i)), VUs: math.Round(50 * ramp),
			P50: 11 + math.Sin(float64(i)/3), P95: 28 + 6*math.Sin(float64(i)/4), P99: 55 + 20*ramp}
		w.Requests = uint64(w.RequestsPerSecond * 10)
		w.Iterations = w.Requests
		if i == 17 || i == 18 {
			w.Failed, w.DroppedIterations = uint64(3+i-17), 12
		}
		tl.Windows = append(tl.Windows, w)
	}
	for i := range fixtureTargetPoints {
		at := loadStart.Add(-time.Minute + time.Duration(i)*15*time.Second)
		p := judge.TargetPoint{At: at, MemoryMiB: 44, Cores: 0.03}
		if !at.Before(loadStart) && !at.After(tl.LoadEnd) {
			p.MemoryMiB = 44 + 13*at.Sub(loadStart).Seconds()/300
			p.Cores = 0.62 + 0.05*math.Sin(float64(i))
		} else if at.After(tl.LoadEnd) {
			p.MemoryMiB = 57
		}
		if i >= 14 {
			p.Restarts = 1
		}
		tl.Target = append(tl.Target, p)
	}
	tl.Runners = []judge.RunnerRow{
		{Name: "demo-runner-0", Final: true, CPUUtilization: 0.42, CPUSeconds: 126, Cores: 1, MaxRSSMiB: 88.5},
		{Name: "demo-runner-1", Final: true, CPUUtilization: 0.45, CPUSeconds: 135, Cores: 1, MaxRSSMiB: 90.2},
		{Name: "demo-runner-2", Final: true, CPUUtilization: 0.93, CPUSeconds: 279, Cores: 1, MaxRSSMiB: 96.0},
	}
	lo, hi := 4.0, 420.0
	ratio := math.Pow(hi/lo, 1.0/fixtureBuckets)
	from := 0.0
	for i := 1; i <= fixtureBuckets; i++ {
		to := lo * math.Pow(ratio, float64(i))
		x := math.Log(to/11) / 0.6
		tl.Latency = append(tl.Latency, judge.HistogramBucket{From: from, To: to, Count: uint64(9000*math.Exp(-x*x/2)) + 1})
		from = to
	}
	return tl
}

func fixtureTestRun() *v1alpha1.TestRun {
	start := metav1.NewTime(loadStart)
	end := metav1.NewTime(loadStart.Add(6 * time.Minute))
	devices := int32(1000)
	return &v1alpha1.TestRun{
		ObjectMeta: metav1.ObjectMeta{Name: "stab-2-2-c1", Namespace: "bench"},
		Spec: v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Profile: "C1", Parallelism: v1alpha1.FixedParallelism(3),
			Load: &v1alpha1.LoadSpec{Devices: &devices}},
		Status: v1alpha1.TestRunStatus{
			Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictFailed, Reason: "ThresholdsFailed",
			Message: "1 of 3 thresholds failed on the merged data: http_req_duration p(99)<50.",
			TestID:  "stab-2-2-c1-1a2b3c4d", StartTime: &start, CompletionTime: &end,
			Runners: &v1alpha1.RunnerCounts{Desired: 3, Succeeded: 3, StartSkew: "4ms"},
			Results: &v1alpha1.Results{
				Protocol:   "http",
				Requests:   &v1alpha1.RequestCounts{Total: 53210, Accepted: 53205, Dropped: 5, DroppedPercent: "0.01"},
				Iterations: &v1alpha1.IterationCounts{Total: 53210, Dropped: 24},
				Throughput: &v1alpha1.Throughput{RequestsPerSecond: "177.37", ReceivedMbps: "3.42", SentMbps: "1.08"},
				Latency: &v1alpha1.Latency{Min: "8ms", Avg: "13.20ms", P50: "11ms", P90: "24ms", P95: "29ms", P99: "71ms",
					Max: "412ms", AboveAveragePercent: "21.48", BelowAveragePercent: "78.52"},
				Checks: &v1alpha1.CheckCounts{Passed: 53200, Failed: 10, ByName: []v1alpha1.NamedCheck{
					{Name: "status is 200", Passed: 53200, Failed: 5}, {Name: "body has id", Group: "::push", Passed: 53205, Failed: 5}}},
				Thresholds: []v1alpha1.ThresholdResult{
					{Metric: "http_req_failed", Expression: "rate<0.01", Passed: true, Value: "0.0001"},
					{Metric: "http_req_duration", Expression: "p(95)<200", Passed: true, Value: "29"},
					{Metric: "http_req_duration", Expression: "p(99)<50", Passed: false, Value: "71"},
				},
				Scenarios: []v1alpha1.ScenarioResult{
					{Name: "push", Requests: 40000, Iterations: 40000, RequestsPerSecond: "133.33", P95: "27ms"},
					{Name: "register", Requests: 13210, Iterations: 13210, RequestsPerSecond: "44.03", P95: "35ms"},
				},
				Metrics: []v1alpha1.MetricResult{
					{Name: "http_req_duration", Type: "trend", Unit: "ms", Samples: 53210, Avg: "13.20", Med: "11", P95: "29", P99: "71", Min: "8", Max: "412"},
					{Name: "http_reqs", Type: "counter", Count: "53210", Rate: "177.37"},
				},
			},
			Target: &v1alpha1.TargetUsage{Source: "kubeletSummary", Samples: fixtureTargetPoints, Restarts: 1,
				Memory: &v1alpha1.MemoryUsage{BeforeMiB: 44, AfterMiB: 57, PeakMiB: 57, IncreaseMiB: 13, IncreasePercent: "29.55",
					PerDeviceMiB: "0.013", UtilizationPercent: "48.05"},
				CPU: &v1alpha1.CPUUsage{AverageCoresPerCore: "0.62", PeakCoresPerCore: "0.67"}},
			Capacity:             &v1alpha1.CapacityResult{PushesPerSecond: "133.33", IdealMaxDevices: 26666, TypicalMaxDevices: 5333, SafeMaxDevices: 21333, MaxSafeDevicesByMemory: 2081},
			GeneratorBound:       true,
			GeneratorBoundReason: "runner demo-runner-2 used 93% of its CPU",
		},
	}
}

// fixturePlan is seed 000's benchmark shape: 2 profiles × WORKERS 1, 2, 4, 8 × 2 repetitions,
// with latency (seed 001) and goodput (seed 004) in every row.
func fixturePlan() *v1alpha1.CapacityPlan {
	p := &v1alpha1.CapacityPlan{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-6-ssl", Namespace: "bench"},
		Spec: v1alpha1.CapacityPlanSpec{Profiles: []string{"C1", "C2"}, Repetitions: 2,
			Sweep: []v1alpha1.SweepDimension{{Component: "dwarfgd", Env: "WORKERS", Values: []string{"1", "2", "4", "8"}}}},
		Status: v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "16/16"},
	}
	for pi, profile := range p.Spec.Profiles {
		for wi, workers := range []int{1, 2, 4, 8} {
			for rep := int32(1); rep <= 2; rep++ {
				pushes := 125.5*float64(pi+1)*(1+0.08*float64(wi)) - 3*float64(rep)
				avg := 11.0 + 5*float64(wi) - float64(rep)
				p.Status.Table = append(p.Status.Table, v1alpha1.CapacityRow{
					Profile: profile, Values: map[string]string{"WORKERS": fmt.Sprint(workers)}, Repetition: rep,
					TestRun: fmt.Sprintf("bench-6-ssl-%s-w%d-r%d", profile, workers, rep), Phase: v1alpha1.PhaseSucceeded,
					Verdict: v1alpha1.VerdictPassed, RequestsAccepted: 12000, DroppedPercent: "0.00",
					RequestsPerSecond: fmt.Sprintf("%.2f", pushes*1.1), PushesPerSecond: fmt.Sprintf("%.2f", pushes),
					ReceivedMbps: fmt.Sprintf("%.2f", pushes*0.05),
					Latency: &v1alpha1.Latency{Avg: fmt.Sprintf("%.2fms", avg), P95: fmt.Sprintf("%.0fms", avg*2.5),
						P99: fmt.Sprintf("%.0fms", avg*4)},
					MemoryPeakMiB: 57, CPUPerCore: "0.71",
					IdealMaxDevices: int64(pushes * 200), SafeMaxDevices: int64(pushes * 160),
				})
			}
		}
	}
	p.Status.Summary = []v1alpha1.ProfileSummary{
		{Profile: "C1", Rows: 8, Passed: 8, PushesPerSecond: "122.50", IdealMaxDevices: 24500, TypicalMaxDevices: 4900, SafeMaxDevices: 19600},
		{Profile: "C2", Rows: 8, Passed: 8, PushesPerSecond: "248.00", IdealMaxDevices: 49600, TypicalMaxDevices: 9920, SafeMaxDevices: 39680},
	}
	return p
}

// fixturePayloads are seed 004's sweep as examples/ouroboros/payload-sweep.yaml runs it.
var fixturePayloads = []float64{64, 256, 1024, 4096, 16384, 65536}

// fixturePayloadPlan is seed 004 as a CapacityPlan: one client echoing each payload size, the
// round trip flat for small payloads and rising with the size, goodput (req/s × size) rising.
func fixturePayloadPlan() *v1alpha1.CapacityPlan {
	values := make([]string, len(fixturePayloads))
	for i, b := range fixturePayloads {
		values[i] = fmt.Sprint(b)
	}
	p := &v1alpha1.CapacityPlan{
		ObjectMeta: metav1.ObjectMeta{Name: "ouroboros-payload", Namespace: "bench"},
		Spec: v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"},
			Sweep: []v1alpha1.SweepDimension{{ScriptEnv: "PAYLOAD_BYTES", Values: values}}},
		Status: v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted,
			Progress: fmt.Sprintf("%d/%d", len(values), len(values))},
	}
	for i, b := range fixturePayloads {
		// 0.45 ms of HTTP and scheduling, then the payload there and back at 3 Gb/s.
		rtt := 0.45 + 2*b*8/3e9*1000
		rps := 1000 / rtt
		p.Status.Table = append(p.Status.Table, v1alpha1.CapacityRow{
			Profile: "C1", Values: map[string]string{"PAYLOAD_BYTES": values[i]}, Repetition: 1,
			TestRun: "ouroboros-payload-c1-" + values[i], Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed,
			RequestsAccepted: 2000, DroppedPercent: "0.00", RequestsPerSecond: fmt.Sprintf("%.2f", rps),
			ReceivedMbps: fmt.Sprintf("%.2f", rps*b*8/1e6), SentMbps: fmt.Sprintf("%.2f", rps*(b+120)*8/1e6),
			Latency: &v1alpha1.Latency{Avg: judge.Millis(rtt), P50: judge.Millis(rtt * 0.97),
				P95: judge.Millis(rtt * 1.4), P99: judge.Millis(rtt * 2.1)},
		})
	}
	return p
}

const fixturePeakSteps = 8

// fixturePeakChild is a peak test that broke at its 8th step.
func fixturePeakChild() v1alpha1.TestRun {
	pk := &v1alpha1.PeakResult{BreakingPoint: v1alpha1.PeakReached, LastHeldDevices: 7000, FirstFailedDevices: 8000,
		StopRule: "errors 7.10% > 5%"}
	for i := 1; i <= fixturePeakSteps; i++ {
		d := int64(i * 1000)
		held := i < fixturePeakSteps
		errs := "0.00"
		if !held {
			errs = "7.10"
		}
		pk.Steps = append(pk.Steps, v1alpha1.PeakStepResult{Devices: d, Requests: d * 3,
			RequestsPerSecond: fmt.Sprintf("%.2f", math.Min(float64(d)/200, 32)), ErrorPercent: errs,
			DroppedPercent: "0.00", P95: fmt.Sprintf("%.2fms", 12+math.Pow(float64(i), 2.2)), Held: held})
	}
	return v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: "peakr-64-max-c2", Namespace: "bench"},
		Spec:   v1alpha1.TestRunSpec{Type: v1alpha1.TestTypePeak, Profile: "C2"},
		Status: v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed, Peak: pk}}
}
