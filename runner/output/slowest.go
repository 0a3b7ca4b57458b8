package output

import (
	"strings"

	"go.k6.io/k6/v2/metrics"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// traceIDKey is the sample metadata k6's tracing instrumentation (k6/experimental/tracing, the
// http-instrumentation-tempo jslib) puts a request's trace id under.
const traceIDKey = "trace_id"

// slowMetric says whether samples of the metric are requests whose slowest are kept.
func slowMetric(name string) bool {
	return name == "http_req_duration" || name == "grpc_req_duration"
}

// addSlow offers a request sample to the collector's slowest: it costs a comparison unless the
// request is among the slowest so far, and only then are its tags read and strings kept.
// Callers hold o.mu.
func (o *Output) addSlow(s *metrics.Sample) {
	t := s.Time.UnixNano()
	if !o.collector.SlowAdmits(t, s.Value) {
		return
	}
	r := measure.SlowRequest{DurationMillis: s.Value, StartUnixNano: t - int64(s.Value*1e6)}
	if s.Tags != nil {
		r.Name, _ = s.Tags.Get("name")
		r.URL, _ = s.Tags.Get("url")
		r.Method, _ = s.Tags.Get("method")
		r.Status, _ = s.Tags.Get("status")
		r.Scenario, _ = s.Tags.Get("scenario")
	}
	if id := s.Metadata[traceIDKey]; id != "" {
		r.TraceID = strings.ToLower(id)
	}
	// Copies, cut to their bounds: a kept request must not pin a long URL's backing array.
	r = measure.CutSlow(r)
	r.Name, r.URL = strings.Clone(r.Name), strings.Clone(r.URL)
	o.collector.AddSlow(t, r)
}
