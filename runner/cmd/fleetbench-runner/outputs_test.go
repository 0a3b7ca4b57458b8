package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"github.com/klauspost/compress/snappy"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// receiver records what k6's outputs send: the remote-write series and the OTLP data points
// carrying a given testid.
type receiver struct {
	mu sync.Mutex
	// remoteWrite maps a metric name and label set to the latest value of that series, for
	// series with the testid.
	remoteWrite map[string]map[string]float64
	// otlp counts OTLP data points with the testid, by metric name.
	otlp map[string]int
	errs []string
}

func newReceiver(t *testing.T, testID string) (*receiver, *httptest.Server) {
	rc := &receiver{remoteWrite: map[string]map[string]float64{}, otlp: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		switch r.URL.Path {
		case "/api/v1/write":
			rc.remoteWriteRequest(body, testID)
		case "/v1/metrics":
			rc.otlpRequest(body, testID)
		default:
			rc.errs = append(rc.errs, "unexpected path "+r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) remoteWriteRequest(body []byte, testID string) {
	raw, err := snappy.Decode(nil, body)
	var req prompb.WriteRequest
	if err == nil {
		err = proto.Unmarshal(raw, &req)
	}
	if err != nil {
		rc.errs = append(rc.errs, "remote write: "+err.Error())
		return
	}
	for _, ts := range req.GetTimeseries() {
		name, series, tagged := "", "", false
		for _, l := range ts.GetLabels() {
			if l.GetName() == "__name__" {
				name = l.GetValue()
			}
			series += l.GetName() + "=" + l.GetValue() + ","
			tagged = tagged || (l.GetName() == "testid" && l.GetValue() == testID)
		}
		if samples := ts.GetSamples(); tagged && len(samples) > 0 {
			if rc.remoteWrite[name] == nil {
				rc.remoteWrite[name] = map[string]float64{}
			}
			rc.remoteWrite[name][series] = samples[len(samples)-1].GetValue()
		}
	}
}

func (rc *receiver) otlpRequest(body []byte, testID string) {
	var req collectormetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		rc.errs = append(rc.errs, "otlp: "+err.Error())
		return
	}
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				for _, dp := range m.GetSum().GetDataPoints() {
					for _, a := range dp.GetAttributes() {
						if a.GetKey() == "testid" && a.GetValue().GetStringValue() == testID {
							rc.otlp[m.GetName()]++
						}
					}
				}
			}
		}
	}
}

// spec.outputs end to end at the runner: the flags and environment the operator gives a runner
// Job (runners.OutputArgs) make real k6 stream to a Prometheus remote-write receiver and an
// OTLP/HTTP receiver, every sample tagged with the run's testid, while fleetbench's own envelope
// still counts every request.
func TestSpecOutputsReachTheirReceivers(t *testing.T) {
	bin := buildRunner(t)
	tg := newTarget(t)
	tr := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: "outputs", UID: "0123456789abcdef"}}
	rc, srv := newReceiver(t, "outputs-01234567")
	host := strings.TrimPrefix(srv.URL, "http://")
	tr.Spec.Outputs = []v1alpha1.OutputSpec{
		{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: srv.URL + "/api/v1/write"},
		{Type: v1alpha1.OutputOpenTelemetry, URL: host, Protocol: "http", Insecure: true},
	}
	args, env := runners.OutputArgs(tr)
	out := runK6Args(t, bin, tg, append(envStrings(env), "K6_OTEL_EXPORT_INTERVAL=200ms", "K6_PROMETHEUS_RW_PUSH_INTERVAL=200ms"), args...)
	env6, err := measure.ExtractEnvelope(out)
	if err != nil {
		t.Fatalf("the envelope: %v\n%s", err, out)
	}
	served := float64(tg.hits.Load())
	var reqs float64
	for _, m := range env6.Metrics {
		if m.Name == "http_reqs" {
			for _, s := range m.Series {
				reqs += s.Total.Sum
			}
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.errs) > 0 {
		t.Fatalf("receiver errors: %v", rc.errs)
	}
	if reqs != served || served != 90 {
		t.Errorf("fleetbench's envelope counts %g requests; the target served %g (want 90)", reqs, served)
	}
	var written float64
	for _, v := range rc.remoteWrite["k6_http_reqs_total"] {
		written += v
	}
	if written != served {
		t.Errorf("remote write: sum of k6_http_reqs_total{testid} = %g, want %g; series: %v", written, served, rc.remoteWrite["k6_http_reqs_total"])
	}
	if rc.otlp["http_reqs"] == 0 {
		t.Errorf("OTLP: no http_reqs data point tagged testid; seen: %v", rc.otlp)
	}
}

func envStrings(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}
