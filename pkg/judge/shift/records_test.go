package shift

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// record is run i's kept record with the given whole-run values.
func record(i int, release string, values map[string]float64) compare.Record {
	r := compare.Record{Run: compare.RunRef{Name: fmt.Sprintf("ingest-%02d", i), UID: fmt.Sprintf("uid-%d", i),
		CompletionTime: t0.Add(time.Duration(i) * time.Hour), Labels: map[string]string{"test": "ingest"}, Verdict: "PASSED"}}
	if release != "" {
		r.Run.Labels["release"] = release
	}
	for _, name := range BuiltinMetrics() {
		if v, ok := values[name]; ok {
			r.Series = append(r.Series, compare.Series{Name: name, Whole: v})
		}
	}
	return r
}

func names(rs []compare.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Run.Name)
	}
	return out
}

func TestSort(t *testing.T) {
	rs := []compare.Record{record(2, "v1.10.0", nil), record(0, "v1.9.2", nil), record(1, "", nil), record(3, "v1.9.10", nil)}
	got, skipped, err := Sort(rs, OrderCompletion)
	if err != nil || !reflect.DeepEqual(names(got), []string{"ingest-00", "ingest-01", "ingest-02", "ingest-03"}) || len(skipped) != 0 {
		t.Errorf("by completion: %v %v %v", names(got), names(skipped), err)
	}
	got, skipped, err = Sort(rs, "label:release")
	if err != nil || !reflect.DeepEqual(names(got), []string{"ingest-00", "ingest-03", "ingest-02"}) || !reflect.DeepEqual(names(skipped), []string{"ingest-01"}) {
		t.Errorf("by release: %v, skipped %v, %v", names(got), names(skipped), err)
	}
	for _, bad := range []string{"label:", "time"} {
		if _, _, err := Sort(rs, bad); err == nil {
			t.Errorf("order %q: no error", bad)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.9", "1.10", -1}, {"v2.0.0", "1.99.99", 1}, {"v1.2.3", "1.2.3", 1}, {"1.2", "1.2.0", -1},
		{"2026-01-03", "2026-01-02", 1}, {"1.2.0-rc1", "1.2.0-rc2", -1}, {"1.2.0", "1.2.x", -1},
		{"beta", "alpha", 1}, {"7", "7", 0},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Throughput falls 20 % from run 12 on, latency rises from run 14; memory is absent from the
// first runs (older records without the target), CPU never shifts.
func TestAnalyze(t *testing.T) {
	rps := series(21, 20, 1000, 0.02, -0.2, 12)
	p95 := series(22, 20, 50, 0.02, 0.3, 14)
	cpu := series(23, 20, 0.5, 0.03, 0)
	var rs []compare.Record
	for i := range 20 {
		v := map[string]float64{compare.SeriesThroughput: rps[i], compare.SeriesLatencyP95: p95[i], compare.SeriesTargetCPU: cpu[i]}
		if i >= 4 {
			v[compare.SeriesTargetMemory] = 300
			if i >= 10 {
				v[compare.SeriesTargetMemory] = 360
			}
		}
		rs = append(rs, record(i, "", v))
	}
	tr := Analyze(rs, nil, Options{})
	got := map[string][]int{}
	for _, m := range tr.Metrics {
		got[m.Name] = indices(m.ChangePoints)
	}
	want := map[string][]int{compare.SeriesThroughput: {12}, compare.SeriesLatencyP95: {14}, compare.SeriesTargetMemory: {10}, compare.SeriesTargetCPU: {}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("change points %v, want %v", got, want)
	}
	mem := tr.Metrics[2]
	if mem.Name != compare.SeriesTargetMemory || len(mem.Values) != 16 || mem.Values[0].Run != 4 {
		t.Errorf("memory %+v, want 16 values from run 4", mem)
	}
	if cp := tr.Metrics[0].ChangePoints[0]; cp.Direction != Worse || cp.ShiftPercent > -15 {
		t.Errorf("throughput %+v, want about -20 %% worse", cp)
	}

	shifts := RecentShifts(rs, 7, Options{})
	if len(shifts) != 1 || shifts[0].Metric != compare.SeriesLatencyP95 || shifts[0].Run != "ingest-14" || shifts[0].Direction != Worse {
		t.Errorf("last 7 runs: %+v, want latencyP95 from ingest-14, worse", shifts)
	}
	if got := tr.Recent(10); len(got) != 3 || got[0].Run != "ingest-10" || got[2].Run != "ingest-14" {
		t.Errorf("last 10 runs: %+v, want memory, throughput, latency", got)
	}
}

// A k6 metric kept with two stats is two metrics; one named that no record has is none.
func TestAnalyzeNamedMetrics(t *testing.T) {
	var rs []compare.Record
	for i := range 12 {
		r := record(i, "", nil)
		level := 10.0
		if i >= 6 {
			level = 15
		}
		r.Series = append(r.Series,
			compare.Series{Name: "http_req_duration{name:upload}", Stat: "p95", Whole: level + float64(i%2)*0.1},
			compare.Series{Name: "http_req_duration{name:upload}", Stat: "avg", Whole: 5 + float64(i%3)*0.1})
		rs = append(rs, r)
	}
	tr := Analyze(rs, []string{"http_req_duration{name:upload}", "nothing"}, Options{})
	if len(tr.Metrics) != 2 || tr.Metrics[0].Stat != "p95" || tr.Metrics[1].Stat != "avg" {
		t.Fatalf("metrics %+v, want p95 and avg", tr.Metrics)
	}
	if got := indices(tr.Metrics[0].ChangePoints); !reflect.DeepEqual(got, []int{6}) || tr.Metrics[0].ChangePoints[0].Direction != "" {
		t.Errorf("p95 %+v, want a change at 6 without a direction (a k6 metric's is not known)", tr.Metrics[0].ChangePoints)
	}
	if len(tr.Metrics[1].ChangePoints) != 0 {
		t.Errorf("avg %+v, want none", tr.Metrics[1].ChangePoints)
	}
}

// TestAnalyzeIgnoresTargetCPUBelowItsNoiseFloor: an idle target's CPU stepping from 2 % to 3 %
// of a core is significant and meaningless: not reported. The same 50 % step of a busy target
// (0.4 to 0.6 cores) is.
func TestAnalyzeIgnoresTargetCPUBelowItsNoiseFloor(t *testing.T) {
	for _, tc := range []struct {
		low, high float64
		want      []int
	}{{0.02, 0.03, []int{}}, {0.4, 0.6, []int{10}}} {
		var rs []compare.Record
		for i := range 20 {
			v := tc.low
			if i >= 10 {
				v = tc.high
			}
			rs = append(rs, record(i, "", map[string]float64{compare.SeriesTargetCPU: v + 0.0001*float64(i%3)}))
		}
		tr := Analyze(rs, []string{compare.SeriesTargetCPU}, Options{})
		if got := indices(tr.Metrics[0].ChangePoints); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%.2f -> %.2f cores: change points %v, want %v", tc.low, tc.high, got, tc.want)
		}
	}
}
