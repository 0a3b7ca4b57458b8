package plan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// bench is seed 000's Bench-6 shape: web server → backend → database, WORKERS swept.
func bench() *v1alpha1.CapacityPlan {
	tpl := tw.MakeTestRun("t", "ns").Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer},
		v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "sut:dev", Env: []corev1.EnvVar{{Name: "WORKERS", Value: "16"}}},
	).Devices(100, "6s").Duration("60s").Obj()
	return tw.MakeCapacityPlan("bench-6", "ns", tpl, "C1", "C2").Sweep("app", "WORKERS", "1", "2", "4", "8").Obj()
}

func TestCells(t *testing.T) {
	p := bench()
	p.Spec.Sweep = append(p.Spec.Sweep, v1alpha1.SweepDimension{ScriptEnv: "SSL", Values: []string{"on", "off"}})
	p.Spec.Repetitions = 2
	cells := Cells(&p.Spec)
	if len(cells) != 2*4*2*2 {
		t.Fatalf("%d cells, want 32", len(cells))
	}
	// Profile varies slowest, then each dimension in order, repetition fastest.
	want := []Cell{
		{Index: 0, Profile: "C1", Values: []string{"1", "on"}, Repetition: 1},
		{Index: 1, Profile: "C1", Values: []string{"1", "on"}, Repetition: 2},
		{Index: 2, Profile: "C1", Values: []string{"1", "off"}, Repetition: 1},
	}
	if diff := cmp.Diff(want, cells[:3]); diff != "" {
		t.Errorf("first cells (-want +got):\n%s", diff)
	}
	if last := cells[31]; last.Profile != "C2" || !reflect.DeepEqual(last.Values, []string{"8", "off"}) || last.Repetition != 2 {
		t.Errorf("last cell %+v", last)
	}
	names := map[string]bool{}
	for _, c := range cells {
		n := c.Name("bench-6")
		if names[n] || len(n) > 63 || n != strings.ToLower(n) {
			t.Errorf("child name %q repeats, is too long or not lower-case", n)
		}
		names[n] = true
	}
	if got := cells[5].Name("bench-6"); got != "bench-6-c1-5" {
		t.Errorf("name %q, want bench-6-c1-5 (pinned: a renamed child would run twice after an upgrade)", got)
	}
	if got := cells[0].ValueMap(p.Spec.Sweep); !reflect.DeepEqual(got, map[string]string{"WORKERS": "1", "SSL": "on"}) {
		t.Errorf("values %v", got)
	}
}

func TestChildSpec(t *testing.T) {
	p := bench()
	p.Spec.Sweep = append(p.Spec.Sweep,
		v1alpha1.SweepDimension{ScriptEnv: "THREADS", Values: []string{"32"}},
		v1alpha1.SweepDimension{Field: v1alpha1.SweepFieldDevices, Values: []string{"4000"}},
		v1alpha1.SweepDimension{Field: v1alpha1.SweepFieldParallelism, Values: []string{"3"}})
	p.Spec.Sweep = append(p.Spec.Sweep, v1alpha1.SweepDimension{Component: "web", Field: v1alpha1.SweepFieldTLS, Values: []string{"true"}})
	p.Spec.Capacity = &v1alpha1.CapacitySpec{PushPeriod: "30s"}
	before := p.Spec.DeepCopy()
	cells := Cells(&p.Spec)
	spec, err := ChildSpec(&p.Spec, cells[len(cells)-1]) // C2, WORKERS 8
	if err != nil {
		t.Fatal(err)
	}
	if spec.Profile != "C2" || spec.Parallelism.IntValue() != 3 || *spec.Load.Devices != 4000 || spec.Load.Period != "6s" {
		t.Errorf("profile %s parallelism %d load %+v", spec.Profile, spec.Parallelism.IntValue(), spec.Load)
	}
	if env := spec.Target.Components[1].Env; len(env) != 1 || env[0] != (corev1.EnvVar{Name: "WORKERS", Value: "8"}) {
		t.Errorf("app env %v: the sweep's WORKERS replaces the template's", env)
	}
	if tls := spec.Target.Components[0].TLS; tls == nil || !*tls || p.Spec.Template.Target.Components[0].TLS != nil {
		t.Errorf("web tls %v: the sweep turns it on in the child only", tls)
	}
	if got := cells[0].ValueMap(p.Spec.Sweep)["web.tls"]; got != "true" {
		t.Errorf("the tls dimension is shown as web.tls: %v", cells[0].ValueMap(p.Spec.Sweep))
	}
	if spec.Runner == nil || !reflect.DeepEqual(spec.Runner.Env, []corev1.EnvVar{{Name: "THREADS", Value: "32"}}) {
		t.Errorf("runner env %+v", spec.Runner)
	}
	if spec.Capacity == nil || spec.Capacity.PushPeriod != "30s" {
		t.Errorf("capacity %+v, want the plan's", spec.Capacity)
	}
	if diff := cmp.Diff(before, p.Spec.DeepCopy()); diff != "" {
		t.Errorf("ChildSpec changed the plan's template (-before +after):\n%s", diff)
	}
	p.Spec.Template.Capacity = &v1alpha1.CapacitySpec{PushPeriod: "10s"}
	if spec, _ := ChildSpec(&p.Spec, cells[0]); spec.Capacity.PushPeriod != "10s" {
		t.Errorf("the template's own capacity must win: %+v", spec.Capacity)
	}
}

func run(phase v1alpha1.TestRunPhase, verdict v1alpha1.Verdict, reason string) *v1alpha1.TestRun {
	return tw.MakeTestRun("child", "ns").Phase(phase, reason, "").Verdict(verdict).Obj()
}

func TestDecide(t *testing.T) {
	var (
		none    = Child{TargetGone: true}
		running = Child{Run: run(v1alpha1.PhaseRunning, "", v1alpha1.ReasonRunning)}
		passed  = Child{Run: run(v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted), TargetGone: true}
		knee    = Child{Run: run(v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed, v1alpha1.ReasonCompleted), TargetGone: true}
		lingers = Child{Run: run(v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted)}
		failed  = Child{Run: run(v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonRunnerOOMKilled), TargetGone: true}
		noProf  = Child{ProfileMissing: true, TargetGone: true}
	)
	serial := func(policy string) *v1alpha1.CapacityPlanSpec {
		return &v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"}, Repetitions: 4, Concurrency: v1alpha1.ConcurrencySerial, FailurePolicy: policy}
	}
	parallel := &v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"}, Repetitions: 4, Concurrency: v1alpha1.ConcurrencyParallel, MaxParallel: ptr.To[int32](2)}
	cases := []struct {
		name     string
		spec     *v1alpha1.CapacityPlanSpec
		children []Child
		create   []int
		phase    string
		reason   string
		done     int
		measured bool
	}{
		{"serial starts the first", serial(""), []Child{none, none, none, none}, []int{0}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 0, false},
		{"serial waits while one runs", serial(""), []Child{passed, running, none, none}, nil, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 1, false},
		{"serial waits for the target namespace", serial(""), []Child{passed, lingers, none, none}, nil, v1alpha1.PlanRunning, v1alpha1.ReasonWaitingForTargetNamespace, 2, false},
		{"serial goes on after a FAILED verdict", serial(v1alpha1.FailureStop), []Child{passed, knee, none, none}, []int{2}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 2, false},
		{"continue past a failed child", serial(v1alpha1.FailureContinue), []Child{failed, none, none, none}, []int{1}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 1, false},
		{"skip a missing profile", serial(""), []Child{noProf, none, none, none}, []int{1}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 1, false},
		{"stop on failure", serial(v1alpha1.FailureStop), []Child{passed, failed, none, none}, nil, v1alpha1.PlanFailed, v1alpha1.ReasonChildFailed, 2, false},
		{"stop on a missing profile", serial(v1alpha1.FailureStop), []Child{noProf, none, none, none}, nil, v1alpha1.PlanFailed, v1alpha1.ReasonChildFailed, 1, false},
		{"parallel fills its slots", parallel, []Child{none, none, none, none}, []int{0, 1}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 0, false},
		{"parallel refills one slot", parallel, []Child{passed, running, none, none}, []int{2}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 1, false},
		{"parallel does not wait for namespaces", parallel, []Child{lingers, lingers, none, none}, []int{2, 3}, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren, 2, false},
		{"all done", serial(""), []Child{passed, knee, passed, lingers}, nil, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted, 4, true},
		{"all done, one unmeasured", serial(""), []Child{passed, failed, passed, passed}, nil, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cells := Cells(tc.spec)
			d := Decide(tc.spec, cells, tc.children)
			var created []int
			for _, c := range d.Create {
				created = append(created, c.Index)
			}
			if !reflect.DeepEqual(created, tc.create) || d.Phase != tc.phase || d.Reason != tc.reason || d.Done != tc.done || d.Total != 4 || d.AllMeasured != tc.measured {
				t.Errorf("create %v phase %s reason %s done %d/%d measured %v; want %v %s %s %d/4 %v (%s)",
					created, d.Phase, d.Reason, d.Done, d.Total, d.AllMeasured, tc.create, tc.phase, tc.reason, tc.done, tc.measured, d.Message)
			}
			if d.Message == "" {
				t.Error("no message")
			}
			if tc.name == "stop on a missing profile" && !strings.Contains(d.Message, `cell 0: Profile "C1" does not exist`) {
				t.Errorf("message %q does not say which cell failed and why", d.Message)
			}
		})
	}
}

func TestRowsAndSummary(t *testing.T) {
	p := bench()
	cells := Cells(&p.Spec) // C1 × 1,2,4,8 then C2 × 1,2,4,8
	finished := func(verdict v1alpha1.Verdict, pushes string, ideal, safe int64) Child {
		r := run(v1alpha1.PhaseSucceeded, verdict, v1alpha1.ReasonCompleted)
		r.Status.Results = &v1alpha1.Results{Requests: &v1alpha1.RequestCounts{Total: 1000, Accepted: 990, Dropped: 10, DroppedPercent: "1.00"},
			Throughput: &v1alpha1.Throughput{RequestsPerSecond: "16.50"}, Latency: &v1alpha1.Latency{P95: "12.00"}}
		r.Status.Target = &v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{PeakMiB: 57}, CPU: &v1alpha1.CPUUsage{AverageCoresPerCore: "0.40"}}
		r.Status.Capacity = &v1alpha1.CapacityResult{PushesPerSecond: pushes, IdealMaxDevices: ideal, SafeMaxDevices: safe}
		return Child{Run: r, TargetGone: true}
	}
	children := []Child{
		finished(v1alpha1.VerdictPassed, "16.50", 495, 247),
		finished(v1alpha1.VerdictPassed, "31.00", 930, 465),
		finished(v1alpha1.VerdictFailed, "9.00", 270, 135), // the knee: not a passing row
		{Run: run(v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonRunnerOOMKilled), TargetGone: true},
		{ProfileMissing: true}, {}, {}, {},
	}
	rows := Rows(&p.Spec, "bench-6", cells, children)
	if r := rows[0]; r.TestRun != "bench-6-c1-0" || r.Values["WORKERS"] != "1" || r.RequestsAccepted != 990 || r.DroppedPercent != "1.00" ||
		r.RequestsPerSecond != "16.50" || r.Latency.P95 != "12.00" || r.MemoryPeakMiB != 57 || r.CPUPerCore != "0.40" || r.SafeMaxDevices != 247 {
		t.Errorf("row 0 = %+v", r)
	}
	if r := rows[3]; r.Phase != v1alpha1.PhaseFailed || r.Reason != v1alpha1.ReasonRunnerOOMKilled {
		t.Errorf("failed row = %+v", r)
	}
	if r := rows[4]; r.Phase != v1alpha1.PhaseFailed || r.Reason != v1alpha1.ReasonProfileNotFound || r.TestRun != "" {
		t.Errorf("missing-profile row = %+v", r)
	}
	if r := rows[5]; r.Phase != "" || r.TestRun != "bench-6-c2-5" {
		t.Errorf("waiting row = %+v", r)
	}
	sum := Summary(p.Spec.Profiles, rows)
	want := []v1alpha1.ProfileSummary{
		{Profile: "C1", Rows: 4, Passed: 2, PushesPerSecond: "16.50", IdealMaxDevices: 495, SafeMaxDevices: 247},
		{Profile: "C2", Rows: 4, Passed: 0},
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// TestFullTableStaysSmall: a plan of 256 cells with every column of every row at its widest
// (long names, four sweep dimensions, 13-digit counts) stays far under etcd's 1.5 MiB object
// limit, so the whole table lives in status (measured: 221 KiB; realistic rows are about half).
func TestFullTableStaysSmall(t *testing.T) {
	row := v1alpha1.CapacityRow{Profile: "c4-with-a-long-name", Repetition: 8, TestRun: strings.Repeat("n", 63),
		Values: map[string]string{"WORKERS": "128", "PAYLOAD_BYTES": "65536", "web.tls": "false", "devices": "1000000"},
		Phase:  v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictInconclusive, Reason: v1alpha1.ReasonRunnerFailedBeforeStart,
		RequestsAccepted: 1 << 40, RequestsDropped: 1 << 40, DroppedPercent: "100.00", RequestsPerSecond: "123456.78", PushesPerSecond: "123456.78",
		Latency: &v1alpha1.Latency{Min: "1234.56ms", Avg: "1234.56ms", P50: "1234.56ms", P90: "1234.56ms", P95: "1234.56ms", P99: "1234.56ms",
			Max: "1234.56ms", AboveAveragePercent: "100.0", BelowAveragePercent: "100.0"},
		MemoryPeakMiB: 1 << 20, CPUPerCore: "12.34", GeneratorBound: true, IdealMaxDevices: 1 << 40, TypicalMaxDevices: 1 << 40,
		SafeMaxDevices: 1 << 40, MaxSafeDevicesByMemory: 1 << 40, BreakingPointDevices: 1 << 40}
	st := v1alpha1.CapacityPlanStatus{Table: make([]v1alpha1.CapacityRow, 256)}
	for i := range st.Table {
		st.Table[i] = row
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 256<<10 {
		t.Errorf("a full 256-row table is %d KiB, over 256 KiB (a sixth of etcd's limit)", len(b)>>10)
	}
	t.Logf("a full 256-row table is %d KiB of JSON", len(b)>>10)
}
