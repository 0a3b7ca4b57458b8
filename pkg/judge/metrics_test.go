package judge

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// collected folds samples the way a runner does and merges the one envelope.
func collected(t *testing.T, cfg measure.CollectorConfig, add func(c *measure.Collector, at int64)) *measure.Summary {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	c := measure.NewCollector(cfg, start)
	add(c, start.UnixNano())
	e := c.Envelope(start.Add(10 * time.Second))
	e.Runner, e.Final, e.Tags = "r0", true, append([]string{"name"}, measure.KeptTags...)
	s, err := measure.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

// A seed 001 run: agents answer gRPC, no HTTP. Calls are the requests; a call whose status is
// not OK (0) is dropped; latency is grpc_req_duration's.
func TestGRPCCallsAreTheRequests(t *testing.T) {
	s := collected(t, measure.DefaultCollectorConfig, func(c *measure.Collector, at int64) {
		ok := c.Series("grpc_req_duration", measure.Trend, "time", map[string]string{"scenario": "agents", "status": "0"})
		unavailable := c.Series("grpc_req_duration", measure.Trend, "time", map[string]string{"scenario": "agents", "status": "14"})
		for i := range 90 {
			ok.Add(at+int64(i), 4)
		}
		for i := range 10 {
			unavailable.Add(at+int64(i), 40)
		}
		c.Series("iterations", measure.Counter, "", map[string]string{"scenario": "agents"}).Add(at, 100)
	})
	o := Build(s, nil, 1)
	r := o.Results
	if r.Protocol != ProtocolGRPC || r.Requests.Total != 100 || r.Requests.Dropped != 10 || r.Requests.DroppedPercent != "10.00" {
		t.Errorf("protocol %s requests %+v", r.Protocol, r.Requests)
	}
	if r.Throughput.RequestsPerSecond != "10.00" || r.Latency == nil || r.Latency.P50 != "4.00ms" || r.Latency.Max != "40.0ms" {
		t.Errorf("throughput %+v latency %+v", r.Throughput, r.Latency)
	}
	// p95 is 40 ms within the histogram's 0.5 %.
	if len(r.Scenarios) != 1 || r.Scenarios[0] != (v1alpha1.ScenarioResult{Name: "agents", Requests: 100, Iterations: 100, RequestsPerSecond: "10.00", P95: "39.8ms"}) {
		t.Errorf("scenarios %+v", r.Scenarios)
	}
}

// k6 sometimes times its own reflection RPC (no method tag): where the script's calls carry
// their method, only they are requests.
func TestGRPCReflectionIsNoRequest(t *testing.T) {
	s := collected(t, measure.DefaultCollectorConfig, func(c *measure.Collector, at int64) {
		push := c.Series("grpc_req_duration", measure.Trend, "time", map[string]string{"scenario": "agents", "status": "0", "method": "/fleetbench.sut.v1.GoalState/Push"})
		reflection := c.Series("grpc_req_duration", measure.Trend, "time", map[string]string{"scenario": "agents", "status": "0"})
		for i := range 160 {
			push.Add(at+int64(i), 3)
		}
		reflection.Add(at, 1)
	})
	r := Build(s, nil, 1).Results
	if r.Protocol != ProtocolGRPC || r.Requests.Total != 160 || r.Requests.Dropped != 0 {
		t.Errorf("requests %+v, want the script's 160 calls", r.Requests)
	}
	if len(r.Scenarios) != 1 || r.Scenarios[0].Requests != 160 {
		t.Errorf("scenarios %+v, want 160 requests", r.Scenarios)
	}
}

// Every metric appears with the values k6's summary prints for its type; scenarios split
// requests and iterations; checks keep their names.
func TestEveryMetricAndScenarioIsListed(t *testing.T) {
	s := collected(t, measure.DefaultCollectorConfig, func(c *measure.Collector, at int64) {
		for _, sc := range []struct {
			name string
			n    int
			ms   float64
		}{{"ingestion", 30, 5}, {"consumption", 10, 50}} {
			tags := map[string]string{"scenario": sc.name, "expected_response": "true"}
			d := c.Series("http_req_duration", measure.Trend, "time", tags)
			reqs := c.Series("http_reqs", measure.Counter, "", tags)
			for i := range sc.n {
				d.Add(at+int64(i), sc.ms)
				reqs.Add(at+int64(i), 1)
			}
			c.Series("iterations", measure.Counter, "", map[string]string{"scenario": sc.name}).Add(at, float64(sc.n))
		}
		lapse := c.Series("time_lapse", measure.Trend, "", nil)
		for i := 1; i <= 100; i++ {
			lapse.Add(at+int64(i), float64(i))
		}
		c.Series("errors", measure.Counter, "", nil).Add(at, 3)
		c.Series("data_received", measure.Counter, "data", nil).Add(at, 1_250_000)
		c.Series("vus", measure.Gauge, "", nil).Add(at, 7)
		check := c.Series("checks", measure.Rate, "", map[string]string{"check": "stored"})
		check.Add(at, 1)
		check.Add(at, 0)
	})
	r := Build(s, nil, 1).Results
	byName := map[string]v1alpha1.MetricResult{}
	var names []string
	for _, m := range r.Metrics {
		byName[m.Name] = m
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "checks,data_received,errors,http_req_duration,http_reqs,iterations,time_lapse,vus" {
		t.Errorf("metrics %v", names)
	}
	if m := byName["time_lapse"]; m.Type != "trend" || m.Unit != "" || m.Samples != 100 || m.Avg != "50.5" || m.Min != "1" || m.Max != "100" {
		t.Errorf("time_lapse %+v", m)
	}
	if m := byName["http_req_duration"]; m.Unit != "ms" || m.Samples != 40 {
		t.Errorf("http_req_duration %+v", m)
	}
	if m := byName["errors"]; m.Type != "counter" || m.Count != "3" || m.Rate != "0.3" {
		t.Errorf("errors %+v", m)
	}
	if m := byName["data_received"]; m.Unit != "bytes" || m.Count != "1250000" || r.Throughput.ReceivedMbps != "1.00" {
		t.Errorf("data_received %+v, %s Mb/s (10 Mbit over 10 s is 1.00)", m, r.Throughput.ReceivedMbps)
	}
	if m := byName["vus"]; m.Value != "7" || byName["checks"].Passes != 1 || byName["checks"].Fails != 1 || byName["checks"].Rate != "0.5" {
		t.Errorf("vus %+v checks %+v", m, byName["checks"])
	}
	want := []v1alpha1.ScenarioResult{
		{Name: "consumption", Requests: 10, Iterations: 10, RequestsPerSecond: "1.00", P95: "50.0ms"},
		{Name: "ingestion", Requests: 30, Iterations: 30, RequestsPerSecond: "3.00", P95: "5.00ms"},
	}
	if len(r.Scenarios) != 2 || r.Scenarios[0] != want[0] || r.Scenarios[1] != want[1] {
		t.Errorf("scenarios %+v, want %+v", r.Scenarios, want)
	}
	if r.Checks == nil || len(r.Checks.ByName) != 1 || r.Checks.ByName[0] != (v1alpha1.NamedCheck{Name: "stored", Passed: 1, Failed: 1}) {
		t.Errorf("checks %+v", r.Checks)
	}
}

// A tag with more values than the runner keeps series for is named in a warning, and the
// totals still count every sample.
func TestOverflowingTagIsNamed(t *testing.T) {
	cfg := measure.DefaultCollectorConfig
	cfg.MaxSeriesPerMetric = 3
	s := collected(t, cfg, func(c *measure.Collector, at int64) {
		for i := range 10 {
			url := "/orders/" + string(rune('a'+i))
			c.Series("http_req_duration", measure.Trend, "time", map[string]string{"scenario": "default", "name": url}).Add(at, 1)
		}
	})
	r := Build(s, nil, 1).Results
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `tag "name"`) || !strings.Contains(r.Warnings[0], "more than 3") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if r.Metrics[0].Samples != 10 {
		t.Errorf("samples %d, want all 10 in the total", r.Metrics[0].Samples)
	}
}
