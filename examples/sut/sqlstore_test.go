package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSQLStore runs against real databases: every URL in TEST_DATABASE_URL (space-separated,
// postgres:// or mysql://), else DATABASE_URL. README.md shows how to start a throwaway
// PostgreSQL or the fleetbench images for it.
func TestSQLStore(t *testing.T) {
	urls := strings.Fields(os.Getenv("TEST_DATABASE_URL"))
	if len(urls) == 0 {
		urls = strings.Fields(os.Getenv("DATABASE_URL"))
	}
	if len(urls) == 0 {
		t.Skip("needs a real database: set TEST_DATABASE_URL (or DATABASE_URL) to postgres://... and/or mysql://... URLs")
	}
	for _, u := range urls {
		t.Run(strings.SplitN(u, ":", 2)[0], func(t *testing.T) { testSQLStore(t, u) })
	}
}

func testSQLStore(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := openSQL(url, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 2; i++ { // Init must be idempotent: every restart runs it
		if err := s.Init(ctx); err != nil {
			t.Fatalf("Init #%d on %s: %v", i+1, redact(url), err)
		}
	}
	// Unique names so the test can run again against the same database.
	dev := fmt.Sprintf("test-%d", time.Now().UnixNano())

	if known, err := s.Known(ctx, dev); err != nil || known {
		t.Fatalf("Known before register = %v %v", known, err)
	}
	if cfg, err := s.Config(ctx, dev); err != nil || cfg != nil {
		t.Fatalf("Config of unknown device = %s %v", cfg, err)
	}
	if created, err := s.Register(ctx, dev, nil); err != nil || !created {
		t.Fatalf("Register = %v %v", created, err)
	}
	if created, err := s.Register(ctx, dev, nil); err != nil || created {
		t.Fatalf("second Register = %v %v", created, err)
	}
	if cfg, err := s.Config(ctx, dev); err != nil || cfg != nil {
		t.Fatalf("Config without one = %s %v", cfg, err)
	}
	if _, err := s.Register(ctx, dev, json.RawMessage(`{"pushPeriodSeconds": 100}`)); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Config(ctx, dev)
	var got map[string]any
	if err != nil || json.Unmarshal(cfg, &got) != nil || got["pushPeriodSeconds"] != 100.0 {
		t.Fatalf("Config = %s %v", cfg, err)
	}
	if known, err := s.Known(ctx, dev); err != nil || !known {
		t.Fatalf("Known after register = %v %v", known, err)
	}

	// Through the HTTP API: register, pushes, config, health.
	srv := NewServer(testConfig(), s, &syncBuffer{})
	srv.Start(ctx)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	dev2 := dev + "-http"
	if code, body := do(t, "POST", ts.URL+"/api/register", `{"device":"`+dev2+`"}`); code != 201 {
		t.Fatalf("register = %d %s", code, body)
	}
	for i := 0; i < 5; i++ {
		if code, body := do(t, "POST", ts.URL+"/api/push", fmt.Sprintf(`{"device":%q,"rssi":-67,"seq":%d}`, dev2, i)); code != 202 {
			t.Fatalf("push = %d %s", code, body)
		}
	}
	if n, err := s.countPushes(ctx, dev2); err != nil || n != 5 {
		t.Fatalf("rows = %d %v, want 5", n, err)
	}
	var payload string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT payload FROM pushes WHERE device = ? ORDER BY id DESC LIMIT 1`), dev2).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(payload), &p); err != nil || p["seq"] != 4.0 || p["rssi"] != -67.0 {
		t.Errorf("stored payload = %s %v", payload, err)
	}
	if code, body := do(t, "GET", ts.URL+"/api/config?device="+dev2, ""); code != 200 || !strings.Contains(body, `"default":true`) {
		t.Errorf("config = %d %s", code, body)
	}
	if code, body := do(t, "GET", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("healthz = %d %s", code, body)
	}
}
