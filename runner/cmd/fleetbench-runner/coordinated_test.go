package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/results"
)

const setupScript = `
import http from 'k6/http';
export const options = { vus: 2, iterations: 10 };
export function setup() {
  http.get(__ENV.TARGET + '/setup');
  return { token: 'abc' };
}
export default function (data) {
  http.get(__ENV.TARGET + '/work?token=' + data.token);
}
export function teardown(data) {
  http.get(__ENV.TARGET + '/teardown?token=' + data.token);
}
`

// TestOperatorRunsSetupAndTeardownOnce drives one runner the way the operator drives runner 0
// of a fleet: k6 started paused and lingering without its own setup and teardown; setup()
// through the REST API, its data handed over, the start, teardown() through the REST API once
// the load ended, and the release. Every request is counted once and the runner exits 0 with
// them all in its envelope.
func TestOperatorRunsSetupAndTeardownOnce(t *testing.T) {
	bin := buildRunner(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path+"?"+r.URL.RawQuery]++
		mu.Unlock()
	}))
	defer srv.Close()
	dir := t.TempDir()
	js := filepath.Join(dir, "script.js")
	if err := os.WriteFile(js, []byte(setupScript), 0o644); err != nil {
		t.Fatal(err)
	}
	api, live := loopbackAddr(t), loopbackAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--quiet", "--paused", "--linger", "--no-setup", "--no-teardown",
		"--address", api, "--no-thresholds", "--summary-mode=disabled", "--out", "fleetbench", js)
	cmd.Env = append(os.Environ(), "TARGET="+srv.URL, "K6_FLEETBENCH_LIVE="+live, "K6_NO_USAGE_REPORT=true", "HOME="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	call := func(method, url, body string) string {
		t.Helper()
		for {
			req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("%s %s: %v\n%s", method, url, err, out.String())
				}
				time.Sleep(100 * time.Millisecond) // k6 is still starting
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
			}
			return string(b)
		}
	}
	setup := call(http.MethodPost, "http://"+api+"/v1/setup", "")
	if !strings.Contains(setup, `"token":"abc"`) {
		t.Fatalf("setup answered %s", setup)
	}
	call(http.MethodPatch, "http://"+api+"/v1/status", `{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`)
	for {
		var st struct {
			Data struct {
				Attributes struct {
					Status  int  `json:"status"`
					Running bool `json:"running"`
				} `json:"attributes"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(call(http.MethodGet, "http://"+api+"/v1/status", "")), &st); err != nil {
			t.Fatal(err)
		}
		if st.Data.Attributes.Status >= 9 { // k6's ExecutionStatusEnded
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	call(http.MethodPost, "http://"+api+"/v1/teardown", "")
	call(http.MethodPost, "http://"+live+results.ReleasePath, "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("k6 after release: %v\n%s", err, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"/setup?": 1, "/work?token=abc": 10, "/teardown?token=abc": 1}
	if fmt.Sprint(hits) != fmt.Sprint(want) {
		t.Errorf("the target saw %v, want %v", hits, want)
	}
	e, err := results.ExtractEnvelope(out.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s, err := results.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Final || e.Aborted || s.Metrics["http_reqs"].Stats.Count != 12 {
		t.Errorf("final %v aborted %v (%s), %d requests in the envelope, want 12", e.Final, e.Aborted, e.Error, s.Metrics["http_reqs"].Stats.Count)
	}
}
