package plugin

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// finishedRun creates the TestRun "stab" with a full status, as the operator leaves one: results,
// thresholds (one failed), target usage, capacity, warnings, conditions, scenarios, checks,
// runners, and a results ConfigMap with the k6 summary and the timeline.
func finishedRun(t *testing.T, ns string, verdict v1alpha1.Verdict) {
	t.Helper()
	const name = "stab"
	run := tw.MakeTestRun(name, ns).Devices(1000, "200s").Duration("10m").Obj()
	run.Spec.Target.Components[0].Env = []corev1.EnvVar{{Name: "WORKERS", Value: "4"}}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(10 * time.Minute))
	setStatus(t, ns, name, func(s *v1alpha1.TestRunStatus) {
		*s = v1alpha1.TestRunStatus{
			Phase: v1alpha1.PhaseSucceeded, Verdict: verdict, Reason: "ThresholdsFailed", Message: "http_req_duration p(99)<30 failed on 41.7",
			StartTime: &start, CompletionTime: &end, TestID: name + "-1234abcd", TargetNamespace: ns + "-" + name,
			Runners: &v1alpha1.RunnerCounts{Desired: 2, Succeeded: 2, StartSkew: "4ms"},
			Results: &v1alpha1.Results{
				Protocol:   "http",
				Requests:   &v1alpha1.RequestCounts{Total: 3000, Accepted: 2970, Dropped: 30, DroppedPercent: "1.00"},
				Iterations: &v1alpha1.IterationCounts{Total: 3000, Dropped: 2},
				Throughput: &v1alpha1.Throughput{RequestsPerSecond: "5.00", ReceivedMbps: "0.12", SentMbps: "0.03"},
				Latency:    &v1alpha1.Latency{Min: "2ms", Avg: "11ms", P50: "9ms", P90: "20ms", P95: "24ms", P99: "41.7ms", Max: "80ms"},
				Checks: &v1alpha1.CheckCounts{Passed: 2990, Failed: 10, ByName: []v1alpha1.NamedCheck{
					{Name: "status is 200", Passed: 2990, Failed: 10}}},
				Thresholds: []v1alpha1.ThresholdResult{
					{Metric: "http_req_failed", Expression: "rate<0.05", Passed: true, Value: "0.01"},
					{Metric: "http_req_duration", Expression: "p(95)<500", Passed: true, Value: "24"},
					{Metric: "http_req_duration", Expression: "p(99)<30", Passed: false, Value: "41.7"},
				},
				Scenarios:  []v1alpha1.ScenarioResult{{Name: "devices", Requests: 3000, Iterations: 3000, RequestsPerSecond: "5.00", P95: "24ms"}},
				FullResult: &v1alpha1.FullResultRef{ConfigMap: name + "-results", Key: judge.SummaryKey},
				Warnings:   []string{"tag url has more than 200 values on http_req_duration"},
			},
			Target: &v1alpha1.TargetUsage{Source: "kubeletSummary", Samples: 60,
				Memory: &v1alpha1.MemoryUsage{BeforeMiB: 44, AfterMiB: 57, PeakMiB: 61, IncreaseMiB: 13, IncreasePercent: "29.55", PerDeviceMiB: "0.013", UtilizationPercent: "48.05"},
				CPU:    &v1alpha1.CPUUsage{AverageCoresPerCore: "0.07", PeakCoresPerCore: "0.31"}, Restarts: 1,
				LogFindings: []v1alpha1.LogFinding{{Pattern: "(?i)error", Count: 2, Sample: "CFG profile sync delayed"}}},
			Capacity: &v1alpha1.CapacityResult{PushesPerSecond: "125.53", IdealMaxDevices: 25106, TypicalMaxDevices: 5021, SafeMaxDevices: 20085, MaxSafeDevicesByMemory: 2081},
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionFalse, Reason: "ThresholdsFailed",
				Message: "1 of 3 thresholds failed", LastTransitionTime: end}},
		}
	})
	summary := judge.K6Summary{Metrics: map[string]judge.K6Metric{
		"http_reqs": {Type: "counter", Contains: "default", Values: map[string]float64{"count": 3000, "rate": 5}},
	}, RootGroup: judge.K6Group{Name: "", Checks: []judge.K6Check{{Name: "status is 200", Passes: 2990, Fails: 10}}}}
	timeline := judge.Timeline{Protocol: "http", WindowSeconds: 300, LoadStart: start.Time, LoadEnd: end.Time, Windows: []judge.TimelineWindow{
		{Start: start.Time, Requests: 1500, RequestsPerSecond: 5, P95: 23},
		{Start: start.Add(5 * time.Minute), Requests: 1500, RequestsPerSecond: 5, Failed: 30, P95: 25},
	}, Runners: []judge.RunnerRow{{Name: name + "-runner-0", Final: true}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-results", Namespace: ns}, BinaryData: map[string][]byte{}}
	for key, v := range map[string]any{judge.SummaryKey: summary, judge.TimelineKey: timeline} {
		data, err := judge.EncodeGzipJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		cm.BinaryData[key] = data
	}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// finishedPlan creates a CapacityPlan over C1 and C2 × WORKERS 1, 4 × SSL with its table and
// summary, and two child TestRuns (one controlled by the plan, one merely labelled).
func finishedPlan(t *testing.T, ns string) {
	t.Helper()
	plan := tw.MakeCapacityPlan("bench-6", ns, tw.MakeTestRun("t", ns).Devices(1200, "200s").Iterations(10).Obj(), "C1", "C2").
		Sweep("web", "WORKERS", "1", "4").SweepComponentField("web", "tls", "true", "false").Obj()
	if err := env.Client.Create(ctx, plan); err != nil {
		t.Fatal(err)
	}
	row := func(profile, workers, tls string, verdict v1alpha1.Verdict, accepted, dropped int64, pct, pushes, p95 string, ideal, safe int64) v1alpha1.CapacityRow {
		return v1alpha1.CapacityRow{Profile: profile, Values: map[string]string{"WORKERS": workers, "web.tls": tls}, Repetition: 1,
			TestRun: "bench-6-" + strings.ToLower(profile) + "-" + workers + "-" + tls, Phase: v1alpha1.PhaseSucceeded, Verdict: verdict,
			RequestsAccepted: accepted, RequestsDropped: dropped, DroppedPercent: pct, RequestsPerSecond: pushes, PushesPerSecond: pushes,
			Latency: &v1alpha1.Latency{P95: p95}, MemoryPeakMiB: 57, CPUPerCore: "0.70", IdealMaxDevices: ideal, SafeMaxDevices: safe}
	}
	plan.Status = v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "4/4",
		Table: []v1alpha1.CapacityRow{
			row("C1", "1", "true", v1alpha1.VerdictPassed, 12000, 0, "0.00", "125.53", "31ms", 25106, 20085),
			row("C1", "4", "false", v1alpha1.VerdictPassed, 12000, 0, "0.00", "529.33", "9ms", 105866, 84692),
			row("C2", "1", "true", v1alpha1.VerdictFailed, 11800, 200, "1.67", "237.45", "120ms", 47490, 37992),
			{Profile: "C2", Values: map[string]string{"WORKERS": "4", "web.tls": "false"}, Repetition: 1, TestRun: "bench-6-c2-4-false",
				Phase: v1alpha1.PhaseFailed, Verdict: v1alpha1.VerdictFailed, Reason: "TargetNotReady"},
		},
		Summary: []v1alpha1.ProfileSummary{
			{Profile: "C1", Rows: 2, Passed: 2, PushesPerSecond: "125.53", IdealMaxDevices: 25106, TypicalMaxDevices: 5021, SafeMaxDevices: 20085},
			{Profile: "C2", Rows: 2, Passed: 0},
		},
	}
	if err := env.Client.Status().Update(ctx, plan); err != nil {
		t.Fatal(err)
	}
	owned := tw.MakeTestRun("bench-6-c1-1-true", ns).Obj()
	owned.Labels = map[string]string{naming.LabelPlan: plan.Name}
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "CapacityPlan", Name: plan.Name, UID: plan.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	stray := tw.MakeTestRun("stray", ns).Obj()
	stray.Labels = map[string]string{naming.LabelPlan: plan.Name}
	for _, r := range []*v1alpha1.TestRun{owned, stray} {
		if err := env.Client.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(t, ns, owned.Name, finish(v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, "", ""))
}

// cells splits a printed table line into its cells (cells hold no double spaces).
func cells(line string) []string {
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
}

// norm is a line with every run of blanks made one space.
func norm(line string) string { return strings.Join(strings.Fields(line), " ") }

func normLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, norm(l))
	}
	return lines
}

// lineWith returns the first printed line that starts with prefix, blanks compared as one space.
func lineWith(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(norm(l), norm(prefix)) {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, out)
	return ""
}

func TestGetAndDescribeTestRun(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictFailed)

	get := plugin(t, ns, "get", "stab")
	if get.code != 0 {
		t.Fatalf("get: exit %d: %s", get.code, get.stderr)
	}
	for _, want := range []string{
		"Verdict: FAILED",
		"Phase: Succeeded (ThresholdsFailed)",
		"Requests (http): total 3000 accepted 2970 dropped 30 dropped 1.00%",
		"Throughput: 5.00 req/s received 0.12 Mb/s sent 0.03 Mb/s",
		"Latency: avg 11ms p50 9ms p95 24ms p99 41.7ms (min 2ms p90 20ms max 80ms)",
		"Memory: before 44 MiB after 57 MiB peak 61 MiB increase 13 MiB (29.55%) per device 0.013 MiB utilization 48.05%",
		"CPU: average 0.07 peak 0.31 (cores per core)",
		"Restarts: 1 (OOM kills 0)",
		`Log finding: "(?i)error": 2 e.g. CFG profile sync delayed`,
		"Max devices: ideal 25106 typical 5021 safe 20085 at full RAM (seed 000) 2081",
		"Pushes per second: 125.53",
		"METRIC EXPRESSION VALUE RESULT",
		"http_req_failed rate<0.05 0.01 pass",
		"http_req_duration p(95)<500 24 pass",
		"http_req_duration p(99)<30 41.7 FAIL",
		"- tag url has more than 200 values on http_req_duration",
	} {
		prefix := strings.Join(strings.Fields(want)[:2], " ")
		if l := lineWith(t, get.stdout, prefix); norm(l) != want {
			// Two thresholds share a metric: look for the exact line among all.
			if !slices.Contains(normLines(get.stdout), want) {
				t.Errorf("get: no line %q (found %q)", want, norm(l))
			}
		}
	}
	if !strings.Contains(get.stdout, "\nWarnings:\n") {
		t.Errorf("no warnings section:\n%s", get.stdout)
	}
	for _, absent := range []string{"\nConditions:\n", "\nScenarios:\n", "\nChecks:\n", "\nRunners:\n"} {
		if strings.Contains(get.stdout, absent) {
			t.Errorf("get shows %s, which only describe shows", absent)
		}
	}

	desc := plugin(t, ns, "describe", "tr/stab")
	if desc.code != 0 {
		t.Fatalf("describe: exit %d: %s", desc.code, desc.stderr)
	}
	if normLines(desc.stdout)[0] != normLines(get.stdout)[0] || !slices.Contains(normLines(desc.stdout), norm(lineWith(t, get.stdout, "Memory:"))) {
		t.Errorf("describe does not start with get's table:\n%s", desc.stdout)
	}
	for _, want := range []string{
		"ThresholdsPassed False ThresholdsFailed 1 of 3 thresholds failed",
		"SCENARIO REQUESTS ITERATIONS REQ/S P95",
		"devices 3000 3000 5.00 24ms",
		"CHECK GROUP PASSED FAILED",
		"status is 200 - 2990 10",
		"Start skew: 4ms",
		"Desired: 2",
		"Test ID: stab-1234abcd",
		"Source: kubeletSummary (60 samples)",
	} {
		if !slices.Contains(normLines(desc.stdout), want) {
			t.Errorf("describe: no line %q in:\n%s", want, desc.stdout)
		}
	}
	for _, s := range []string{"\nConditions:\n", "\nScenarios:\n", "\nChecks:\n", "\nRunners:\n"} {
		if !strings.Contains(desc.stdout, s) {
			t.Errorf("describe lacks %q:\n%s", s, desc.stdout)
		}
	}
	if res := plugin(t, ns, "get", "cp/stab"); res.code != ExitError || !strings.Contains(res.stderr, "not found") {
		t.Errorf("get cp/stab of a TestRun: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestGetSaysWhereADispatchedRunRuns: a run Kueue's MultiKueue dispatches says it runs in a
// worker cluster, which one once Kueue chose it, and that its results are there.
func TestGetSaysWhereADispatchedRunRuns(t *testing.T) {
	ns := namespace(t)
	run := tw.MakeTestRun("away", ns).Parallelism(2).Obj()
	run.Spec.ManagedBy = v1alpha1.ManagedByMultiKueue
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: "zone-cluster-2"}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	get := plugin(t, ns, "get", "away")
	if l := norm(lineWith(t, get.stdout, "Runs in:")); l != "Runs in: a worker cluster Kueue's MultiKueue has not chosen yet" {
		t.Errorf("before dispatch: %q", l)
	}
	run.Annotations = map[string]string{v1alpha1.AnnotationWorkerCluster: "cluster-2"}
	if err := env.Client.Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	get = plugin(t, ns, "get", "away")
	if l := norm(lineWith(t, get.stdout, "Runs in:")); !strings.HasPrefix(l, "Runs in: worker cluster cluster-2 (dispatched by MultiKueue") {
		t.Errorf("after dispatch: %q", l)
	}
}

// TestGetShowsEveryZone: a zoned run's get shows its zones side by side: cluster, state,
// start offset, own requests and p95, and why a zone was lost.
func TestGetShowsEveryZone(t *testing.T) {
	ns := namespace(t)
	run := tw.MakeTestRun("zoned", ns).External("http://10.0.0.1:30080").
		Zones(v1alpha1.ZoneSpec{Name: "home", Runners: 2}, v1alpha1.ZoneSpec{Name: "c2", Cluster: "cluster-2", Runners: 2}).Obj()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = v1alpha1.PhaseSucceeded
	run.Status.Zones = []v1alpha1.ZoneStatus{
		{Name: "home", Runners: 2, State: v1alpha1.ZoneEnded, StartOffset: "0s", Requests: 200, Latency: &v1alpha1.Latency{P50: "0.61ms", P95: "1.20ms"}},
		{Name: "c2", Cluster: "cluster-2", Run: "zoned-zone-c2", Runners: 2, State: v1alpha1.ZoneLost, StartOffset: "4.1ms", Message: "no results from cluster cluster-2"},
	}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	get := plugin(t, ns, "get", "zoned")
	if got, want := cells(lineWith(t, get.stdout, "ZONE CLUSTER")), []string{"ZONE", "CLUSTER", "RUNNERS", "STATE", "START OFFSET", "REQUESTS", "FAILED", "P50", "P95"}; !slices.Equal(got, want) {
		t.Errorf("header %q, want %q", got, want)
	}
	if got, want := cells(lineWith(t, get.stdout, "home (home)")), []string{"home", "(home)", "2", "Ended", "0s", "200", "0", "0.61ms", "1.20ms"}; !slices.Equal(got, want) {
		t.Errorf("home row %q, want %q", got, want)
	}
	if got, want := cells(lineWith(t, get.stdout, "c2 cluster-2")), []string{"c2", "cluster-2", "2", "Lost", "4.1ms", "0", "0", "-", "-"}; !slices.Equal(got, want) {
		t.Errorf("c2 row %q, want %q", got, want)
	}
	if l := norm(lineWith(t, get.stdout, "why:")); l != "why: no results from cluster cluster-2" {
		t.Errorf("the lost zone's reason: %q", l)
	}
}

func TestGetPlan(t *testing.T) {
	ns := namespace(t)
	finishedPlan(t, ns)
	for _, args := range [][]string{{"get", "bench-6"}, {"get", "cp/bench-6"}, {"get", "--plan", "bench-6"}, {"describe", "capacityplan/bench-6"}} {
		res := plugin(t, ns, args...)
		if res.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, res.code, res.stderr)
		}
		header := cells(lineWith(t, res.stdout, "PROFILE WORKERS"))
		wantHeader := []string{"PROFILE", "WORKERS", "WEB.TLS", "REP", "PHASE", "VERDICT", "ACCEPTED", "DROPPED", "DROPPED%", "RPS", "PUSHES/S", "P95",
			"IDEAL MAX", "SAFE MAX", "DEVS AT FULL RAM", "TESTRUN"}
		if !slices.Equal(header, wantHeader) {
			t.Errorf("%v: header %q, want %q", args, header, wantHeader)
		}
		for prefix, want := range map[string][]string{
			"C1 1 true":  {"C1", "1", "true", "1", "Succeeded", "PASSED", "12000", "0", "0.00", "125.53", "125.53", "31ms", "25106", "20085", "-", "bench-6-c1-1-true"},
			"C2 1 true":  {"C2", "1", "true", "1", "Succeeded", "FAILED", "11800", "200", "1.67", "237.45", "237.45", "120ms", "47490", "37992", "-", "bench-6-c2-1-true"},
			"C2 4 false": {"C2", "4", "false", "1", "Failed", "FAILED TargetNotReady", "-", "-", "-", "-", "-", "-", "-", "-", "-", "bench-6-c2-4-false"},
		} {
			if got := cells(lineWith(t, res.stdout, prefix)); !slices.Equal(got, want) {
				t.Errorf("%v: row %q, want %q", args, got, want)
			}
		}
		if got := cells(lineWith(t, res.stdout, "C1 2 2")); !slices.Equal(got, []string{"C1", "2", "2", "125.53", "25106", "5021", "20085", "-", "-"}) {
			t.Errorf("%v: summary row %q", args, got)
		}
		if strings.Contains(res.stdout, "Conditions") || (args[0] == "describe") != strings.Contains(res.stdout, "Failure policy:") {
			t.Errorf("%v: describe-only lines wrong:\n%s", args, res.stdout)
		}
	}
}

func TestReportJSON(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictPassed)
	res := plugin(t, ns, "report", "stab", "--format", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc struct {
		APIVersion, Kind, Name, Namespace string
		Spec                              struct {
			Profile    string
			Components []string
			Load       struct{ Devices int32 }
		}
		Status struct {
			Verdict string
			Results struct {
				Requests   struct{ Accepted int64 }
				Thresholds []struct{ Passed bool }
			}
		}
		FullResult struct {
			Metrics map[string]struct{ Values map[string]float64 }
		}
		Timeline *struct {
			WindowSeconds float64
			Windows       []struct {
				Requests, Failed uint64
				P95              float64
			}
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, res.stdout)
	}
	if doc.APIVersion != ReportAPIVersion || doc.Kind != "TestRunReport" || doc.Name != "stab" || doc.Namespace != ns {
		t.Errorf("head %s %s %s/%s", doc.APIVersion, doc.Kind, doc.Namespace, doc.Name)
	}
	if doc.Spec.Profile != "C1" || doc.Spec.Load.Devices != 1000 || !slices.Equal(doc.Spec.Components, []string{"web: webServer"}) {
		t.Errorf("spec %+v", doc.Spec)
	}
	if doc.Status.Verdict != "PASSED" || doc.Status.Results.Requests.Accepted != 2970 || len(doc.Status.Results.Thresholds) != 3 {
		t.Errorf("status %+v", doc.Status)
	}
	if got := doc.FullResult.Metrics["http_reqs"].Values["count"]; got != 3000 {
		t.Errorf("fullResult http_reqs count %v, want 3000", got)
	}
	if doc.Timeline == nil || doc.Timeline.WindowSeconds != 300 || len(doc.Timeline.Windows) != 2 ||
		doc.Timeline.Windows[1].Requests != 1500 || doc.Timeline.Windows[1].Failed != 30 || doc.Timeline.Windows[1].P95 != 25 {
		t.Errorf("timeline %+v", doc.Timeline)
	}

	// A run without a full result has none in its document.
	if err := env.Client.Create(ctx, tw.MakeTestRun("bare", ns).Obj()); err != nil {
		t.Fatal(err)
	}
	bare := plugin(t, ns, "report", "bare", "--format", "json", "-o", "-")
	if bare.code != 0 || strings.Contains(bare.stdout, `"timeline"`) || strings.Contains(bare.stdout, `"fullResult"`) || !strings.Contains(bare.stdout, `"name": "bare"`) {
		t.Errorf("bare: exit %d:\n%s", bare.code, bare.stdout)
	}

	// A plan's document has its table and only the children it controls.
	finishedPlan(t, ns)
	out := filepath.Join(t.TempDir(), "plan.json")
	if res := plugin(t, ns, "report", "cp/bench-6", "--format", "json", "-o", out); res.code != 0 {
		t.Fatalf("plan: exit %d: %s", res.code, res.stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var pdoc PlanDocument
	if err := json.Unmarshal(raw, &pdoc); err != nil {
		t.Fatal(err)
	}
	if pdoc.Kind != "CapacityPlanReport" || len(pdoc.Status.Table) != 4 || len(pdoc.Children) != 1 || pdoc.Children[0].Name != "bench-6-c1-1-true" ||
		pdoc.Children[0].Verdict != v1alpha1.VerdictPassed {
		t.Errorf("plan document: kind %s, %d rows, children %+v", pdoc.Kind, len(pdoc.Status.Table), pdoc.Children)
	}
}

type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, out string) junitDoc {
	t.Helper()
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites:\n%s", len(doc.Suites), out)
	}
	return doc
}

func TestReportJUnit(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictFailed)
	res := plugin(t, ns, "report", "stab", "--format", "junit")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	doc := parseJUnit(t, res.stdout)
	s := doc.Suites[0]
	if doc.Tests != 4 || s.Tests != 4 || len(s.Cases) != 4 || doc.Failures != 2 || doc.Errors != 0 {
		t.Fatalf("tests %d/%d, %d cases, %d failures, %d errors; want 4 cases (3 thresholds and the run), 2 failures:\n%s",
			doc.Tests, s.Tests, len(s.Cases), doc.Failures, doc.Errors, res.stdout)
	}
	for i, want := range []string{"http_req_failed: rate<0.05", "http_req_duration: p(95)<500", "http_req_duration: p(99)<30", "stab"} {
		if s.Cases[i].Name != want {
			t.Errorf("case %d: %q, want %q", i, s.Cases[i].Name, want)
		}
	}
	if s.Cases[0].Failure != nil || s.Cases[1].Failure != nil {
		t.Errorf("passed thresholds have failures")
	}
	if f := s.Cases[2].Failure; f == nil || f.Text != "value 41.7" || !strings.Contains(f.Message, "41.7") {
		t.Errorf("failed threshold: %+v", f)
	}
	if f := s.Cases[3].Failure; f == nil || f.Message != "verdict FAILED" || !strings.Contains(f.Text, "ThresholdsFailed") {
		t.Errorf("run case: %+v", f)
	}

	// A run that ended Failed is an error, with its reason and message.
	if err := env.Client.Create(ctx, tw.MakeTestRun("broken", ns).Obj()); err != nil {
		t.Fatal(err)
	}
	setStatus(t, ns, "broken", func(s *v1alpha1.TestRunStatus) {
		s.Phase, s.Verdict, s.Reason, s.Message = v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, "ScriptInvalid", "SyntaxError at line 3"
	})
	res = plugin(t, ns, "report", "broken", "--format", "junit", "-o", "-")
	doc = parseJUnit(t, res.stdout)
	if c := doc.Suites[0].Cases; doc.Errors != 1 || doc.Failures != 0 || len(c) != 1 || c[0].Error == nil || c[0].Error.Type != "ScriptInvalid" ||
		!strings.Contains(c[0].Error.Text, "SyntaxError at line 3") {
		t.Errorf("broken run:\n%s", res.stdout)
	}

	// A plan: a case per table row; the FAILED row fails, the Failed one errs.
	finishedPlan(t, ns)
	res = plugin(t, ns, "report", "bench-6", "--plan", "--format", "junit")
	doc = parseJUnit(t, res.stdout)
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 1 {
		t.Errorf("plan: %d tests, %d failures, %d errors:\n%s", doc.Tests, doc.Failures, doc.Errors, res.stdout)
	}
}

func readCSV(t *testing.T, out string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// Seed 000's column names, spelled as it spells them.
	seed000 := []string{"Spec", "Test", "Handlers", "Repetition", "Verdict", "Performed Pushes", "Data ERR/retries", "push errors (%)",
		"Pushes per second", "RSS (MiB)", "MiB per device", "avg load 15 / cpu core", "Crashes", "Ideal max devs", "Safe max devs", "Max safe # of devs"}
	if len(recs) == 0 || !slices.Equal(recs[0], seed000) {
		t.Fatalf("header %q, want %q", recs, seed000)
	}
	return recs[1:]
}

// TestCSVHeaderIsSeed000s: the CSV's columns are spelled as seed 000 spells them (testdata holds
// the seed's lines that name them), but for the three it has no column of its own for.
func TestCSVHeaderIsSeed000s(t *testing.T) {
	seed, err := os.ReadFile(filepath.Join("testdata", "seed000-columns.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range CSVHeader {
		if col != "Repetition" && col != "RSS (MiB)" && col != "Pushes per second" && !bytes.Contains(seed, []byte(col)) {
			t.Errorf("column %q is not in seed 000", col)
		}
	}
}

func TestReportCSV(t *testing.T) {
	ns := namespace(t)
	finishedPlan(t, ns)
	res := plugin(t, ns, "report", "cp/bench-6", "--format", "csv")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rows := readCSV(t, res.stdout)
	want := [][]string{
		{"C1", "bench-6-SSL", "1", "1", "PASSED", "12000", "0", "0.00", "125.53", "57", "", "0.70", "", "25106", "20085", ""},
		{"C1", "bench-6-noSSL", "4", "1", "PASSED", "12000", "0", "0.00", "529.33", "57", "", "0.70", "", "105866", "84692", ""},
		{"C2", "bench-6-SSL", "1", "1", "FAILED", "11800", "200", "1.67", "237.45", "57", "", "0.70", "", "47490", "37992", ""},
		{"C2", "bench-6-noSSL", "4", "1", "Failed (TargetNotReady)", "", "", "", "", "", "", "", "", "", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(want), res.stdout)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d: %q\nwant   %q", i, rows[i], want[i])
		}
	}

	finishedRun(t, ns, v1alpha1.VerdictPassed)
	res = plugin(t, ns, "report", "testrun/stab", "--format", "csv")
	rows = readCSV(t, res.stdout)
	wantRun := []string{"C1", "stab", "4", "1", "PASSED", "2970", "30", "1.00", "125.53", "61", "0.013", "0.07", "1", "25106", "20085", "2081"}
	if len(rows) != 1 || !slices.Equal(rows[0], wantRun) {
		t.Errorf("testrun rows %q, want [%q]", rows, wantRun)
	}
}

// TestReportHTML writes the HTML report to NAME.html by default, through htmlreport.
func TestReportHTML(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictPassed)
	dir := t.TempDir()
	t.Chdir(dir)
	res := plugin(t, ns, "report", "stab")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "stab.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bytes.ToLower(raw), []byte("<html")) || !bytes.Contains(raw, []byte("stab")) {
		t.Errorf("stab.html is not the run's HTML report (%d bytes)", len(raw))
	}
	finishedPlan(t, ns)
	out := filepath.Join(dir, "plan.html")
	if res := plugin(t, ns, "report", "cp/bench-6", "-o", out); res.code != 0 {
		t.Fatalf("plan: exit %d: %s", res.code, res.stderr)
	}
	if raw, err := os.ReadFile(out); err != nil || !bytes.Contains(raw, []byte("bench-6")) {
		t.Errorf("plan.html: %v (%d bytes)", err, len(raw))
	}
}
