package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config is everything the backend reads from its environment (see README.md).
type Config struct {
	Listen           string
	GRPCListen       string // GRPC_LISTEN: the goal-state gRPC service; "off" turns it off
	DatabaseURL      string
	Workers          int           // WORKERS: push handlers that run at once
	QueueSize        int           // QUEUE_SIZE: pushes that may wait for a worker; more are dropped (503)
	QueueTimeout     time.Duration // QUEUE_TIMEOUT: longest wait for a worker before a 503
	SlowPush         time.Duration // SLOW_PUSH: a store slower than this logs a warning
	WarnInterval     time.Duration // WARN_INTERVAL: the same warning is logged at most once per interval
	CrashAfterPushes int64         // CRASH_AFTER_PUSHES: exit(2) after this many stored pushes (0: never)
	PushDelay        time.Duration // PUSH_DELAY: processing time each push holds its worker, as a heavier backend would
	PushHistory      int           // PUSH_HISTORY: pushes the memory store remembers (a ring); its memory holds once full
	PushWork         int           // PUSH_WORK: SHA-256 rounds each push computes: CPU work, so throughput follows the cores granted
	RequireRegister  bool          // REQUIRE_REGISTER: pushes from unknown devices get 404
	LeakBytesPerPush int           // LEAK_BYTES_PER_PUSH: bytes kept forever per stored push, a deliberate leak
	DBMaxConns       int           // DB_MAX_CONNS: database pool size
	SlowPath         string        // SLOW_PATH: a push route that answers SlowDelay later, for trace e2e tests ("": none)
	SlowDelay        time.Duration // SLOW_DELAY: how much longer SLOW_PATH takes
	LogLevel         slog.Level
}

func configFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Listen:       ":8080",
		GRPCListen:   ":9090",
		DatabaseURL:  getenv("DATABASE_URL"),
		Workers:      4,
		QueueSize:    256,
		QueueTimeout: 30 * time.Second,
		SlowPush:     time.Second,
		WarnInterval: 5 * time.Second,
	}
	if v := getenv("LISTEN"); v != "" {
		c.Listen = v
	}
	switch v := getenv("GRPC_LISTEN"); v {
	case "":
	case "off":
		c.GRPCListen = ""
	default:
		c.GRPCListen = v
	}
	var errs []error
	intVar := func(name string, dst *int, min int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < min {
				errs = append(errs, fmt.Errorf("%s=%q: want an integer >= %d", name, v, min))
				return
			}
			*dst = n
		}
	}
	durVar := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				errs = append(errs, fmt.Errorf("%s=%q: want a duration like 500ms or 30s", name, v))
				return
			}
			*dst = d
		}
	}
	intVar("WORKERS", &c.Workers, 1)
	intVar("QUEUE_SIZE", &c.QueueSize, 0)
	durVar("QUEUE_TIMEOUT", &c.QueueTimeout)
	durVar("SLOW_PUSH", &c.SlowPush)
	durVar("WARN_INTERVAL", &c.WarnInterval)
	durVar("PUSH_DELAY", &c.PushDelay)
	intVar("PUSH_WORK", &c.PushWork, 0)
	c.PushHistory = memKeep
	intVar("PUSH_HISTORY", &c.PushHistory, 1)
	intVar("LEAK_BYTES_PER_PUSH", &c.LeakBytesPerPush, 0)
	crash := 0
	intVar("CRASH_AFTER_PUSHES", &crash, 0)
	c.CrashAfterPushes = int64(crash)
	c.DBMaxConns = c.Workers + 4
	intVar("DB_MAX_CONNS", &c.DBMaxConns, 1)
	c.SlowDelay = 300 * time.Millisecond
	durVar("SLOW_DELAY", &c.SlowDelay)
	if v := getenv("SLOW_PATH"); v != "" {
		if !strings.HasPrefix(v, "/") || apiRoutes[v] || strings.ContainsAny(v, " {}") {
			errs = append(errs, fmt.Errorf("SLOW_PATH=%q: want a path of its own, like /api/slow", v))
		} else {
			c.SlowPath = v
		}
	}
	switch strings.ToLower(getenv("REQUIRE_REGISTER")) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		c.RequireRegister = true
	default:
		errs = append(errs, fmt.Errorf("REQUIRE_REGISTER=%q: want true or false", getenv("REQUIRE_REGISTER")))
	}
	switch strings.ToLower(getenv("LOG_LEVEL")) {
	case "", "info":
		c.LogLevel = slog.LevelInfo
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		errs = append(errs, fmt.Errorf("LOG_LEVEL=%q: want debug, info, warn or error", getenv("LOG_LEVEL")))
	}
	return c, errors.Join(errs...)
}

// newLogger writes logfmt lines: ts=... level=warn msg="..." key=value.
func newLogger(w io.Writer, level slog.Level, counts *levelCounts) *slog.Logger {
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 {
			switch a.Key {
			case slog.TimeKey:
				return slog.String("ts", a.Value.Time().UTC().Format("2006-01-02T15:04:05.000Z"))
			case slog.LevelKey:
				return slog.String("level", strings.ToLower(a.Value.String()))
			}
		}
		return a
	}})
	return slog.New(&countingHandler{Handler: h, counts: counts})
}

// levelCounts counts the warning and error lines written, for /metrics.
type levelCounts struct{ warn, error atomic.Int64 }

type countingHandler struct {
	slog.Handler
	counts *levelCounts
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelError:
		h.counts.error.Add(1)
	case r.Level >= slog.LevelWarn:
		h.counts.warn.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(as), counts: h.counts}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), counts: h.counts}
}

// Server is the device backend.
type Server struct {
	cfg   Config
	store Store
	log   *slog.Logger
	exit  func(int) // os.Exit; tests replace it
	now   func() time.Time

	ready   atomic.Bool // the store's tables exist
	slots   chan struct{}
	waiting atomic.Int64
	busy    atomic.Int64

	stored     atomic.Int64
	goalStates atomic.Int64
	registered atomic.Int64
	dropFull   atomic.Int64
	dropWait   atomic.Int64
	crashOnce  sync.Once
	leaked     leak
	logCounts  *levelCounts
	limiter    warnLimiter
	started    time.Time
	metricsMu  sync.Mutex
	requests   map[[2]string]int64 // route, status -> count
	durations  map[string]*durationSum
	tracer     trace.Tracer // SetTracerProvider; a no-op one by default
	dbSystem   string       // db.system.name of the database spans
}

type durationSum struct {
	sum   float64
	count int64
}

// NewServer wires a backend; logs go to logOut.
func NewServer(cfg Config, store Store, logOut io.Writer) *Server {
	counts := &levelCounts{}
	s := &Server{
		cfg:       cfg,
		store:     store,
		log:       newLogger(logOut, cfg.LogLevel, counts),
		exit:      os.Exit,
		now:       time.Now,
		slots:     make(chan struct{}, cfg.Workers),
		logCounts: counts,
		started:   time.Now(),
		requests:  map[[2]string]int64{},
		durations: map[string]*durationSum{},
		limiter:   warnLimiter{last: map[string]*limitState{}},
		tracer:    noop.NewTracerProvider().Tracer(tracerName),
		dbSystem:  storeSystem(store),
	}
	return s
}

// warnLimiter lets one line per message through per interval and says how many it held back,
// so an overloaded backend logs a countable trickle instead of a flood.
type warnLimiter struct {
	mu   sync.Mutex
	last map[string]*limitState
}

type limitState struct {
	at         time.Time
	suppressed int64
}

// logLimited logs msg at level unless the same msg was logged less than WarnInterval ago.
func (s *Server) logLimited(level slog.Level, msg string, args ...any) {
	now := s.now()
	s.limiter.mu.Lock()
	st := s.limiter.last[msg]
	if st == nil {
		st = &limitState{}
		s.limiter.last[msg] = st
	}
	if !st.at.IsZero() && now.Sub(st.at) < s.cfg.WarnInterval {
		st.suppressed++
		s.limiter.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.at, st.suppressed = now, 0
	s.limiter.mu.Unlock()
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.log.Log(context.Background(), level, msg, args...)
}

// Start makes the tables, retrying until ctx ends; the API answers 503 until then.
func (s *Server) Start(ctx context.Context) {
	const warnAfter = 30 * time.Second
	begin := time.Now()
	delay := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := s.store.Init(ictx)
		cancel()
		if err == nil {
			s.ready.Store(true)
			s.log.Info("database ready", "attempts", attempt, "waited", time.Since(begin).Round(time.Millisecond).String())
			return
		}
		// A database starting next to us (one-machine sizing) is normal for a while.
		if time.Since(begin) > warnAfter {
			s.logLimited(slog.LevelWarn, "database not reachable", "err", err.Error())
		} else if attempt == 1 {
			s.log.Info("waiting for database", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// apiRoutes are the paths Handler serves (SLOW_PATH must be another one).
var apiRoutes = map[string]bool{"/": true, "/api/register": true, "/api/push": true, "/api/config": true,
	"/api/echo": true, "/healthz": true, "/metrics": true}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/register", s.instrument("register", http.MethodPost, s.register))
	mux.HandleFunc("/api/push", s.instrument("push", http.MethodPost, s.push))
	mux.HandleFunc("/api/config", s.instrument("config", http.MethodGet, s.config))
	mux.HandleFunc("/api/echo", s.instrument("echo", http.MethodPost, s.echo))
	if s.cfg.SlowPath != "" {
		mux.HandleFunc(s.cfg.SlowPath, s.instrument("slow", http.MethodPost, s.slowPush))
	}
	mux.HandleFunc("/healthz", s.instrument("healthz", http.MethodGet, s.healthz))
	mux.HandleFunc("/metrics", s.instrument("metrics", http.MethodGet, s.metrics))
	mux.HandleFunc("/", s.instrument("other", "", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	}))
	return mux
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (s *Server) instrument(route, method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r, span := s.startServerSpan(route, r)
		sw := &statusWriter{ResponseWriter: w}
		headOfGet := method == http.MethodGet && r.Method == http.MethodHead
		if method != "" && r.Method != method && !headOfGet {
			sw.Header().Set("Allow", method)
			http.Error(sw, "method not allowed", http.StatusMethodNotAllowed)
		} else {
			h(sw, r)
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		endServerSpan(span, sw.status)
		elapsed := time.Since(start)
		s.count(route, strconv.Itoa(sw.status), elapsed)
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "ms", elapsed.Milliseconds())
	}
}

// count books one request of a route (HTTP or gRPC) for /metrics.
func (s *Server) count(route, status string, elapsed time.Duration) {
	s.metricsMu.Lock()
	defer s.metricsMu.Unlock()
	s.requests[[2]string{route, status}]++
	d := s.durations[route]
	if d == nil {
		d = &durationSum{}
		s.durations[route] = d
	}
	d.sum += elapsed.Seconds()
	d.count++
}

const maxBody = 64 << 10

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// readDevice reads a JSON object body with a "device" string and returns the device and the
// other fields.
func readDevice(w http.ResponseWriter, r *http.Request) (string, map[string]json.RawMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return "", nil, fmt.Errorf("reading body: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return "", nil, errors.New("body must be a JSON object")
	}
	var device string
	if err := json.Unmarshal(fields["device"], &device); err != nil || device == "" {
		return "", nil, errors.New(`"device" must be a non-empty string`)
	}
	if len(device) > 128 {
		return "", nil, errors.New(`"device" is longer than 128 bytes`)
	}
	delete(fields, "device")
	return device, fields, nil
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		apiError(w, http.StatusServiceUnavailable, errNotReady.Error())
		return
	}
	device, fields, err := readDevice(w, r)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	var config json.RawMessage
	if c, ok := fields["config"]; ok && string(c) != "null" {
		if len(c) == 0 || c[0] != '{' {
			apiError(w, http.StatusBadRequest, `"config" must be a JSON object`)
			return
		}
		config = c
	}
	ctx, end := s.dbSpan(r.Context(), "register")
	created, err := s.store.Register(ctx, device, config)
	end(err)
	if err != nil {
		s.logLimited(slog.LevelError, "register failed", "device", device, "err", err.Error())
		apiError(w, http.StatusInternalServerError, "register failed")
		return
	}
	status := http.StatusOK
	if created {
		s.registered.Add(1)
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"device": device, "created": created})
}

// acquire takes a push worker, waiting in the queue when all are busy. It returns 0 and a
// release func, or the HTTP status to answer with.
func (s *Server) acquire(ctx context.Context) (func(), int) {
	release := func() { s.busy.Add(-1); <-s.slots }
	select {
	case s.slots <- struct{}{}:
		s.busy.Add(1)
		return release, 0
	default:
	}
	n := s.waiting.Add(1)
	defer s.waiting.Add(-1)
	capacity := int64(s.cfg.QueueSize)
	if n > capacity {
		s.dropFull.Add(1)
		s.logLimited(slog.LevelWarn, "push dropped: queue full", "queued", n-1, "capacity", capacity, "workers", s.cfg.Workers)
		return nil, http.StatusServiceUnavailable
	}
	if n*5 >= capacity*4 {
		s.logLimited(slog.LevelWarn, "push queue above 80%", "queued", n, "capacity", capacity, "workers", s.cfg.Workers)
	}
	timer := time.NewTimer(s.cfg.QueueTimeout)
	defer timer.Stop()
	select {
	case s.slots <- struct{}{}:
		s.busy.Add(1)
		return release, 0
	case <-timer.C:
		s.dropWait.Add(1)
		s.logLimited(slog.LevelWarn, "push dropped: waited too long for a worker", "waited", s.cfg.QueueTimeout.String())
		return nil, http.StatusServiceUnavailable
	case <-ctx.Done():
		// The client gave up; nginx's 499 says so in the metrics.
		return nil, 499
	}
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		apiError(w, http.StatusServiceUnavailable, errNotReady.Error())
		return
	}
	_, wait := s.tracer.Start(r.Context(), spanQueueWait)
	release, status := s.acquire(r.Context())
	if status != 0 {
		wait.SetStatus(codes.Error, "push workers saturated")
		wait.End()
		apiError(w, status, "push workers saturated")
		return
	}
	wait.End()
	defer release()
	device, fields, err := readDevice(w, r)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.cfg.RequireRegister {
		ctx, end := s.dbSpan(r.Context(), "known")
		known, err := s.store.Known(ctx, device)
		end(err)
		if err != nil {
			s.logLimited(slog.LevelError, "push failed", "device", device, "err", err.Error())
			apiError(w, http.StatusInternalServerError, "push failed")
			return
		}
		if !known {
			apiError(w, http.StatusNotFound, "unknown device: register first")
			return
		}
	}
	payload, _ := json.Marshal(fields)
	_, work := s.tracer.Start(r.Context(), spanWork)
	if s.cfg.PushDelay > 0 {
		// Work that holds the worker: with WORKERS w, at most w/PUSH_DELAY pushes per second.
		time.Sleep(s.cfg.PushDelay)
	}
	if s.cfg.PushWork > 0 {
		payload = burn(s.cfg.PushWork, payload)
	}
	work.End()
	start := time.Now()
	ctx, end := s.dbSpan(r.Context(), "push")
	err = s.store.Push(ctx, device, payload)
	end(err)
	if err != nil {
		s.logLimited(slog.LevelError, "push failed", "device", device, "err", err.Error())
		apiError(w, http.StatusInternalServerError, "push failed")
		return
	}
	if took := time.Since(start); s.cfg.SlowPush > 0 && took > s.cfg.SlowPush {
		s.logLimited(slog.LevelWarn, "slow push", "device", device, "ms", took.Milliseconds())
	}
	s.leaked.keep(s.cfg.LeakBytesPerPush)
	n := s.stored.Add(1)
	if s.cfg.CrashAfterPushes > 0 && n >= s.cfg.CrashAfterPushes {
		s.crashOnce.Do(func() {
			s.log.Error("simulated crash", "pushes", n, "crash_after_pushes", s.cfg.CrashAfterPushes)
			s.exit(2)
		})
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "stored"})
}

// slowPush is a push that first waits SLOW_DELAY in a span of its own, before it queues for a
// worker (so it slows nothing else): the known slowest request of a trace e2e test.
func (s *Server) slowPush(w http.ResponseWriter, r *http.Request) {
	_, span := s.tracer.Start(r.Context(), spanSlowPath,
		trace.WithAttributes(attribute.Int64("sut.slow_delay_ms", s.cfg.SlowDelay.Milliseconds())))
	select {
	case <-time.After(s.cfg.SlowDelay):
	case <-r.Context().Done():
	}
	span.End()
	s.push(w, r)
}

// defaultConfig is what a device without a stored config gets.
// maxEcho bounds what /api/echo returns: seed 004's payloads go up to 64 KiB.
const maxEcho = 1 << 20

// echo returns the request body as it came, for round-trip time and goodput by payload size.
func (s *Server) echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEcho))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("echo bodies are at most %d bytes", maxEcho))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(body) //nolint:errcheck // the client went away
}

func defaultConfig(device string) map[string]any {
	return map[string]any{"device": device, "profile": "default", "pushPeriodSeconds": 200, "default": true}
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		apiError(w, http.StatusServiceUnavailable, errNotReady.Error())
		return
	}
	device := r.URL.Query().Get("device")
	if device == "" || len(device) > 128 {
		apiError(w, http.StatusBadRequest, "device query parameter required (at most 128 bytes)")
		return
	}
	ctx, end := s.dbSpan(r.Context(), "config")
	cfg, err := s.store.Config(ctx, device)
	end(err)
	if err != nil {
		s.logLimited(slog.LevelError, "config lookup failed", "device", device, "err", err.Error())
		apiError(w, http.StatusInternalServerError, "config lookup failed")
		return
	}
	if cfg == nil {
		writeJSON(w, http.StatusOK, defaultConfig(device))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(cfg, '\n'))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !s.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "database not ready")
		return
	}
	if err := s.store.Ping(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "database unreachable:", err)
		return
	}
	fmt.Fprintln(w, "ok")
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	metric := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	s.metricsMu.Lock()
	keys := make([][2]string, 0, len(s.requests))
	for k := range s.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	metric("sut_http_requests_total", "counter", "HTTP requests by route and status code.")
	for _, k := range keys {
		fmt.Fprintf(&b, "sut_http_requests_total{route=%q,status=%q} %d\n", k[0], k[1], s.requests[k])
	}
	routes := make([]string, 0, len(s.durations))
	for r := range s.durations {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	metric("sut_http_request_duration_seconds", "summary", "Time spent answering requests, queue wait included.")
	for _, r := range routes {
		d := s.durations[r]
		fmt.Fprintf(&b, "sut_http_request_duration_seconds_sum{route=%q} %g\n", r, d.sum)
		fmt.Fprintf(&b, "sut_http_request_duration_seconds_count{route=%q} %d\n", r, d.count)
	}
	s.metricsMu.Unlock()

	metric("sut_pushes_stored_total", "counter", "Pushes stored in the database.")
	fmt.Fprintf(&b, "sut_pushes_stored_total %d\n", s.stored.Load())
	metric("sut_leaked_bytes", "gauge", "Bytes kept on purpose by LEAK_BYTES_PER_PUSH.")
	fmt.Fprintf(&b, "sut_leaked_bytes %d\n", s.leaked.bytes())
	metric("sut_pushes_dropped_total", "counter", "Pushes answered 503 because every worker was busy.")
	fmt.Fprintf(&b, "sut_pushes_dropped_total{reason=\"queue_full\"} %d\n", s.dropFull.Load())
	fmt.Fprintf(&b, "sut_pushes_dropped_total{reason=\"queue_timeout\"} %d\n", s.dropWait.Load())
	metric("sut_devices_registered_total", "counter", "Devices registered for the first time by this process.")
	fmt.Fprintf(&b, "sut_devices_registered_total %d\n", s.registered.Load())
	metric("sut_goal_states_total", "counter", "Goal-state messages handled over gRPC.")
	fmt.Fprintf(&b, "sut_goal_states_total %d\n", s.goalStates.Load())
	metric("sut_push_workers", "gauge", "Configured push workers (WORKERS).")
	fmt.Fprintf(&b, "sut_push_workers %d\n", s.cfg.Workers)
	metric("sut_push_workers_busy", "gauge", "Push workers handling a request now.")
	fmt.Fprintf(&b, "sut_push_workers_busy %d\n", s.busy.Load())
	metric("sut_push_queue_waiting", "gauge", "Pushes waiting for a worker.")
	fmt.Fprintf(&b, "sut_push_queue_waiting %d\n", s.waiting.Load())
	metric("sut_push_queue_capacity", "gauge", "Pushes that may wait before more are dropped (QUEUE_SIZE).")
	fmt.Fprintf(&b, "sut_push_queue_capacity %d\n", s.cfg.QueueSize)
	metric("sut_database_ready", "gauge", "1 once the tables exist.")
	ready := 0
	if s.ready.Load() {
		ready = 1
	}
	fmt.Fprintf(&b, "sut_database_ready %d\n", ready)
	metric("sut_log_messages_total", "counter", "Log lines written by level (rate-limited warnings count once).")
	fmt.Fprintf(&b, "sut_log_messages_total{level=\"warn\"} %d\n", s.logCounts.warn.Load())
	fmt.Fprintf(&b, "sut_log_messages_total{level=\"error\"} %d\n", s.logCounts.error.Load())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	metric("go_goroutines", "gauge", "Goroutines.")
	fmt.Fprintf(&b, "go_goroutines %d\n", runtime.NumGoroutine())
	metric("go_memstats_heap_inuse_bytes", "gauge", "Heap bytes in use.")
	fmt.Fprintf(&b, "go_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	if rss, ok := residentBytes(); ok {
		metric("process_resident_memory_bytes", "gauge", "Resident set size.")
		fmt.Fprintf(&b, "process_resident_memory_bytes %d\n", rss)
	}
	metric("process_start_time_seconds", "gauge", "Start time, seconds since the epoch.")
	fmt.Fprintf(&b, "process_start_time_seconds %d\n", s.started.Unix())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// residentBytes reads the RSS from /proc/self/statm (Linux only).
func residentBytes() (int64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// burn computes rounds chained SHA-256 digests, starting from data: CPU work a parse- or
// TLS-heavy backend does per request, so a CPU-bound target's throughput follows its cores.
// It returns data unchanged; the digest only keeps the compiler from dropping the work.
func burn(rounds int, data []byte) []byte {
	sum := sha256.Sum256(data)
	for i := 1; i < rounds; i++ {
		sum = sha256.Sum256(sum[:])
	}
	runtime.KeepAlive(sum)
	return data
}
