package output

import (
	"strings"
	"testing"
	"time"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestOutputKeepsTheSlowestRequests: of 3 windows of HTTP and gRPC requests, the envelope has
// each window's 5 slowest, with their tags, start and trace id (sample metadata), and the run's.
func TestOutputKeepsTheSlowestRequests(t *testing.T) {
	o, stdout, start, clock := startedOnClock(t)
	reg := metrics.NewRegistry()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	grpc := reg.MustNewMetric("grpc_req_duration", metrics.Trend, metrics.Time)
	waiting := reg.MustNewMetric("http_req_waiting", metrics.Trend, metrics.Time)
	tags := reg.RootTagSet().With("scenario", "default").With("status", "200").With("method", "GET").
		With("name", "orders").With("url", "http://x/orders/"+strings.Repeat("9", 600))
	for i := range 300 {
		ts := start.Add(time.Duration(i) * 10 * time.Millisecond)
		var meta map[string]string
		if i == 123 {
			meta = map[string]string{"trace_id": "4BF92F3577B34DA6A3CE929D0E0E4736"}
		}
		o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples{
			{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: tags}, Time: ts, Value: float64(i % 100), Metadata: meta},
			// Not a request's duration: never among the slowest, however slow.
			{TimeSeries: metrics.TimeSeries{Metric: waiting, Tags: tags}, Time: ts, Value: 1e6},
		}})
	}
	grpcTags := reg.RootTagSet().With("status", "0").With("method", "/pkg.Svc/Call")
	o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples{
		{TimeSeries: metrics.TimeSeries{Metric: grpc, Tags: grpcTags}, Time: start.Add(2500 * time.Millisecond), Value: 500}}})
	*clock = start.Add(3 * time.Second)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	e, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if e.SlowestPerWindow != measure.DefaultSlowest || len(e.Slowest) != 3*measure.DefaultSlowest {
		t.Fatalf("K %d, %d slowest requests: %+v", e.SlowestPerWindow, len(e.Slowest), e.Slowest)
	}
	first := e.Slowest[0]
	// Window 0 holds i = 0..99, values i: its slowest is 99 ms, sampled at 990 ms.
	if first.DurationMillis != 99 || first.StartUnixNano != start.Add(990*time.Millisecond-99*time.Millisecond).UnixNano() ||
		first.Name != "orders" || first.Method != "GET" || first.Status != "200" || first.Scenario != "default" ||
		len(first.URL) != measure.MaxSlowURL || first.Key != start.Unix() {
		t.Errorf("window 0's slowest: %+v", first)
	}
	if last := e.Slowest[len(e.Slowest)-measure.DefaultSlowest]; last.DurationMillis != 500 || last.Method != "/pkg.Svc/Call" {
		t.Errorf("window 2's slowest is not the gRPC call: %+v", last)
	}
	// i = 123 (23 ms, the one traced request) is among neither list.
	var traced int
	for _, r := range append(e.Slowest, e.SlowestRun...) {
		if r.TraceID != "" {
			traced++
		}
	}
	if traced != 0 || len(e.SlowestRun) != measure.SlowestOfRun || e.SlowestRun[0].DurationMillis != 500 {
		t.Errorf("run's slowest: %d traced, %+v", traced, e.SlowestRun)
	}
}

func TestOutputKeepsATraceIDInLowerCase(t *testing.T) {
	o, stdout, start, clock := startedOnClock(t)
	reg := metrics.NewRegistry()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples{
		{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: reg.RootTagSet()}, Time: start, Value: 7,
			Metadata: map[string]string{"trace_id": "4BF92F3577B34DA6A3CE929D0E0E4736"}},
		{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: reg.RootTagSet()}, Time: start, Value: 8,
			Metadata: map[string]string{"trace_id": "<not hex>"}},
	}})
	*clock = start.Add(time.Second)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	e, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Slowest) != 2 || e.Slowest[0].TraceID != "" || e.Slowest[1].TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("slowest: %+v", e.Slowest)
	}
}

func TestOutputSlowestOff(t *testing.T) {
	o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_WINDOW": "1s", "K6_FLEETBENCH_SLOWEST": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.Collector.Slowest != 0 {
		t.Fatalf("K %d", o.cfg.Collector.Slowest)
	}
}
