package output

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// Samples fed programmatically, as k6's output manager would, come out as
// exact counts in the envelope.
func TestOutputFoldsSamplesIntoEnvelope(t *testing.T) {
	o, stdout, start, clock := startedOnClock(t)

	reg := metrics.NewRegistry()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	reqs := reg.MustNewMetric("http_reqs", metrics.Counter)
	checks := reg.MustNewMetric("checks", metrics.Rate)
	vus := reg.MustNewMetric("vus", metrics.Gauge)
	root := reg.RootTagSet().With("scenario", "default")
	ok := root.With("status", "200").With("expected_response", "true").With("name", "http://x/a")
	fail := root.With("status", "503").With("expected_response", "false").With("name", "http://x/b")

	o.SetThresholds(map[string]metrics.Thresholds{"http_req_duration": {Thresholds: []*metrics.Threshold{{Source: "p(95)<500"}}}})
	for i := 0; i < 300; i++ {
		ts := start.Add(time.Duration(i) * 10 * time.Millisecond)
		tags := ok
		if i%10 == 0 {
			tags = fail
		}
		o.AddMetricSamples([]metrics.SampleContainer{
			metrics.ConnectedSamples{Samples: []metrics.Sample{
				{TimeSeries: metrics.TimeSeries{Metric: reqs, Tags: tags}, Time: ts, Value: 1},
				{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: tags}, Time: ts, Value: float64(i % 100)},
			}},
			metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: checks, Tags: root.With("check", "is 200")}, Time: ts, Value: map[bool]float64{true: 1, false: 0}[i%10 != 0]},
			metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: vus, Tags: reg.RootTagSet()}, Time: ts, Value: 4},
		})
	}
	*clock = start.Add(3 * time.Second)
	if err := o.StopWithTestError(errors.New("aborted by signal")); err != nil {
		t.Fatal(err)
	}
	// A second stop (k6 may call both paths) prints nothing more.
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stdout.String(), measure.BeginMarker); n != 1 {
		t.Fatalf("%d envelopes printed", n)
	}
	e, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !e.Final || !e.Aborted || e.Error != "aborted by signal" || e.Runner != "r1" || e.WindowNanos != int64(time.Second) {
		t.Fatalf("envelope header: %+v", e)
	}
	s, err := measure.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Metrics["http_reqs"].Stats.Count; got != 300 {
		t.Errorf("http_reqs = %d", got)
	}
	d := s.Metrics["http_req_duration"]
	if d.Stats.Count != 300 || d.Contains != "time" || d.Stats.Max != 99 || len(d.Windows) != 3 {
		t.Errorf("duration: %+v, %d windows", d.Stats, len(d.Windows))
	}
	// URL names are dropped; status codes become classes.
	want := map[string]uint64{"2xx": 270, "5xx": 30}
	for _, sr := range d.Series {
		if _, has := sr.Tags["name"]; has || sr.Stats.Count != want[sr.Tags["status_class"]] {
			t.Errorf("series %v: %d", sr.Tags, sr.Stats.Count)
		}
	}
	if len(s.Checks) != 1 || s.Checks[0].Passes != 270 || s.Checks[0].Fails != 30 {
		t.Errorf("checks: %+v", s.Checks)
	}
	if s.Metrics["vus"].Stats.Value != 4 {
		t.Errorf("vus: %+v", s.Metrics["vus"].Stats)
	}
	if len(s.Thresholds) != 1 || !s.Thresholds[0].Passed {
		t.Errorf("thresholds: %+v", s.Thresholds)
	}
	if e.CPU.Cores <= 0 || e.CPU.MaxRSSBytes <= 0 {
		t.Errorf("cpu: %+v", e.CPU)
	}
}

// startedOnClock starts runner r1's output with 1 s windows, printing to the returned buffer,
// on a clock that reads start until the test sets it.
func startedOnClock(t *testing.T) (o *Output, stdout *bytes.Buffer, start time.Time, clock *time.Time) {
	t.Helper()
	stdout = &bytes.Buffer{}
	o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_WINDOW": "1s", "K6_FLEETBENCH_RUNNER": "r1"}, StdOut: stdout})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Unix(1_700_000_000, 0)
	now := start
	clock = &now
	o.now = func() time.Time { return *clock }
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	return o, stdout, start, clock
}

func TestConfigFromEnvRejectsBadValues(t *testing.T) {
	for _, env := range []map[string]string{
		{"K6_FLEETBENCH_WINDOW": "ten"},
		{"K6_FLEETBENCH_WINDOW": "1ms"},
		{"K6_FLEETBENCH_MAX_WINDOWS": "1"},
		{"K6_FLEETBENCH_CHECKPOINT": "-1s"},
		{"K6_FLEETBENCH_SLOWEST": "51"},
		{"K6_FLEETBENCH_SLOWEST": "-1"},
	} {
		if _, err := ConfigFromEnv(env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	c, err := ConfigFromEnv(map[string]string{"POD_NAME": "runner-0", "K6_FLEETBENCH_MAX_SERIES": "7"})
	if err != nil || c.Runner != "runner-0" || c.Collector.MaxSeriesPerMetric != 7 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestStatusClass(t *testing.T) {
	for in, want := range map[string]string{"200": "2xx", "404": "4xx", "0": "error", "abc": "other", "999": "other"} {
		if got := statusClass(in); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
}

// BenchmarkAddMetricSamples measures the per-sample folding cost, the only
// work the output adds to k6's hot path.
// BenchmarkAddMetricSamples is the output's cost per sample, with the slowest requests kept
// (the default K) and not (K6_FLEETBENCH_SLOWEST=0): requests of log-normal durations at
// 10,000 a second, so windows fill and roll over as in a load test.
func BenchmarkAddMetricSamples(b *testing.B) {
	for _, k := range []string{"0", "5"} {
		b.Run("slowest="+k, func(b *testing.B) { benchmarkAddMetricSamples(b, k) })
	}
}

func benchmarkAddMetricSamples(b *testing.B, slowest string) {
	o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_SLOWEST": slowest}, StdOut: &bytes.Buffer{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Start(); err != nil {
		b.Fatal(err)
	}
	defer o.Stop() //nolint:errcheck
	reg := metrics.NewRegistry()
	names := []string{"http_req_duration", "http_req_waiting", "http_req_connecting", "http_req_sending", "http_req_receiving", "http_req_blocked", "http_req_tls_handshaking"}
	tags := reg.RootTagSet().With("scenario", "load").With("status", "200").With("expected_response", "true").
		With("name", "http://127.0.0.1:18089/").With("url", "http://127.0.0.1:18089/").With("method", "GET")
	batch := make([]metrics.Sample, 0, len(names)+1)
	now := time.Now()
	for i, n := range names {
		batch = append(batch, metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: reg.MustNewMetric(n, metrics.Trend, metrics.Time), Tags: tags}, Time: now, Value: float64(i) + 0.37})
	}
	batch = append(batch, metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: reg.MustNewMetric("http_reqs", metrics.Counter), Tags: tags}, Time: now, Value: 1})
	containers := []metrics.SampleContainer{metrics.ConnectedSamples{Samples: batch}}
	r := rand.New(rand.NewSource(1))
	durations := make([]float64, 4096)
	for i := range durations {
		durations[i] = math.Exp(r.NormFloat64()*0.8 + 1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := now.Add(time.Duration(i) * 100 * time.Microsecond)
		for j := range batch {
			batch[j].Time = t
		}
		batch[0].Value = durations[i%len(durations)]
		o.AddMetricSamples(containers)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
}
