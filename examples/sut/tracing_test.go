package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// newTracedServer serves the API with every span ending in the returned in-memory exporter.
func newTracedServer(t *testing.T, cfg Config) (*httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := NewServer(cfg, newMemStore(), &syncBuffer{})
	s.exit = func(code int) { t.Fatalf("unexpected exit(%d)", code) }
	s.SetTracerProvider(tp)
	s.Start(context.Background())
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, exp
}

// send makes a request with a traceparent header (none when traceparent is empty).
func send(t *testing.T, method, url, traceparent, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// spansOf returns the ended spans of a trace by name (the server span ends last, after the
// response is written, so wait for it).
func spansOf(t *testing.T, exp *tracetest.InMemoryExporter, traceID string, want int) map[string]tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		byName := map[string]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == traceID {
				byName[s.Name] = s
			}
		}
		if len(byName) >= want || time.Now().After(deadline) {
			return byName
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func TestTracedPushJoinsTheCallersTrace(t *testing.T) {
	cfg := testConfig()
	cfg.PushDelay = 20 * time.Millisecond
	ts, exp := newTracedServer(t, cfg)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if code := send(t, http.MethodPost, ts.URL+"/api/push", "00-"+traceID+"-"+parentID+"-01", `{"device":"d1","t":1}`); code != http.StatusAccepted {
		t.Fatalf("push: %d, want 202", code)
	}
	spans := spansOf(t, exp, traceID, 4)
	server, ok := spans["POST /api/push"]
	if !ok {
		t.Fatalf("no server span %q in trace %s: %v", "POST /api/push", traceID, names(spans))
	}
	if server.SpanKind != trace.SpanKindServer || server.Parent.SpanID().String() != parentID || !server.Parent.IsRemote() {
		t.Errorf("server span: kind %v, parent %s (remote %v); want server, the caller's %s", server.SpanKind, server.Parent.SpanID(), server.Parent.IsRemote(), parentID)
	}
	if got := attr(server, "http.response.status_code").AsInt64(); got != 202 {
		t.Errorf("http.response.status_code = %d, want 202", got)
	}
	if got := attr(server, "http.route").AsString(); got != "/api/push" {
		t.Errorf("http.route = %q, want /api/push", got)
	}
	for _, name := range []string{spanQueueWait, spanWork, spanDatabase} {
		child, ok := spans[name]
		if !ok {
			t.Errorf("no %q span under the server span: %v", name, names(spans))
			continue
		}
		if child.Parent.SpanID() != server.SpanContext.SpanID() {
			t.Errorf("%q span's parent is %s, want the server span %s", name, child.Parent.SpanID(), server.SpanContext.SpanID())
		}
	}
	if d := spans[spanWork].EndTime.Sub(spans[spanWork].StartTime); d < cfg.PushDelay {
		t.Errorf("work span lasted %v, want at least PUSH_DELAY %v", d, cfg.PushDelay)
	}
	db := spans[spanDatabase]
	if op, sys := attr(db, "db.operation.name").AsString(), attr(db, "db.system.name").AsString(); op != "push" || sys != "memory" {
		t.Errorf("database span: db.operation.name %q, db.system.name %q; want push, memory", op, sys)
	}
}

func TestSlowPathSpan(t *testing.T) {
	cfg := testConfig()
	cfg.SlowPath, cfg.SlowDelay = "/api/slow", 60*time.Millisecond
	ts, exp := newTracedServer(t, cfg)
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	start := time.Now()
	if code := send(t, http.MethodPost, ts.URL+"/api/slow", "00-"+traceID+"-b7ad6b7169203331-01", `{"device":"d1"}`); code != http.StatusAccepted {
		t.Fatalf("slow push: %d, want 202", code)
	}
	if took := time.Since(start); took < cfg.SlowDelay {
		t.Errorf("slow push answered in %v, want at least SLOW_DELAY %v", took, cfg.SlowDelay)
	}
	spans := spansOf(t, exp, traceID, 5)
	server, ok := spans["POST /api/slow"]
	if !ok {
		t.Fatalf("no server span %q: %v", "POST /api/slow", names(spans))
	}
	slow, ok := spans[spanSlowPath]
	if !ok || slow.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Fatalf("no %q span under the server span: %v", spanSlowPath, names(spans))
	}
	if d := slow.EndTime.Sub(slow.StartTime); d < cfg.SlowDelay {
		t.Errorf("slow path span lasted %v, want at least %v", d, cfg.SlowDelay)
	}
	for _, name := range []string{spanQueueWait, spanWork, spanDatabase} {
		if _, ok := spans[name]; !ok {
			t.Errorf("the slow path is a push too: no %q span (%v)", name, names(spans))
		}
	}
}

func TestUntracedRoutesAndNewTraces(t *testing.T) {
	ts, exp := newTracedServer(t, testConfig())
	send(t, http.MethodGet, ts.URL+"/healthz", "", "")
	send(t, http.MethodGet, ts.URL+"/metrics", "", "")
	if code := send(t, http.MethodGet, ts.URL+"/api/config?device=d1", "", ""); code != http.StatusOK {
		t.Fatalf("config: %d", code)
	}
	time.Sleep(50 * time.Millisecond)
	var got []string
	for _, s := range exp.GetSpans() {
		got = append(got, s.Name)
		if s.Name == "GET /api/config" && s.Parent.IsValid() {
			t.Errorf("a request without traceparent should start a trace, got parent %s", s.Parent.SpanID())
		}
	}
	if strings.Join(got, ",") != "database,GET /api/config" {
		t.Errorf("spans %v, want database,GET /api/config (probes and scrapes untraced)", got)
	}
}

func TestTracerProviderFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	tp, shutdown, err := newTracerProvider(context.Background(), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Errorf("without OTEL_EXPORTER_OTLP_*ENDPOINT: %T, want the no-op provider", tp)
	}
	_ = shutdown(context.Background())
	env["OTEL_EXPORTER_OTLP_ENDPOINT"], env["OTEL_SDK_DISABLED"] = "http://127.0.0.1:4318", "true"
	if tracingEnabled(getenv) {
		t.Error("OTEL_SDK_DISABLED=true should turn tracing off")
	}

	// With an endpoint, spans reach it over OTLP/HTTP, named by OTEL_SERVICE_NAME.
	got := make(chan *collectortrace.ExportTraceServiceRequest, 1)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
			t.Errorf("collector got %s %s (%d bytes), want an OTLP/HTTP export to /v1/traces", r.Method, r.URL.Path, len(body))
		}
		got <- req
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "sut-under-test")
	t.Setenv("OTEL_SDK_DISABLED", "")
	tp, shutdown, err = newTracerProvider(context.Background(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "probe")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown (flush): %v", err)
	}
	select {
	case req := <-got:
		rs := req.GetResourceSpans()
		if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || rs[0].GetScopeSpans()[0].GetSpans()[0].GetName() != "probe" {
			t.Fatalf("export: %v, want the span probe", req)
		}
		var service string
		for _, kv := range rs[0].GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		if service != "sut-under-test" {
			t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's sut-under-test", service)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no export reached the collector")
	}
}

func TestSlowPathConfig(t *testing.T) {
	for path, ok := range map[string]bool{"/api/slow": true, "/api/push": false, "slow": false, "/": false} {
		cfg, err := configFromEnv(func(k string) string {
			return map[string]string{"SLOW_PATH": path, "SLOW_DELAY": "1s"}[k]
		})
		if (err == nil) != ok {
			t.Errorf("SLOW_PATH=%s: err %v, want ok=%v", path, err, ok)
		}
		if ok && (cfg.SlowPath != path || cfg.SlowDelay != time.Second) {
			t.Errorf("SLOW_PATH=%s: %q %v", path, cfg.SlowPath, cfg.SlowDelay)
		}
	}
	cfg, _ := configFromEnv(func(string) string { return "" })
	if cfg.SlowPath != "" || cfg.SlowDelay != 300*time.Millisecond {
		t.Errorf("defaults: SLOW_PATH %q SLOW_DELAY %v, want none and 300ms", cfg.SlowPath, cfg.SlowDelay)
	}
}

func names(spans map[string]tracetest.SpanStub) []string {
	var out []string
	for n := range spans {
		out = append(out, n)
	}
	return out
}
