package measure

import (
	"testing"
	"time"
)

// gaugeRunner is one runner's envelope of k6's once-a-second vus and vus_max samples: ticks
// are the samples' offsets from start, inUse the vus value at each, allocated vus_max.
func gaugeRunner(name string, start time.Time, window time.Duration, ticks []time.Duration, inUse []float64, allocated float64) Envelope {
	c := NewCollector(CollectorConfig{Window: window, MaxWindows: 60}, start)
	for i, at := range ticks {
		ts := start.Add(at).UnixNano()
		c.Series("vus", Gauge, "", nil).Add(ts, inUse[i])
		c.Series("vus_max", Gauge, "", nil).Add(ts, allocated)
	}
	e := c.Envelope(start.Add(ticks[len(ticks)-1] + time.Millisecond))
	e.Runner, e.Final = name, true
	return e
}

func windowAvgs(s Summary, metric string) []float64 {
	var out []float64
	for _, w := range s.Metrics[metric].Windows {
		out = append(out, w.Stats.Avg)
	}
	return out
}

// An arrival-rate run's VUs, as k6 samples them once a second: vus counts the VUs inside an
// iteration at that instant (mostly 0 or 1 for a fast target), vus_max the VUs allocated. Per
// window the fleet's figure is the sum of each runner's mean; a runner whose tick fell in the
// next window still counts with its previous value, until its last sample.
func TestFleetGaugesAreTheSumOfTheRunnersMeansPerWindow(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	ms := time.Millisecond
	// a's tick drifted: two samples in window 2, none in window 3.
	a := gaugeRunner("a", start, time.Second, []time.Duration{500 * ms, 1500 * ms, 2100 * ms, 2990 * ms, 4010 * ms}, []float64{0, 1, 0, 2, 0}, 50)
	// b ended after window 2.
	b := gaugeRunner("b", start, time.Second, []time.Duration{700 * ms, 1700 * ms, 2700 * ms}, []float64{1, 0, 1}, 50)
	for _, order := range [][]Envelope{{a, b}, {b, a}} {
		s, err := Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			metric string
			want   []float64
		}{
			// window 3: a holds its mean of window 2, (0+2)/2; b has ended. Window 4: a alone.
			{"vus", []float64{0 + 1, 1 + 0, 1 + 1, 1, 0}},
			{"vus_max", []float64{100, 100, 100, 50, 50}},
		} {
			got := windowAvgs(s, tc.metric)
			if len(got) != 4 {
				// window 3 has no sample at all: the merge keeps the windows some runner sampled.
				t.Fatalf("%s: %d windows %v, want 4 (window 3 unsampled)", tc.metric, len(got), got)
			}
			want := []float64{tc.want[0], tc.want[1], tc.want[2], tc.want[4]}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s window %d: fleet mean %g, want %g (all %v)", tc.metric, i, got[i], want[i], got)
				}
			}
		}
		// The whole run: each runner's mean of its samples, summed.
		if got, want := s.Metrics["vus"].Stats.Avg, 3.0/5+2.0/3; got != want {
			t.Errorf("vus whole-run fleet mean %g, want %g", got, want)
		}
		if got := s.Metrics["vus_max"].Stats.Avg; got != 100 {
			t.Errorf("vus_max whole-run fleet mean %g, want 100", got)
		}
		if got := s.Metrics["vus_max"].Series[0].Windows[1].Stats.Avg; got != 100 {
			t.Errorf("vus_max series window 1: %g, want 100 (series agree with the metric)", got)
		}
	}
}

// A runner the merge met only in a window it skipped still counts, carried from its last
// sample: here b's ticks land in windows 0 and 2, a's in 0, 1 and 2.
func TestFleetGaugeCarriesARunnerThroughAWindowItSkipped(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	ms := time.Millisecond
	a := gaugeRunner("a", start, time.Second, []time.Duration{100 * ms, 1100 * ms, 2100 * ms}, []float64{0, 0, 0}, 40)
	b := gaugeRunner("b", start, time.Second, []time.Duration{999 * ms, 2001 * ms}, []float64{0, 0}, 60)
	s, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := windowAvgs(s, "vus_max")
	want := []float64{100, 100, 100}
	if len(got) != len(want) {
		t.Fatalf("vus_max windows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("vus_max window %d: %g, want %g (all %v)", i, got[i], want[i], got)
		}
	}
	// Value stays what it was: the sum of the runners' last samples in the window.
	if v := s.Metrics["vus_max"].Windows[1].Stats.Value; v != 40 {
		t.Errorf("vus_max window 1 value %g, want 40 (only a sampled it)", v)
	}
}

// Runners of different widths (a replacement that coarsened less) merge onto the widest grid,
// each with its mean over the wide window.
func TestFleetGaugeMeansAcrossWidths(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	s := time.Second
	a := gaugeRunner("a", start, s, []time.Duration{0, s, 2 * s, 3 * s}, []float64{2, 4, 6, 8}, 10)
	b := gaugeRunner("b", start, 2*s, []time.Duration{0, s, 2 * s, 3 * s}, []float64{1, 1, 3, 3}, 10)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := windowAvgs(m, "vus")
	want := []float64{3 + 1, 7 + 3}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("vus over 2 s windows: %v, want %v", got, want)
	}
}

// Any other gauge's Avg is the mean of its samples, over every runner: one quantity every
// runner observes.
func TestCustomGaugeAvgIsTheMeanOfItsSamples(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	runner := func(name string, v float64) Envelope {
		c := NewCollector(DefaultCollectorConfig, start)
		c.Series("queue_depth", Gauge, "", nil).Add(start.UnixNano(), v)
		e := c.Envelope(start.Add(time.Second))
		e.Runner, e.Final = name, true
		return e
	}
	s, err := Merge(runner("a", 2), runner("b", 6))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Metrics["queue_depth"].Stats.Avg; got != 4 {
		t.Errorf("queue_depth avg %g, want 4", got)
	}
}

// Split by a kept tag (a threshold names it), each series is the fleet's sum of its runners'
// means, and the metric the runners' means of all their samples.
func TestFleetGaugeSeriesSplitByATag(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	runner := func(name string, a, b float64) Envelope {
		c := NewCollector(CollectorConfig{Window: time.Second, MaxWindows: 60}, start)
		c.Series("vus", Gauge, "", map[string]string{"zone": "a"}).Add(start.UnixNano(), a)
		c.Series("vus", Gauge, "", map[string]string{"zone": "b"}).Add(start.UnixNano(), b)
		e := c.Envelope(start.Add(time.Second))
		e.Runner, e.Final = name, true
		return e
	}
	s, err := Merge(runner("r0", 2, 4), runner("r1", 6, 8))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Metrics["vus"]
	if got := m.Windows[0].Stats.Avg; got != 3+7 {
		t.Errorf("vus: %g, want (2+4)/2 + (6+8)/2", got)
	}
	for _, sr := range m.Series {
		want := map[string]float64{"a": 2 + 6, "b": 4 + 8}[sr.Tags["zone"]]
		if sr.Windows[0].Stats.Avg != want || sr.Stats.Avg != want {
			t.Errorf("vus{zone:%s}: window %g, whole %g, want %g", sr.Tags["zone"], sr.Windows[0].Stats.Avg, sr.Stats.Avg, want)
		}
	}
}
