package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink tests can read while handlers write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testConfig() Config {
	return Config{Listen: ":0", Workers: 2, QueueSize: 4, QueueTimeout: 5 * time.Second,
		SlowPush: time.Second, WarnInterval: time.Hour, LogLevel: slog.LevelInfo}
}

func newTestServer(t *testing.T, cfg Config, store Store) (*Server, *httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	s := NewServer(cfg, store, logs)
	s.exit = func(code int) { t.Fatalf("unexpected exit(%d)", code) }
	s.Start(context.Background())
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, logs
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRegisterPushConfig(t *testing.T) {
	store := newMemStore()
	_, ts, logs := newTestServer(t, testConfig(), store)

	if code, body := do(t, "POST", ts.URL+"/api/register", `{"device":"dev-1"}`); code != 201 {
		t.Fatalf("first register = %d %s, want 201", code, body)
	}
	if code, _ := do(t, "POST", ts.URL+"/api/register", `{"device":"dev-1"}`); code != 200 {
		t.Fatalf("second register = %d, want 200", code)
	}
	if code, _ := do(t, "POST", ts.URL+"/api/register", `{"device":"dev-2","config":{"pushPeriodSeconds":100}}`); code != 201 {
		t.Fatalf("register with config = %d", code)
	}
	for i := 0; i < 3; i++ {
		if code, body := do(t, "POST", ts.URL+"/api/push", `{"device":"dev-1","rssi":-67,"uptime":`+string(rune('0'+i))+`}`); code != 202 {
			t.Fatalf("push = %d %s, want 202", code, body)
		}
	}
	pushes, total := store.stored()
	if total != 3 || len(pushes) != 3 || pushes[2].Device != "dev-1" {
		t.Fatalf("stored %d %+v", total, pushes)
	}
	var payload map[string]any
	if err := json.Unmarshal(pushes[2].Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if _, has := payload["device"]; has || payload["rssi"] != -67.0 || payload["uptime"] != 2.0 {
		t.Errorf("payload = %v: want the body without device", payload)
	}

	code, body := do(t, "GET", ts.URL+"/api/config?device=dev-9", "")
	var def map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &def) != nil || def["default"] != true || def["device"] != "dev-9" {
		t.Errorf("default config = %d %s", code, body)
	}
	code, body = do(t, "GET", ts.URL+"/api/config?device=dev-2", "")
	if code != 200 || strings.TrimSpace(body) != `{"pushPeriodSeconds":100}` {
		t.Errorf("stored config = %d %s", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/config", ""); code != 400 {
		t.Errorf("config without device = %d, want 400", code)
	}
	if strings.Contains(logs.String(), "level=warn") || strings.Contains(logs.String(), "level=error") {
		t.Errorf("unexpected warnings:\n%s", logs)
	}
}

func TestBadRequests(t *testing.T) {
	_, ts, _ := newTestServer(t, testConfig(), newMemStore())
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/api/push", `not json`},
		{"POST", "/api/push", `[1,2]`},
		{"POST", "/api/push", `{"rssi":1}`},
		{"POST", "/api/push", `{"device":""}`},
		{"POST", "/api/push", `{"device":7}`},
		{"POST", "/api/push", `{"device":"` + strings.Repeat("x", 129) + `"}`},
		{"POST", "/api/register", `{"device":"d","config":[1]}`},
		{"POST", "/api/push", `{"device":"d","blob":"` + strings.Repeat("x", maxBody) + `"}`},
	} {
		if code, body := do(t, tc.method, ts.URL+tc.path, tc.body); code != 400 {
			t.Errorf("%s %s %.40q = %d %s, want 400", tc.method, tc.path, tc.body, code, body)
		}
	}
	if code, _ := do(t, "GET", ts.URL+"/api/push", ""); code != 405 {
		t.Errorf("GET /api/push = %d, want 405", code)
	}
	if code, _ := do(t, "GET", ts.URL+"/nope", ""); code != 404 {
		t.Errorf("GET /nope = %d, want 404", code)
	}
}

func TestRequireRegister(t *testing.T) {
	cfg := testConfig()
	cfg.RequireRegister = true
	_, ts, _ := newTestServer(t, cfg, newMemStore())
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"ghost"}`); code != 404 {
		t.Errorf("push from unknown device = %d, want 404", code)
	}
	do(t, "POST", ts.URL+"/api/register", `{"device":"ghost"}`)
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"ghost"}`); code != 202 {
		t.Errorf("push after register = %d, want 202", code)
	}
}

func TestHealthz(t *testing.T) {
	store := newMemStore()
	_, ts, _ := newTestServer(t, testConfig(), store)
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("healthz = %d %q", code, body)
	}
	store.mu.Lock()
	store.pingErr = errors.New("connection refused")
	store.mu.Unlock()
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 503 || !strings.Contains(body, "connection refused") {
		t.Errorf("healthz with DB down = %d %q", code, body)
	}
}

// failingInit fails Init a few times, like a database still starting next to the backend.
type failingInit struct {
	*memStore
	mu    sync.Mutex
	fails int
}

func (f *failingInit) Init(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return nil
}

func TestNotReadyUntilInit(t *testing.T) {
	logs := &syncBuffer{}
	store := &failingInit{memStore: newMemStore(), fails: 2}
	s := NewServer(testConfig(), store, logs)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); code != 503 {
		t.Errorf("push before init = %d, want 503", code)
	}
	if code, _ := do(t, "GET", ts.URL+"/healthz", ""); code != 503 {
		t.Errorf("healthz before init = %d, want 503", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Start(ctx) // two failures, 250 ms + 500 ms of backoff
	if !s.ready.Load() {
		t.Fatal("not ready after Start")
	}
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); code != 202 {
		t.Errorf("push after init = %d, want 202", code)
	}
	// Waiting for a database that starts within 30 s is normal: info, not warn.
	if l := logs.String(); !strings.Contains(l, `level=info msg="waiting for database"`) || strings.Contains(l, "level=warn") {
		t.Errorf("logs:\n%s", l)
	}
}

// blockingStore holds every Push until release is closed.
type blockingStore struct {
	*memStore
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) Push(ctx context.Context, device string, payload json.RawMessage) error {
	b.entered <- struct{}{}
	<-b.release
	return b.memStore.Push(ctx, device, payload)
}

func TestWorkersQueueAndDrops(t *testing.T) {
	cfg := testConfig() // 2 workers, queue of 4
	store := &blockingStore{memStore: newMemStore(), entered: make(chan struct{}, 100), release: make(chan struct{})}
	s, ts, logs := newTestServer(t, cfg, store)

	codes := make(chan int, 10)
	send := func() {
		code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`)
		codes <- code
	}
	// Two pushes take both workers.
	for i := 0; i < 2; i++ {
		go send()
	}
	for i := 0; i < 2; i++ {
		select {
		case <-store.entered:
		case <-time.After(5 * time.Second):
			t.Fatal("workers never started")
		}
	}
	// Four more wait in the queue; the fourth brings it to 80 % and more.
	for i := 0; i < 4; i++ {
		go send()
	}
	waitFor(t, func() bool { return s.waiting.Load() == 4 })
	if s.busy.Load() != 2 {
		t.Errorf("busy = %d, want 2 (WORKERS)", s.busy.Load())
	}
	// The seventh finds the queue full and is dropped at once.
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); code != 503 {
		t.Errorf("push with full queue = %d, want 503", code)
	}
	close(store.release)
	for i := 0; i < 6; i++ {
		select {
		case c := <-codes:
			if c != 202 {
				t.Errorf("queued push = %d, want 202", c)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("queued pushes never finished")
		}
	}
	if _, total := store.stored(); total != 6 {
		t.Errorf("stored %d, want 6", total)
	}
	l := logs.String()
	if n := strings.Count(l, `level=warn msg="push queue above 80%"`); n != 1 {
		t.Errorf("queue warnings = %d, want 1 (rate-limited):\n%s", n, l)
	}
	if !strings.Contains(l, `level=warn msg="push dropped: queue full"`) {
		t.Errorf("no drop warning:\n%s", l)
	}
	_, metrics := do(t, "GET", ts.URL+"/metrics", "")
	for _, want := range []string{
		`sut_http_requests_total{route="push",status="202"} 6`,
		`sut_http_requests_total{route="push",status="503"} 1`,
		`sut_pushes_stored_total 6`,
		`sut_pushes_dropped_total{reason="queue_full"} 1`,
		`sut_push_workers 2`,
		`sut_push_queue_capacity 4`,
		`sut_log_messages_total{level="warn"} 2`,
		`sut_database_ready 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
}

func TestQueueTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.Workers, cfg.QueueTimeout = 1, 100*time.Millisecond
	store := &blockingStore{memStore: newMemStore(), entered: make(chan struct{}, 10), release: make(chan struct{})}
	s, ts, logs := newTestServer(t, cfg, store)
	done := make(chan int, 1)
	go func() { code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); done <- code }()
	<-store.entered
	if code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); code != 503 {
		t.Errorf("push that waited too long = %d, want 503", code)
	}
	close(store.release)
	if c := <-done; c != 202 {
		t.Errorf("first push = %d", c)
	}
	if s.dropWait.Load() != 1 || !strings.Contains(logs.String(), "waited too long") {
		t.Errorf("dropWait = %d, logs:\n%s", s.dropWait.Load(), logs)
	}
}

func TestCrashAfterPushes(t *testing.T) {
	cfg := testConfig()
	cfg.CrashAfterPushes = 3
	logs := &syncBuffer{}
	s := NewServer(cfg, newMemStore(), logs)
	exits := make(chan int, 5)
	s.exit = func(code int) { exits <- code }
	s.Start(context.Background())
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for i := 0; i < 2; i++ {
		do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`)
	}
	if len(exits) != 0 {
		t.Fatal("exited before CRASH_AFTER_PUSHES")
	}
	do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`)
	do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`)
	if len(exits) != 1 || <-exits != 2 {
		t.Fatalf("want exactly one exit(2)")
	}
	if n := strings.Count(logs.String(), `level=error msg="simulated crash" pushes=3`); n != 1 {
		t.Errorf("crash lines = %d:\n%s", n, logs)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"WORKERS": "8", "QUEUE_SIZE": "0", "LOG_LEVEL": "debug", "CRASH_AFTER_PUSHES": "100",
		"QUEUE_TIMEOUT": "2s", "REQUIRE_REGISTER": "true", "LISTEN": "127.0.0.1:9000", "GRPC_LISTEN": "off", "PUSH_DELAY": "20ms", "PUSH_WORK": "2000",
		"LEAK_BYTES_PER_PUSH": "4096"}
	c, err := configFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != 8 || c.QueueSize != 0 || c.LogLevel != slog.LevelDebug || c.CrashAfterPushes != 100 ||
		c.QueueTimeout != 2*time.Second || !c.RequireRegister || c.Listen != "127.0.0.1:9000" || c.DBMaxConns != 12 ||
		c.GRPCListen != "" || c.PushDelay != 20*time.Millisecond || c.PushWork != 2000 || c.LeakBytesPerPush != 4096 {
		t.Errorf("config = %+v", c)
	}
	c, err = configFromEnv(func(string) string { return "" })
	if err != nil || c.Listen != ":8080" || c.GRPCListen != ":9090" || c.Workers != 4 || c.LogLevel != slog.LevelInfo || c.CrashAfterPushes != 0 || c.LeakBytesPerPush != 0 {
		t.Errorf("defaults = %+v, %v", c, err)
	}
	bad := map[string]string{"WORKERS": "0", "LOG_LEVEL": "loud", "QUEUE_TIMEOUT": "soon", "PUSH_WORK": "-1", "LEAK_BYTES_PER_PUSH": "1k"}
	_, err = configFromEnv(func(k string) string { return bad[k] })
	for _, want := range []string{"WORKERS", "LOG_LEVEL", "QUEUE_TIMEOUT", "PUSH_WORK", "LEAK_BYTES_PER_PUSH"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func TestParseDatabaseURL(t *testing.T) {
	for _, tc := range []struct{ url, driver, dsn string }{
		{"postgres://u:p@db:5432/fleetbench?sslmode=disable", "pgx", "postgres://u:p@db:5432/fleetbench?sslmode=disable"},
		{"mysql://fleetbench:fleet%40bench@db.ns.svc:3306/fleetbench", "mysql", "fleetbench:fleet@bench@tcp(db.ns.svc:3306)/fleetbench?parseTime=true&timeout=5s"},
		{"mysql://u:p@db/iot?tls=false", "mysql", "u:p@tcp(db:3306)/iot?parseTime=true&timeout=5s&tls=false"},
	} {
		driver, dsn, _, err := parseDatabaseURL(tc.url)
		if err != nil || driver != tc.driver || dsn != tc.dsn {
			t.Errorf("%s -> %s %s %v, want %s %s", tc.url, driver, dsn, err, tc.driver, tc.dsn)
		}
	}
	for _, bad := range []string{"db:5432", "redis://db", "://"} {
		if _, _, _, err := parseDatabaseURL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got := redact("postgres://u:secret@db/x"); strings.Contains(got, "secret") {
		t.Errorf("redact = %s", got)
	}
}

func TestLogFormat(t *testing.T) {
	var b bytes.Buffer
	counts := &levelCounts{}
	l := newLogger(&b, slog.LevelInfo, counts)
	l.Warn("push queue above 80%", "queued", 5)
	l.Debug("hidden")
	line := b.String()
	if !strings.HasPrefix(line, "ts=") || !strings.Contains(line, ` level=warn msg="push queue above 80%" queued=5`) {
		t.Errorf("line = %q", line)
	}
	if strings.Contains(line, "hidden") || counts.warn.Load() != 1 {
		t.Errorf("debug leaked or warn not counted: %q %d", line, counts.warn.Load())
	}
}

func TestMemStoreRing(t *testing.T) {
	m := newMemStore()
	for i := 0; i < memKeep+5; i++ {
		_ = m.Push(context.Background(), "d", json.RawMessage(`{}`))
	}
	pushes, total := m.stored()
	if len(pushes) != memKeep || total != memKeep+5 {
		t.Errorf("kept %d of %d", len(pushes), total)
	}
	// PUSH_HISTORY 3: the ring keeps the last 3.
	m = newMemStoreKeeping(3)
	for i := range 5 {
		_ = m.Push(context.Background(), "d", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
	}
	if pushes, total = m.stored(); len(pushes) != 3 || total != 5 {
		t.Errorf("PUSH_HISTORY 3 kept %d of %d", len(pushes), total)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within 5 s")
}

func TestEcho(t *testing.T) {
	_, ts, _ := newTestServer(t, testConfig(), newMemStore())
	for _, size := range []int{0, 64, 64 << 10} {
		body := strings.Repeat("x", size)
		code, got := do(t, "POST", ts.URL+"/api/echo", body)
		if code != 200 || got != body {
			t.Errorf("echo of %d bytes: %d, %d bytes back", size, code, len(got))
		}
	}
	if code, _ := do(t, "POST", ts.URL+"/api/echo", strings.Repeat("x", maxEcho+1)); code != 413 {
		t.Errorf("echo over the bound: %d, want 413", code)
	}
}

// TestPushDelayBoundsThroughput: one worker holding each push 500 ms serves about 2 pushes a
// second; the rest wait, and with no queue they are refused.
func TestPushDelayBoundsThroughput(t *testing.T) {
	cfg := testConfig()
	cfg.Workers, cfg.QueueSize, cfg.PushDelay = 1, 0, 500*time.Millisecond
	s, ts, _ := newTestServer(t, cfg, newMemStore())
	codes := make(chan int, 10)
	for range 10 {
		go func() { code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); codes <- code }()
	}
	counts := map[int]int{}
	for range 10 {
		counts[<-codes]++
	}
	// Ten at once, one worker, no queue: exactly one is in the worker when the others arrive,
	// unless one finished (500 ms) before the last arrived; at least most are refused.
	if counts[202] < 1 || counts[503] < 5 || counts[202]+counts[503] != 10 {
		t.Errorf("codes %v: one worker with no queue must refuse most of ten simultaneous pushes", counts)
	}
	if got := s.stored.Load(); got != int64(counts[202]) {
		t.Errorf("stored %d, accepted %d", got, counts[202])
	}
}

// BenchmarkBurn prints the CPU one PUSH_WORK round costs here, to size PUSH_WORK for a profile:
// a push of PUSH_WORK rounds takes PUSH_WORK × ns/op of one core.
func BenchmarkBurn(b *testing.B) {
	data := []byte(`{"device":"d","rssi":-67}`)
	for b.Loop() {
		burn(1000, data)
	}
}

// TestLeakBytesPerPush: every stored push keeps LEAK_BYTES_PER_PUSH bytes, which the metrics
// report; a refused push (unknown device) keeps nothing.
func TestLeakBytesPerPush(t *testing.T) {
	cfg := testConfig()
	cfg.LeakBytesPerPush = 1000
	cfg.RequireRegister = true
	s, ts, _ := newTestServer(t, cfg, newMemStore())
	do(t, "POST", ts.URL+"/api/register", `{"device":"d"}`)
	for range 5 {
		if code, body := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); code != 202 {
			t.Fatalf("push: %d %s", code, body)
		}
	}
	do(t, "POST", ts.URL+"/api/push", `{"device":"stranger"}`)
	if got := s.leaked.bytes(); got != 5000 {
		t.Errorf("kept %d bytes, want 5 × 1000", got)
	}
	if _, metrics := do(t, "GET", ts.URL+"/metrics", ""); !strings.Contains(metrics, "sut_leaked_bytes 5000\n") {
		t.Errorf("metrics lack sut_leaked_bytes 5000")
	}
}
