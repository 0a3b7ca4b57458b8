package testwrappers

import (
	"bytes"
	"fmt"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// RunnerLoad describes what one fake runner measured.
type RunnerLoad struct {
	Runner   string
	Requests int
	// Failed of the Requests count in http_req_failed.
	Failed int
	// LatencyMs gives request i the latency LatencyMs(i).
	LatencyMs         func(i int) float64
	DroppedIterations int
	// Sessions are iterations of a script that speaks no HTTP (XMPP over WebSocket), each
	// with one passed check.
	Sessions int
	// CPUSeconds the runner used over the run, on one core.
	CPUSeconds float64
	Start      time.Time
	Duration   time.Duration
	// MemoryMiB, when set, is the runner's resident memory at the end of its i-th 10 s window.
	MemoryMiB func(window int) float64
}

// Envelope folds a RunnerLoad through the same collector the runner's k6 output uses.
func Envelope(l RunnerLoad) measure.Envelope {
	if l.Duration == 0 {
		l.Duration = 10 * time.Second
	}
	if l.LatencyMs == nil {
		l.LatencyMs = func(i int) float64 { return float64(10 + i%5) }
	}
	c := measure.NewCollector(measure.CollectorConfig{Window: 10 * time.Second, MaxWindows: 64, MaxSeriesPerMetric: 32,
		Slowest: measure.DefaultSlowest}, l.Start)
	for i := 0; i < l.Requests; i++ {
		t := l.Start.Add(time.Duration(i) * l.Duration / time.Duration(max(l.Requests, 1))).UnixNano()
		failed := 0.0
		if i < l.Failed {
			failed = 1
		}
		c.Series("http_reqs", measure.Counter, "", nil).Add(t, 1)
		c.Series("http_req_failed", measure.Rate, "", nil).Add(t, failed)
		c.Series("http_req_duration", measure.Trend, "time", nil).Add(t, l.LatencyMs(i))
		c.Series("iterations", measure.Counter, "", nil).Add(t, 1)
		// As a script with trace context: every request traced, one trace each.
		if ms := l.LatencyMs(i); c.SlowAdmits(t, ms) {
			c.AddSlow(t, measure.SlowRequest{DurationMillis: ms, StartUnixNano: t - int64(ms*1e6), Name: "orders",
				URL: "http://target/orders", Method: "GET", Status: "200", Scenario: "default", TraceID: fmt.Sprintf("%032x", i+1)})
		}
	}
	for i := 0; i < l.Sessions; i++ {
		t := l.Start.Add(time.Duration(i) * l.Duration / time.Duration(l.Sessions)).UnixNano()
		c.Series("iterations", measure.Counter, "", nil).Add(t, 1)
		c.Series("checks", measure.Rate, "", nil).Add(t, 1)
	}
	if l.DroppedIterations > 0 {
		c.Series("dropped_iterations", measure.Counter, "", nil).Add(l.Start.UnixNano(), float64(l.DroppedIterations))
	}
	if l.CPUSeconds > 0 {
		c.AddCPU(l.Start.Add(l.Duration).UnixNano(), l.CPUSeconds)
	}
	if l.MemoryMiB != nil {
		for i := range int(l.Duration / (10 * time.Second)) {
			at := l.Start.Add(time.Duration(i+1)*10*time.Second - time.Millisecond)
			c.AddMemory(at.UnixNano(), int64(l.MemoryMiB(i)*(1<<20)))
		}
	}
	e := c.Envelope(l.Start.Add(l.Duration))
	e.Runner = l.Runner
	e.Final = true
	e.CPU.UserSeconds = l.CPUSeconds
	e.CPU.Cores = 1
	return e
}

// EnvelopeLog is a runner's log tail: some k6 output, then the encoded envelope.
func EnvelopeLog(l RunnerLoad) []byte {
	var buf bytes.Buffer
	buf.WriteString("time=\"...\" level=info msg=\"k6 output before the result\"\n")
	e := Envelope(l)
	if err := measure.Encode(&buf, &e); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// StepLoad is what one runner measured during part of a run: Requests spread evenly over
// [From, To) after the start, the first Failed of them failed, each taking LatencyMs.
type StepLoad struct {
	From, To  time.Duration
	Requests  int
	Failed    int
	LatencyMs float64
}

// LiveEnvelope is a runner's envelope so far (not final) at time upTo: the parts of its steps
// that happened before upTo, folded in windows of the given width, as a runner serves it live.
func LiveEnvelope(runner string, start time.Time, window time.Duration, steps []StepLoad, upTo time.Time) measure.Envelope {
	c := measure.NewCollector(measure.CollectorConfig{Window: window, MaxWindows: 1000, MaxSeriesPerMetric: 32}, start)
	for _, st := range steps {
		for i := 0; i < st.Requests; i++ {
			at := start.Add(st.From + time.Duration(i)*(st.To-st.From)/time.Duration(st.Requests))
			if !at.Before(upTo) {
				break
			}
			failed := 0.0
			if i < st.Failed {
				failed = 1
			}
			t := at.UnixNano()
			c.Series("http_reqs", measure.Counter, "", nil).Add(t, 1)
			c.Series("http_req_failed", measure.Rate, "", nil).Add(t, failed)
			c.Series("http_req_duration", measure.Trend, "time", nil).Add(t, st.LatencyMs)
			c.Series("iterations", measure.Counter, "", nil).Add(t, 1)
		}
	}
	e := c.Envelope(upTo)
	e.Runner = runner
	return e
}

// Merged is the fake runners' envelopes merged, as collection merges real ones.
func Merged(loads ...RunnerLoad) (measure.Summary, error) {
	envs := make([]measure.Envelope, 0, len(loads))
	for _, l := range loads {
		envs = append(envs, Envelope(l))
	}
	return measure.Merge(envs...)
}

// HostileEnvelopeLog is a log ending in a small, valid envelope built to take much memory when
// decoded: windows of a trend whose histograms each hold the smallest and the largest value, a
// few bytes per window gzip'd. Each decoded into a dense array over the whole bucket range
// (about 50 KiB); packed now, a window takes a few hundred bytes held and about 1 KiB to
// decode, so 60,000 windows (220 KiB of log) pass the limits of any envelope and 4,000 those
// of a run of many runners.
func HostileEnvelopeLog(runner string, windows int) []byte {
	var h measure.Agg
	h.Add(measure.Trend, 1e-9, 0)
	h.Add(measure.Trend, 1e18, 0)
	s := measure.Series{Windows: make([]measure.Window, windows)}
	for i := range s.Windows {
		s.Windows[i] = measure.Window{Key: int64(i), Agg: h}
	}
	e := measure.Envelope{Version: measure.Version, Runner: runner, Final: true, StartUnixNano: 1, EndUnixNano: 2,
		WindowNanos: int64(10 * time.Second), Accuracy: measure.RelativeAccuracy,
		Metrics: []measure.Metric{{Name: "http_req_duration", Type: measure.Trend, Contains: "time", Series: []measure.Series{s}}}}
	var buf bytes.Buffer
	if err := measure.Encode(&buf, &e); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
