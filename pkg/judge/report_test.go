package judge

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
	"fleetbench.dev/fleetbench/pkg/measure"
)

func merged(t *testing.T, loads ...tw.RunnerLoad) *measure.Summary {
	t.Helper()
	s, err := tw.Merged(loads...)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestBuild(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	ok := func(name string) tw.RunnerLoad {
		return tw.RunnerLoad{Runner: name, Requests: 500, Start: start, Duration: 100 * time.Second, CPUSeconds: 5}
	}
	slow := ok("r1")
	slow.LatencyMs = func(i int) float64 { return 400 }
	failing := ok("r1")
	failing.Failed = 50
	dropping := ok("r1")
	dropping.DroppedIterations = 7
	hot := ok("r1")
	hot.CPUSeconds = 99

	cases := []struct {
		name       string
		loads      []tw.RunnerLoad
		runners    int
		thresholds map[string]v1alpha1.ThresholdList
		verdict    v1alpha1.Verdict
		check      func(t *testing.T, o Outcome)
	}{
		{name: "two runners pass", loads: []tw.RunnerLoad{ok("r0"), ok("r1")}, runners: 2,
			thresholds: map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<200"}, "http_req_failed": {"rate<0.01"}},
			verdict:    v1alpha1.VerdictPassed,
			check: func(t *testing.T, o Outcome) {
				r := o.Results
				if r.Requests.Total != 1000 || r.Requests.Accepted != 1000 || r.Requests.DroppedPercent != "0.00" {
					t.Errorf("requests = %+v", r.Requests)
				}
				if r.Throughput.RequestsPerSecond != "10.00" {
					t.Errorf("1000 requests over 100 s = 10.00/s, got %s", r.Throughput.RequestsPerSecond)
				}
				if r.Latency.Min != "10.0ms" || r.Latency.Max != "14.0ms" || r.Partial {
					t.Errorf("latency = %+v partial=%v", r.Latency, r.Partial)
				}
				if len(r.Thresholds) != 2 || !r.Thresholds[0].Passed || !r.Thresholds[1].Passed {
					t.Errorf("thresholds = %+v", r.Thresholds)
				}
			}},
		{name: "merged p95 fails though one runner alone passes", loads: []tw.RunnerLoad{ok("r0"), slow}, runners: 2,
			thresholds: map[string]v1alpha1.ThresholdList{"http_req_duration": {"p(95)<200"}},
			verdict:    v1alpha1.VerdictFailed,
			check: func(t *testing.T, o Outcome) {
				if len(o.FailedThresholds) != 1 || !strings.Contains(o.FailedThresholds[0], "p(95)<200") {
					t.Errorf("failed thresholds = %v", o.FailedThresholds)
				}
			}},
		{name: "dropped requests counted", loads: []tw.RunnerLoad{ok("r0"), failing}, runners: 2,
			thresholds: map[string]v1alpha1.ThresholdList{"http_req_failed": {"rate<0.01"}},
			verdict:    v1alpha1.VerdictFailed,
			check: func(t *testing.T, o Outcome) {
				if o.Results.Requests.Dropped != 50 || o.Results.Requests.Accepted != 950 || o.Results.Requests.DroppedPercent != "5.00" {
					t.Errorf("requests = %+v", o.Results.Requests)
				}
			}},
		{name: "a missing runner makes results partial", loads: []tw.RunnerLoad{ok("r0")}, runners: 2,
			verdict: v1alpha1.VerdictInconclusive,
			check: func(t *testing.T, o Outcome) {
				if !o.Results.Partial {
					t.Error("want partial")
				}
			}},
		{name: "dropped iterations flag the generator", loads: []tw.RunnerLoad{ok("r0"), dropping}, runners: 2,
			verdict: v1alpha1.VerdictInconclusive,
			check: func(t *testing.T, o Outcome) {
				if !o.GeneratorBound || !strings.Contains(o.GeneratorBoundReason, "7 iterations dropped") || o.Results.Iterations.Dropped != 7 {
					t.Errorf("generatorBound=%v reason=%q", o.GeneratorBound, o.GeneratorBoundReason)
				}
			}},
		{name: "a saturated runner CPU flags the generator", loads: []tw.RunnerLoad{ok("r0"), hot}, runners: 2,
			verdict: v1alpha1.VerdictInconclusive,
			check: func(t *testing.T, o Outcome) {
				if !o.GeneratorBound || !strings.Contains(o.GeneratorBoundReason, "runner r1 used") {
					t.Errorf("generatorBound=%v reason=%q", o.GeneratorBound, o.GeneratorBoundReason)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Build(merged(t, tc.loads...), tc.thresholds, tc.runners)
			if verdictOf(o) != tc.verdict {
				t.Errorf("verdict = %s, want %s (failed %v, generator %q)", verdictOf(o), tc.verdict, o.FailedThresholds, o.GeneratorBoundReason)
			}
			tc.check(t, o)
		})
	}
}

func TestMillis(t *testing.T) {
	for ms, want := range map[float64]string{0.5: "0.50ms", 4.523: "4.52ms", 11: "11.0ms", 250.4: "250ms", 1250: "1.25s"} {
		if got := Millis(ms); got != want {
			t.Errorf("Millis(%v) = %q, want %q", ms, got, want)
		}
	}
}

// verdictOf is the verdict of merged results alone, as verdict.Decide gives it.
func verdictOf(o Outcome) v1alpha1.Verdict {
	return verdict.Decide(verdict.Facts{Merged: true, Results: o.Facts()}).Verdict
}
