package judge

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// tabulate is the first step of BuildWith: the merged summary as status.results' counts,
// throughput, latency, checks, metrics and scenarios, and the warnings of what did not fit.
// expectedRunners is the TestRun's parallelism: fewer final envelopes marks the results partial.
func tabulate(s *measure.Summary, expectedRunners int) *v1alpha1.Results {
	r := &v1alpha1.Results{}
	final := 0
	for _, runner := range s.Runners {
		if runner.Final {
			final++
		}
	}
	r.Partial = !s.Complete || final < expectedRunners

	req := requestsOf(s)
	r.Protocol = req.protocol
	r.Requests = &v1alpha1.RequestCounts{
		Total:          int64(req.total),
		Accepted:       int64(req.total) - int64(req.failed),
		Dropped:        int64(req.failed),
		DroppedPercent: percent(float64(req.failed), req.total),
	}
	droppedIterations := counter(s, "dropped_iterations")
	r.Iterations = &v1alpha1.IterationCounts{Total: int64(counter(s, "iterations")), Dropped: int64(droppedIterations)}
	r.Throughput = &v1alpha1.Throughput{
		RequestsPerSecond: fmt.Sprintf("%.2f", req.rate),
		DataSentBytes:     int64(counter(s, "data_sent")),
		DataReceivedBytes: int64(counter(s, "data_received")),
	}
	if sec := s.Duration.Seconds(); sec > 0 {
		r.Throughput.ReceivedMbps = fmt.Sprintf("%.2f", float64(counter(s, "data_received"))*8/1e6/sec)
		r.Throughput.SentMbps = fmt.Sprintf("%.2f", float64(counter(s, "data_sent"))*8/1e6/sec)
	}
	if m := req.duration; m != nil && m.Stats.Count > 0 {
		st := m.Stats
		r.Latency = &v1alpha1.Latency{
			Min: Millis(st.Min), Avg: Millis(st.Avg), P50: Millis(st.Med), P90: Millis(st.P90),
			P95: Millis(st.P95), P99: Millis(st.P99), Max: Millis(st.Max),
			AboveAveragePercent: fmt.Sprintf("%.1f", st.AboveAvgPercent),
			BelowAveragePercent: fmt.Sprintf("%.1f", st.BelowAvgPercent),
		}
	}
	r.Checks = checkCounts(s)
	var omitted int
	r.Metrics, omitted = metricRows(s)
	if omitted > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d more metrics are not listed in status (at most %d are)", omitted, maxMetrics))
	}
	r.Scenarios = scenarioRows(s, req)
	r.SlowestRequests = slowestRows(s.SlowestOfRun)
	for _, o := range s.Overflows {
		if len(r.Warnings) < maxWarnings {
			r.Warnings = append(r.Warnings, o.Message())
		}
	}

	return r
}

// Bounds of the compact lists in status; the API's MaxItems say the same.
const (
	maxMetrics   = 64
	maxScenarios = 32
	maxChecks    = 64
	maxSlowest   = 10
)

// Protocols of the requests a run counts.
const (
	ProtocolHTTP = "http"
	ProtocolGRPC = "grpc"
)

// requests is what the run counts as its requests: HTTP requests, or gRPC calls when the
// script made no HTTP request (seed 001's agents answer gRPC).
type requests struct {
	protocol string
	total    uint64
	failed   uint64
	rate     float64
	// duration is the metric latency is read from; nil when nothing was measured.
	duration *measure.MetricSummary
	// skip leaves out series that are not the script's requests (k6's reflection RPCs).
	skip func(measure.SeriesSummary) bool
}

// counts says whether a series of duration holds requests of the script.
func (r requests) counts(sr measure.SeriesSummary) bool { return r.skip == nil || !r.skip(sr) }

func requestsOf(s *measure.Summary) requests {
	grpc := s.Metrics["grpc_req_duration"]
	if counter(s, "http_reqs") == 0 && grpc != nil && grpc.Stats.Count > 0 {
		r := requests{protocol: ProtocolGRPC, duration: grpc}
		// k6 times its own reflection RPCs too, sometimes (see the runner's keptTags): where
		// the runners kept the method tag, only the script's calls, which carry it, count.
		// (Latency still reads the whole metric, as k6's summary does.)
		if slices.ContainsFunc(grpc.Series, func(sr measure.SeriesSummary) bool { return sr.Tags["method"] != "" }) {
			r.skip = func(sr measure.SeriesSummary) bool { return sr.Tags["method"] == "" }
		}
		for _, sr := range grpc.Series {
			if !r.counts(sr) {
				continue
			}
			r.total += sr.Stats.Count
			if sr.Tags["status"] != "0" { // gRPC's OK
				r.failed += sr.Stats.Count
			}
		}
		if sec := s.Duration.Seconds(); sec > 0 {
			r.rate = float64(r.total) / sec
		}
		return r
	}
	r := requests{protocol: ProtocolHTTP, total: counter(s, "http_reqs"), duration: s.Metrics["http_req_duration"]}
	if m := s.Metrics["http_req_failed"]; m != nil {
		r.failed = m.Stats.Passes
	}
	if m := s.Metrics["http_reqs"]; m != nil {
		r.rate = m.Stats.Rate
	}
	return r
}

// metricRows renders every merged metric as k6's summary shows it, sorted by name; omitted
// counts those beyond the bound.
func metricRows(s *measure.Summary) (rows []v1alpha1.MetricResult, omitted int) {
	names := make([]string, 0, len(s.Metrics))
	for name := range s.Metrics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if len(rows) == maxMetrics {
			return rows, len(names) - maxMetrics
		}
		rows = append(rows, metricRow(s.Metrics[name]))
	}
	return rows, 0
}

func metricRow(m *measure.MetricSummary) v1alpha1.MetricResult {
	st := m.Stats
	row := v1alpha1.MetricResult{Name: m.Name, Type: string(m.Type)}
	switch m.Contains {
	case "time":
		row.Unit = "ms"
	case "data":
		row.Unit = "bytes"
	}
	switch m.Type {
	case measure.Counter:
		row.Count, row.Rate = number(st.Sum), number(st.Rate)
	case measure.Rate:
		row.Rate, row.Passes, row.Fails = number(st.Rate), int64(st.Passes), int64(st.Fails)
	case measure.Gauge:
		row.Value, row.Min, row.Max = number(st.Value), number(st.Min), number(st.Max)
	case measure.Trend:
		row.Samples = int64(st.Count)
		row.Avg, row.Min, row.Med, row.Max = number(st.Avg), number(st.Min), number(st.Med), number(st.Max)
		row.P90, row.P95, row.P99 = number(st.P90), number(st.P95), number(st.P99)
	}
	return row
}

// scenarioRows splits requests and iterations by the scenario tag.
func scenarioRows(s *measure.Summary, req requests) []v1alpha1.ScenarioResult {
	type acc struct {
		requests, iterations uint64
		durations            measure.Agg
	}
	by := map[string]*acc{}
	at := func(tags map[string]string) *acc {
		name := tags["scenario"]
		if name == "" {
			return nil
		}
		if by[name] == nil {
			by[name] = &acc{}
		}
		return by[name]
	}
	if m := s.Metrics["iterations"]; m != nil {
		for _, sr := range m.Series {
			if a := at(sr.Tags); a != nil {
				a.iterations += uint64(sr.Stats.Sum)
			}
		}
	}
	if req.duration != nil {
		for _, sr := range req.duration.Series {
			if a := at(sr.Tags); a != nil && req.counts(sr) {
				a.requests += sr.Stats.Count
				a.durations.Merge(sr.Agg)
			}
		}
	}
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	sort.Strings(names)
	var rows []v1alpha1.ScenarioResult
	for _, name := range names[:min(len(names), maxScenarios)] {
		a := by[name]
		row := v1alpha1.ScenarioResult{Name: name, Requests: int64(a.requests), Iterations: int64(a.iterations)}
		if sec := s.Duration.Seconds(); sec > 0 {
			row.RequestsPerSecond = fmt.Sprintf("%.2f", float64(a.requests)/sec)
		}
		if a.durations.Count > 0 {
			row.P95 = Millis(a.durations.Quantile(0.95))
		}
		rows = append(rows, row)
	}
	return rows
}

// slowestRows are the first maxSlowest of the run's slowest requests (slowest first), each cut
// to status' bounds.
func slowestRows(rs []measure.SlowRequest) []v1alpha1.SlowRequest {
	var rows []v1alpha1.SlowRequest
	for _, r := range rs[:min(len(rs), maxSlowest)] {
		r = measure.CutSlow(r)
		rows = append(rows, v1alpha1.SlowRequest{Duration: Millis(r.DurationMillis),
			Start: metav1.NewMicroTime(time.Unix(0, r.StartUnixNano).UTC()), Name: r.Name, URL: r.URL,
			Method: r.Method, Status: r.Status, Scenario: r.Scenario, Runner: r.Runner, TraceID: r.TraceID})
	}
	return rows
}

func checkCounts(s *measure.Summary) *v1alpha1.CheckCounts {
	if len(s.Checks) == 0 {
		return nil
	}
	c := &v1alpha1.CheckCounts{}
	for _, ch := range s.Checks {
		c.Passed += int64(ch.Passes)
		c.Failed += int64(ch.Fails)
		if len(c.ByName) < maxChecks {
			c.ByName = append(c.ByName, v1alpha1.NamedCheck{Name: ch.Name, Group: ch.Group, Passed: int64(ch.Passes), Failed: int64(ch.Fails)})
		}
	}
	return c
}

// number renders a value compactly: integers without a fraction, others with up to 4 decimals.
func number(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

func counter(s *measure.Summary, name string) uint64 {
	if m := s.Metrics[name]; m != nil {
		return uint64(m.Stats.Sum)
	}
	return 0
}

func percent(part float64, whole uint64) string {
	if whole == 0 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", 100*part/float64(whole))
}

func round(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

// Millis renders a duration in milliseconds the way the seed reports write them: 11ms,
// 4.52ms, 1.25s.
func Millis(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}
