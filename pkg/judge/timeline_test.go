package judge

import (
	"testing"
	"time"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// Two runners, three steps of load in 1 s windows: the timeline's windows are the runners'
// windows merged exactly, with rates, failures and quantiles per window.
func TestTimelineMergesTheRunnersWindows(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	steps := []tw.StepLoad{
		{From: 0, To: time.Second, Requests: 10, LatencyMs: 10},
		{From: time.Second, To: 2 * time.Second, Requests: 20, Failed: 4, LatencyMs: 50},
		{From: 2 * time.Second, To: 3 * time.Second, Requests: 30, LatencyMs: 200},
	}
	end := start.Add(3 * time.Second)
	s, err := measure.Merge(tw.LiveEnvelope("r0", start, time.Second, steps, end), tw.LiveEnvelope("r1", start, time.Second, steps, end))
	if err != nil {
		t.Fatal(err)
	}
	tl := BuildTimeline(&s, nil)
	if tl.Protocol != ProtocolHTTP || tl.WindowSeconds != 1 || len(tl.Windows) != 3 || len(tl.Runners) != 2 {
		t.Fatalf("timeline %+v: want http, 1 s windows, 3 windows, 2 runners", tl)
	}
	for i, want := range []struct {
		requests, failed uint64
		latency          float64
	}{{20, 0, 10}, {40, 8, 50}, {60, 0, 200}} {
		w := tl.Windows[i]
		if w.Requests != want.requests || w.Failed != want.failed || w.Iterations != want.requests || w.RequestsPerSecond != float64(want.requests) {
			t.Errorf("window %d: %+v, want %d requests/s, %d failed", i, w, want.requests, want.failed)
		}
		for _, q := range []float64{w.P50, w.P95, w.P99} {
			if q < want.latency*0.99 || q > want.latency*1.01 {
				t.Errorf("window %d: quantile %g ms, want %g", i, q, want.latency)
			}
		}
		if !w.Start.Equal(start.Add(time.Duration(i) * time.Second)) {
			t.Errorf("window %d starts %v", i, w.Start)
		}
	}
	var inBuckets uint64
	for _, b := range tl.Latency {
		inBuckets += b.Count
		if b.To <= b.From {
			t.Errorf("bucket %+v is empty or reversed", b)
		}
	}
	if inBuckets != 120 {
		t.Errorf("the histogram holds %d requests, want all 120", inBuckets)
	}
}

func TestThinTargetPointsKeepsTheEndsAndTheBound(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, n := range []int{1, MaxTargetPoints, MaxTargetPoints + 1, 48 * 120} { // 48 h sampled every 30 s
		points := make([]TargetPoint, n)
		for i := range points {
			points[i] = TargetPoint{At: start.Add(time.Duration(i) * 30 * time.Second), MemoryMiB: float64(i)}
		}
		got := ThinTargetPoints(points)
		if len(got) > MaxTargetPoints || got[0] != points[0] || got[len(got)-1] != points[n-1] {
			t.Errorf("%d points: kept %d, first %v, last %v", n, len(got), got[0].MemoryMiB, got[len(got)-1].MemoryMiB)
		}
		for i := 1; i < len(got); i++ {
			if !got[i].At.After(got[i-1].At) {
				t.Fatalf("%d points: point %d is not after the one before", n, i)
			}
		}
		if n > MaxTargetPoints && len(got) < MaxTargetPoints/2 {
			t.Errorf("%d points: thinned to %d, more than needed", n, len(got))
		}
	}
}

// Live progress: totals so far, the rate and p95 of the last complete window, and the share
// of the expected duration.
func TestProgressReadsTheLastCompleteWindow(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	steps := []tw.StepLoad{
		{From: 0, To: 10 * time.Second, Requests: 100, LatencyMs: 10},
		{From: 10 * time.Second, To: 20 * time.Second, Requests: 200, Failed: 20, LatencyMs: 40},
		{From: 20 * time.Second, To: 30 * time.Second, Requests: 300, LatencyMs: 90},
	}
	now := start.Add(25 * time.Second) // the third window is half full
	s, err := measure.Merge(tw.LiveEnvelope("r0", start, 10*time.Second, steps, now))
	if err != nil {
		t.Fatal(err)
	}
	p := Progress(&s, start, now, time.Minute)
	if p.Requests != 450 || p.Failed != 20 || p.ErrorPercent != "4.44" {
		t.Errorf("totals %+v, want 450 requests, 20 failed (4.44%%)", p)
	}
	if p.RequestsPerSecond != "20.00" || p.P95 != "40.0ms" {
		t.Errorf("last complete window: %s req/s, p95 %s; want 20.00 and 40.0ms", p.RequestsPerSecond, p.P95)
	}
	if p.Summary != "25s/1m0s 42%" || p.Elapsed != "25s" || p.Expected != "1m0s" {
		t.Errorf("summary %q (elapsed %s, expected %s)", p.Summary, p.Elapsed, p.Expected)
	}
	if unknown := Progress(&s, start, now, 0); unknown.Summary != "25s" || unknown.Expected != "" {
		t.Errorf("without an expected duration: %q", unknown.Summary)
	}
}

// arrivalRateRunner is one runner of an arrival-rate run as its envelope holds it: 100
// requests a second, and k6's once-a-second vus (the VUs inside an iteration at that instant:
// 0 or 1 against a fast target) and vus_max (the 50 VUs it pre-allocated), ticking at tick
// past each second.
func arrivalRateRunner(name string, start time.Time, window, tick time.Duration, seconds int, inUse []float64) measure.Envelope {
	c := measure.NewCollector(measure.CollectorConfig{Window: window, MaxWindows: 60}, start)
	ok := map[string]string{"scenario": "load", "expected_response": "true", "status_class": "2xx"}
	for s := range seconds {
		for r := range 100 {
			ts := start.Add(time.Duration(s)*time.Second + time.Duration(r)*10*time.Millisecond).UnixNano()
			c.Series("http_reqs", measure.Counter, "", ok).Add(ts, 1)
			c.Series("http_req_duration", measure.Trend, "time", ok).Add(ts, 1.2)
		}
		ts := start.Add(time.Duration(s)*time.Second + tick).UnixNano()
		c.Series("vus", measure.Gauge, "", nil).Add(ts, inUse[s])
		c.Series("vus_max", measure.Gauge, "", nil).Add(ts, 50)
	}
	e := c.Envelope(start.Add(time.Duration(seconds) * time.Second))
	e.Runner, e.Final = name, true
	return e
}

// The quickstart's shape: 2 runners of an arrival-rate scenario with 100 pre-allocated VUs. The
// VUs in use are each window's mean of the runners' samples, summed (not the last sample, 0
// whenever the tick fell between iterations); the VUs allocated are the 100.
func TestTimelineDrawsTheVUsInUseAndAllocated(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	a := arrivalRateRunner("r0", start, 2*time.Second, 300*time.Millisecond, 6, []float64{1, 0, 0, 1, 1, 1})
	b := arrivalRateRunner("r1", start, 2*time.Second, 800*time.Millisecond, 6, []float64{0, 0, 1, 0, 1, 0})
	s, err := measure.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	tl := BuildTimeline(&s, nil)
	if len(tl.Windows) != 3 {
		t.Fatalf("%d windows, want 3 of 2 s", len(tl.Windows))
	}
	for i, want := range []struct{ inUse, allocated float64 }{{0.5 + 0, 100}, {0.5 + 0.5, 100}, {1 + 0.5, 100}} {
		w := tl.Windows[i]
		if w.VUs != want.inUse || w.VUsMax != want.allocated {
			t.Errorf("window %d: %g VUs in use, %g allocated; want %g and %g", i, w.VUs, w.VUsMax, want.inUse, want.allocated)
		}
	}
}

// Windows narrower than k6's one-second sampling: a window no runner sampled holds the fleet's
// previous values, so neither line drops to 0 between samples; before the first sample and
// after the last there is none.
func TestTimelineHoldsTheVUsBetweenSamples(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	window := 250 * time.Millisecond
	a := arrivalRateRunner("r0", start, window, 100*time.Millisecond, 3, []float64{2, 4, 6})
	b := arrivalRateRunner("r1", start, window, 600*time.Millisecond, 3, []float64{1, 1, 1})
	s, err := measure.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	tl := BuildTimeline(&s, nil)
	if len(tl.Windows) != 12 {
		t.Fatalf("%d windows, want 12 of 250 ms", len(tl.Windows))
	}
	// a samples in windows 0, 4, 8; b in 2, 6, 10.
	inUse := []float64{2, 2, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7}
	allocated := []float64{50, 50, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	for i, w := range tl.Windows {
		if w.VUs != inUse[i] || w.VUsMax != allocated[i] {
			t.Errorf("window %d: %g VUs in use, %g allocated; want %g and %g", i, w.VUs, w.VUsMax, inUse[i], allocated[i])
		}
	}
}
