//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// slowPath and slowDelay make the run's known slowest request: the sample backend holds a push
// to slowPath slowDelay longer, far beyond any other push's latency even on a busy machine.
const (
	slowPath  = "/api/slow"
	slowDelay = time.Second
)

// tracedPushes propagates W3C trace context by hand (k6 v2.2.0 has no k6/experimental/tracing):
// a fresh trace id per request, sent as traceparent and set as the sample metadata trace_id
// for the request's samples only, which is how the runners see it. Every 25th iteration of the
// test goes to the slow path.
const tracedPushes = `import http from 'k6/http';
import exec from 'k6/execution';

function hex(n) {
  let s = '';
  for (let i = 0; i < n; i++) s += '0123456789abcdef'[Math.floor(Math.random() * 16)];
  return s;
}

export default function () {
  const path = exec.scenario.iterationInTest % 25 === 7 ? '` + slowPath + `' : '/api/push';
  const traceID = hex(32);
  exec.vu.metrics.metadata['trace_id'] = traceID;
  http.post(` + "`${__ENV.TARGET_APP_URL}${path}`" + `, JSON.stringify({ device: 'dev-' + __VU, rssi: -67 }), {
    headers: { 'Content-Type': 'application/json', traceparent: ` + "`00-${traceID}-${hex(16)}-01`" + ` },
    timeout: '5s',
  });
  delete exec.vu.metrics.metadata['trace_id'];
}
`

// TestSlowestRequestsResolveToTraces is issue 38's trace check: the sample backend, traced
// with OpenTelemetry into a Jaeger beside it, under pushes that carry trace context, a few of
// them to a deliberately slow path. The slowest requests in status carry trace ids; each id
// resolves in Jaeger to a trace holding the backend's server span, joined to the script's
// trace, with its queue wait, work and database spans; the slowest request is the slow path.
func TestSlowestRequestsResolveToTraces(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-traces")
	run := tw.MakeTestRun("traced", ns).
		Components(tracedSUT(), jaegerComponent()).
		Devices(20, "1s").Duration("30s").
		Inline(tracedPushes).Parallelism(2).
		Threshold("http_req_failed", "rate<0.01").
		// Kept after the run: Jaeger is queried once status holds the slowest requests.
		Cleanup(v1alpha1.TargetKeepUntilDeleted).
		Obj()
	got := e.run(t, run, 5*time.Minute)
	requirePassed(t, got)

	slowest := slowestRequests(t, got)
	if len(slowest) < 2 {
		t.Fatalf("status.results.slowestRequests has %d entries, want several: %+v", len(slowest), slowest)
	}
	top := slowest[0]
	for _, r := range slowest {
		t.Logf("slowest: %8s %s %s trace %s", r.Duration, r.Name, r.URL, r.TraceID)
		if !traceIDPattern.MatchString(r.TraceID) {
			t.Errorf("slowest request %s %s (%s) has trace id %q, want the script's 32 hex digits", r.Name, r.URL, r.Duration, r.TraceID)
		}
		if r.Duration > top.Duration {
			top = r
		}
	}
	if !strings.Contains(top.URL+" "+top.Name, slowPath) || top.Duration < slowDelay {
		t.Errorf("the slowest request is %s %s (%s), want the slow path %s (at least %s)", top.Name, top.URL, top.Duration, slowPath, slowDelay)
	}

	for _, r := range slowest {
		if !traceIDPattern.MatchString(r.TraceID) {
			continue
		}
		tr := e.jaegerTrace(t, got.Status.TargetNamespace, r.TraceID)
		server := tr.checkServerSpan(t, r)
		if r == top {
			slow := tr.child(server, spanNameSlowPath)
			if server.OperationName != "POST "+slowPath || slow == nil || time.Duration(slow.Duration)*time.Microsecond < slowDelay {
				t.Errorf("trace %s: server span %q, slow path span %+v; want POST %s holding a %q span of at least %s",
					r.TraceID, server.OperationName, slow, slowPath, spanNameSlowPath, slowDelay)
			}
		}
	}
}

// The sample backend's span names (examples/sut/tracing.go).
const (
	spanNameQueueWait = "queue wait"
	spanNameWork      = "work"
	spanNameDatabase  = "database"
	spanNameSlowPath  = "slow path"
)

var traceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// tracedSUT is the sample backend exporting its spans to the Jaeger in its pod.
func tracedSUT() v1alpha1.Component {
	return v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env: []corev1.EnvVar{{Name: "WORKERS", Value: "4"}, {Name: "PUSH_DELAY", Value: "5ms"},
			{Name: "SLOW_PATH", Value: slowPath}, {Name: "SLOW_DELAY", Value: slowDelay.String()},
			// localhost: the default oneMachine sizing puts every component in one pod, and a
			// component's Service carries only its first port (the query API here). A Jaeger
			// outside the target could not be reached: the target's NetworkPolicy lets it out
			// only to DNS and its own pods, and the e2e install allows no spec.target.egress.
			{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://localhost:4318"},
			{Name: "OTEL_SERVICE_NAME", Value: "sut"},
			// Export every half second: the slowest requests come at the end of the run.
			{Name: "OTEL_BSP_SCHEDULE_DELAY", Value: "500"}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 2},
	}
}

// jaegerComponent is fleetbench/jaeger:dev (hack/images/jaeger.sh) with its built-in config:
// OTLP/HTTP in on 4318, spans in memory, the query API on 16686, the first port, so the
// component's Service "jaeger" serves it.
func jaegerComponent() v1alpha1.Component {
	return v1alpha1.Component{Name: "jaeger", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/jaeger:dev",
		Ports: []corev1.ContainerPort{{Name: "query", ContainerPort: 16686}, {Name: "otlp-http", ContainerPort: 4318}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/status", Port: intstr.FromInt32(13133)}},
			PeriodSeconds: 2},
	}
}

// slowRequest is one entry of status.results.slowestRequests with its duration parsed.
type slowRequest struct {
	Name, URL, Method, TraceID string
	Duration                   time.Duration
}

// slowestRequests are the run's status.results.slowestRequests, durations parsed.
func slowestRequests(t *testing.T, run *v1alpha1.TestRun) []slowRequest {
	t.Helper()
	if run.Status.Results == nil {
		t.Fatalf("no status.results: %s", run.Status.Message)
	}
	var out []slowRequest
	for i, r := range run.Status.Results.SlowestRequests {
		d, err := time.ParseDuration(r.Duration)
		if err != nil {
			t.Fatalf("slowestRequests[%d] %+v: %v", i, r, err)
		}
		out = append(out, slowRequest{Name: r.Name, URL: r.URL, Method: r.Method, TraceID: r.TraceID, Duration: d})
	}
	return out
}

// jaegerTrace is a trace as Jaeger's query API answers it (GET /api/traces/<id>).
type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	Duration      int64  `json:"duration"` // microseconds
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
}

// jaegerTrace asks the Jaeger component, through the API server's service proxy, for a trace,
// waiting for the backend's batches to arrive and the sut's span batches to complete it.
func (e *env) jaegerTrace(t *testing.T, targetNS, traceID string) *jaegerTrace {
	t.Helper()
	var tr jaegerTrace
	e.eventually(t, "trace "+traceID+" in Jaeger", time.Minute, func() (bool, string) {
		raw, err := e.cs.CoreV1().Services(targetNS).ProxyGet("http", "jaeger", "16686", "/api/traces/"+traceID, nil).DoRaw(e.ctx)
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, raw)
		}
		var resp struct {
			Data []jaegerTrace `json:"data"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Data) != 1 {
			return false, fmt.Sprintf("%v: %s", err, raw)
		}
		tr = resp.Data[0]
		// The server span ends last: wait until it and its children are all there.
		s := tr.server()
		return s != nil && tr.child(s, spanNameDatabase) != nil, fmt.Sprintf("%d spans", len(tr.Spans))
	})
	return &tr
}

// server is the sample backend's server span: the one whose parent is not in the trace (the
// script's span, which only k6 knows).
func (tr *jaegerTrace) server() *jaegerSpan {
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if tr.Processes[s.ProcessID].ServiceName == "sut" && strings.HasPrefix(s.OperationName, "POST /api/") &&
			len(s.References) == 1 && tr.span(s.References[0].SpanID) == nil {
			return s
		}
	}
	return nil
}

func (tr *jaegerTrace) span(id string) *jaegerSpan {
	for i := range tr.Spans {
		if tr.Spans[i].SpanID == id {
			return &tr.Spans[i]
		}
	}
	return nil
}

// child is the span named name whose parent is parent.
func (tr *jaegerTrace) child(parent *jaegerSpan, name string) *jaegerSpan {
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if s.OperationName == name && len(s.References) == 1 && s.References[0].RefType == "CHILD_OF" && s.References[0].SpanID == parent.SpanID {
			return s
		}
	}
	return nil
}

// checkServerSpan checks that the trace holds the sample backend's server span for the
// request, joined to the script's trace, with its queue wait, work and database spans, and
// returns it.
func (tr *jaegerTrace) checkServerSpan(t *testing.T, r slowRequest) *jaegerSpan {
	t.Helper()
	if tr.TraceID != r.TraceID {
		t.Errorf("Jaeger answered trace %s for %s", tr.TraceID, r.TraceID)
	}
	server := tr.server()
	if server == nil {
		t.Fatalf("trace %s (%s %s): no sut server span joined to the script's span among %d spans", r.TraceID, r.Name, r.URL, len(tr.Spans))
	}
	for _, name := range []string{spanNameQueueWait, spanNameWork, spanNameDatabase} {
		if tr.child(server, name) == nil {
			t.Errorf("trace %s: no %q span under the server span %q", r.TraceID, name, server.OperationName)
		}
	}
	// The server span times the request inside the backend: it cannot outlast what k6 measured.
	if d := time.Duration(server.Duration) * time.Microsecond; d > r.Duration+50*time.Millisecond {
		t.Errorf("trace %s: server span %s lasted %s, longer than the %s k6 measured", r.TraceID, server.OperationName, d, r.Duration)
	}
	return server
}
