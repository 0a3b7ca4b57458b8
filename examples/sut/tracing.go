package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Span names: a slow request's trace shows where its time went (issue 38).
const (
	spanQueueWait = "queue wait" // waiting for a push worker
	spanWork      = "work"       // PUSH_DELAY and PUSH_WORK, holding the worker
	spanDatabase  = "database"   // one store call
	spanSlowPath  = "slow path"  // SLOW_DELAY on SLOW_PATH
)

const tracerName = "fleetbench.dev/fleetbench/examples/sut"

// tracingEnabled is true when the standard OpenTelemetry environment names an OTLP endpoint
// (and OTEL_SDK_DISABLED does not say otherwise).
func tracingEnabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// newTracerProvider exports spans over OTLP/HTTP when the environment names an endpoint; the
// exporter and the resource read the rest of the standard OTEL_* variables themselves
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, headers, timeouts, OTEL_BSP_*). Without an
// endpoint it is a no-op provider, so an untraced backend pays nothing per request.
func newTracerProvider(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if !tracingEnabled(getenv) {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	// service.name "sut" unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise:
	// later options win.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "sut")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// SetTracerProvider makes the backend trace its requests with tp (NewServer starts with a
// no-op one).
func (s *Server) SetTracerProvider(tp trace.TracerProvider) {
	s.tracer = tp.Tracer(tracerName)
}

// untraced are the routes probes and scrapers call every few seconds: their spans would bury
// the requests a load test sends.
var untraced = map[string]bool{"healthz": true, "metrics": true}

// startServerSpan starts the request's server span, a child of the caller's span when the
// request carries a W3C traceparent, so a load generator's trace id finds the server's spans.
func (s *Server) startServerSpan(route string, r *http.Request) (*http.Request, trace.Span) {
	if untraced[route] {
		return r, trace.SpanFromContext(r.Context())
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	name := r.Method
	if route != "other" && r.Pattern != "" {
		name += " " + r.Pattern
	}
	ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("http.route", r.Pattern),
			attribute.String("url.path", r.URL.Path),
			attribute.String("sut.route", route),
		))
	return r.WithContext(ctx), span
}

// endServerSpan records the answer; 5xx answers mark the span as an error.
func endServerSpan(span trace.Span, status int) {
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status))
	}
	span.End()
}

// dbSpan starts the span of one store call; end it with the call's error.
func (s *Server) dbSpan(ctx context.Context, op string) (context.Context, func(error)) {
	ctx, span := s.tracer.Start(ctx, spanDatabase, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", s.dbSystem), attribute.String("db.operation.name", op)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "store call failed")
		}
		span.End()
	}
}

// storeSystem names the database a store talks to, for the database spans.
func storeSystem(st Store) string {
	if sq, ok := st.(*sqlStore); ok {
		if sq.dialect == "postgres" {
			return "postgresql"
		}
		return sq.dialect
	}
	return "memory"
}
