package judge

import (
	"math"
	"slices"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// Timeline is a run over time, what the report's charts draw: the runners' windows merged
// exactly, the target's samples, each runner's own load, and the latency distribution. It is
// kept with the full result (timeline.json.gz). Its size is bounded whatever the run's length:
// runners coarsen their windows as a run grows (measure.CollectorConfig.MaxWindows), and target
// samples are thinned the same way (MaxTargetPoints).
type Timeline struct {
	// Protocol of the requests counted: http or grpc, as status.results.protocol.
	Protocol string `json:"protocol"`
	// WindowSeconds is the width of the windows.
	WindowSeconds float64 `json:"windowSeconds"`
	// LoadStart and LoadEnd mark the load: the first runner's start and the last runner's end.
	LoadStart time.Time        `json:"loadStart"`
	LoadEnd   time.Time        `json:"loadEnd"`
	Windows   []TimelineWindow `json:"windows"`
	// Target holds the target's samples, before the load, during it and after; empty when the
	// target was not measured (an external URL).
	Target []TargetPoint `json:"target,omitempty"`
	// TargetMemory says which memory the points hold: rss or workingSet.
	TargetMemory string      `json:"targetMemory,omitempty"`
	Runners      []RunnerRow `json:"runners"`
	// RunnerMemory is the memory of the runner status.runners.memory.trend is of (stability
	// runs): one runner, not the fleet, so its size is bounded at 5,000 runners.
	RunnerMemory *RunnerMemorySeries `json:"runnerMemory,omitempty"`
	// Latency is the distribution of request durations in log-spaced buckets.
	Latency []HistogramBucket `json:"latency,omitempty"`
	// Slowest are each window's slowest requests over the fleet and SlowestOfRun the run's
	// (measure.Summary's, bounded there): the report's table of them and its latency chart's dots.
	Slowest      []measure.SlowRequest `json:"slowest,omitempty"`
	SlowestOfRun []measure.SlowRequest `json:"slowestOfRun,omitempty"`
}

// TimelineWindow is one window of the merged run. Rates use the part of the window that lies
// inside the run, so the first and last windows are not understated.
type TimelineWindow struct {
	Start             time.Time `json:"start"`
	Requests          uint64    `json:"requests"`
	RequestsPerSecond float64   `json:"rps"`
	// Failed requests: http_req_failed, or gRPC calls whose status was not OK.
	Failed            uint64 `json:"failed"`
	Iterations        uint64 `json:"iterations"`
	DroppedIterations uint64 `json:"droppedIterations"`
	// VUs are the VUs in use (k6's vus: for an arrival-rate scenario the VUs inside an
	// iteration, for the others the active ones) and VUsMax the VUs allocated (vus_max), both
	// over the fleet: the sum of each runner's mean of its samples in the window (k6 samples
	// them once a second). A window without a sample (narrower than a second) holds the
	// previous window's values, as a gauge does.
	VUs    float64 `json:"vus"`
	VUsMax float64 `json:"vusMax"`
	// Latency quantiles of the window's requests, in milliseconds; zero without requests.
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// TargetPoint is one sample of the target, its containers summed.
type TargetPoint struct {
	At        time.Time `json:"at"`
	MemoryMiB float64   `json:"memoryMiB"`
	// Cores is the CPU the target used since the previous point (cores, not per core).
	Cores float64 `json:"cores"`
	// Restarts of target containers seen by this point.
	Restarts int32 `json:"restarts,omitempty"`
}

// RunnerRow is one runner's own load, to see a generator-bound run.
type RunnerRow struct {
	Name    string `json:"name"`
	Final   bool   `json:"final"`
	Aborted bool   `json:"aborted,omitempty"`
	Error   string `json:"error,omitempty"`
	// CPUUtilization is CPU seconds over (run seconds × usable cores), 0..1.
	CPUUtilization float64 `json:"cpuUtilization"`
	CPUSeconds     float64 `json:"cpuSeconds"`
	Cores          float64 `json:"cores"`
	MaxRSSMiB      float64 `json:"maxRSSMiB,omitempty"`
}

// HistogramBucket counts the requests whose duration lies in (From, To] milliseconds.
type HistogramBucket struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Count uint64  `json:"count"`
}

// MaxTargetPoints bounds Timeline.Target: past it every other point is dropped, so a 48-hour
// run keeps a sample every 24 minutes at worst and a 10-minute run every one.
const MaxTargetPoints = 240

// histogramBuckets is how many buckets Timeline.Latency has at most.
const histogramBuckets = 40

// BuildTimeline turns the merged summary into the run over time; target points come from the
// controller's samples.
func BuildTimeline(s *measure.Summary, target []TargetPoint) Timeline {
	req := requestsOf(s)
	t := Timeline{
		Protocol:      req.protocol,
		WindowSeconds: time.Duration(s.WindowNanos).Seconds(),
		LoadStart:     s.Start,
		LoadEnd:       s.End,
		Target:        ThinTargetPoints(target),
	}
	byStart := map[int64]*TimelineWindow{}
	at := func(start time.Time) *TimelineWindow {
		w := byStart[start.UnixNano()]
		if w == nil {
			w = &TimelineWindow{Start: start}
			byStart[start.UnixNano()] = w
		}
		return w
	}
	windowsOf := func(name string, fn func(w *TimelineWindow, st measure.Stats)) {
		if m := s.Metrics[name]; m != nil {
			for _, w := range m.Windows {
				fn(at(w.Start), w.Stats)
			}
		}
	}
	if req.protocol == ProtocolGRPC {
		for _, sr := range req.duration.Series {
			if !req.counts(sr) {
				continue
			}
			ok := sr.Tags["status"] == "0"
			for _, w := range sr.Windows {
				tw := at(w.Start)
				tw.Requests += w.Stats.Count
				if !ok {
					tw.Failed += w.Stats.Count
				}
			}
		}
	} else {
		windowsOf("http_reqs", func(w *TimelineWindow, st measure.Stats) { w.Requests = uint64(st.Sum) })
		windowsOf("http_req_failed", func(w *TimelineWindow, st measure.Stats) { w.Failed = st.Passes })
	}
	if req.duration != nil {
		for _, w := range req.duration.Windows {
			tw := at(w.Start)
			tw.P50, tw.P95, tw.P99 = w.Stats.Med, w.Stats.P95, w.Stats.P99
		}
	}
	windowsOf("iterations", func(w *TimelineWindow, st measure.Stats) { w.Iterations = uint64(st.Sum) })
	windowsOf("dropped_iterations", func(w *TimelineWindow, st measure.Stats) { w.DroppedIterations = uint64(st.Sum) })
	vus, vusMax := map[int64]bool{}, map[int64]bool{}
	windowsOf("vus", func(w *TimelineWindow, st measure.Stats) { w.VUs, vus[w.Start.UnixNano()] = st.Avg, true })
	windowsOf("vus_max", func(w *TimelineWindow, st measure.Stats) { w.VUsMax, vusMax[w.Start.UnixNano()] = st.Avg, true })

	width := time.Duration(s.WindowNanos)
	for _, w := range byStart {
		from, to := maxTime(w.Start, s.Start), minTime(w.Start.Add(width), s.End)
		if sec := to.Sub(from).Seconds(); sec > 0 {
			w.RequestsPerSecond = float64(w.Requests) / sec
		}
		t.Windows = append(t.Windows, *w)
	}
	slices.SortFunc(t.Windows, func(a, b TimelineWindow) int { return a.Start.Compare(b.Start) })
	holdGauge(t.Windows, vus, func(w *TimelineWindow) *float64 { return &w.VUs })
	holdGauge(t.Windows, vusMax, func(w *TimelineWindow) *float64 { return &w.VUsMax })

	for _, r := range s.Runners {
		t.Runners = append(t.Runners, RunnerRow{
			Name: r.Name, Final: r.Final, Aborted: r.Aborted, Error: r.Error,
			CPUUtilization: r.CPUUtilization, CPUSeconds: r.CPU.UserSeconds + r.CPU.SystemSeconds,
			Cores: r.CPU.Cores, MaxRSSMiB: float64(r.CPU.MaxRSSBytes) / (1 << 20),
		})
	}
	if req.duration != nil {
		t.Latency = latencyHistogram(&req.duration.Agg)
	}
	t.Slowest, t.SlowestOfRun = s.Slowest, s.SlowestOfRun
	return t
}

// holdGauge gives the windows after the first with a sample of a gauge (sampled says which, by
// start) that have none the value of the previous sampled one: no runner sampled the gauge in
// them, so each still holds its last value (measure's fleet means carry each runner alike, up
// to its end; after the last sample, the runners end within the second).
func holdGauge(windows []TimelineWindow, sampled map[int64]bool, field func(*TimelineWindow) *float64) {
	held, seen := 0.0, false
	for i := range windows {
		v := field(&windows[i])
		switch {
		case sampled[windows[i].Start.UnixNano()]:
			held, seen = *v, true
		case seen:
			*v = held
		}
	}
}

// latencyHistogram spreads a trend's distribution over log-spaced buckets between its min and
// max, counted from the exact merged histogram.
func latencyHistogram(a *measure.Agg) []HistogramBucket {
	if a.Count == 0 || a.Hist == nil {
		return nil
	}
	lo, hi := math.Max(a.Min, 0.001), math.Max(a.Max, 0.001)
	if hi <= lo {
		return []HistogramBucket{{From: 0, To: hi, Count: a.Count}}
	}
	ratio := math.Pow(hi/lo, 1.0/histogramBuckets)
	var out []HistogramBucket
	prevBelow := uint64(0)
	from := 0.0
	for i := 1; i <= histogramBuckets; i++ {
		to := lo * math.Pow(ratio, float64(i))
		below := a.Count
		if i < histogramBuckets {
			b, _ := a.Hist.CountBelowAbove(to)
			below = b
		}
		out = append(out, HistogramBucket{From: from, To: to, Count: below - min(prevBelow, below)})
		prevBelow, from = max(prevBelow, below), to
	}
	return out
}

// ThinTargetPoints keeps at most MaxTargetPoints, dropping every other point (never the first
// or the last) until they fit, so the spacing stays even as a run grows.
func ThinTargetPoints(points []TargetPoint) []TargetPoint {
	return thinEvenly(points, MaxTargetPoints)
}

// thinEvenly keeps at most limit points, dropping every other one (never the first or the
// last) until they fit, so the spacing stays even. It appends to a slice of its own: points
// is the caller's. A limit below 2 is 2: the first and the last always stay.
func thinEvenly[T any](points []T, limit int) []T {
	limit = max(limit, 2)
	for len(points) > limit {
		thinned := make([]T, 0, len(points)/2+2)
		for i := 0; i < len(points)-1; i += 2 {
			thinned = append(thinned, points[i])
		}
		thinned = append(thinned, points[len(points)-1])
		points = thinned
	}
	return points
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
