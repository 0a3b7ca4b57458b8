package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// buildRunner compiles this command once per test binary; the Go build
// cache makes repeated runs cheap.
func buildRunner(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the k6 binary")
	}
	bin := filepath.Join(t.TempDir(), "fleetbench-runner")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build: %v", err)
	}
	return bin
}

const script = `
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Trend } from 'k6/metrics';
import exec from 'k6/execution';

const server = new Trend('server_ms', true);

export const options = {
  scenarios: {
    main: { executor: 'shared-iterations', vus: 3, iterations: 90, maxDuration: '20s' },
  },
  thresholds: {
    http_req_failed: ['rate<0.5'],
    checks: ['rate>0.5'],
    http_req_duration: [{ threshold: 'p(99)<60000', abortOnFail: true, delayAbortEval: '5s' }],
  },
};

export default function () {
  const r = http.get(__ENV.TARGET + (exec.scenario.iterationInTest % 10 === 0 ? '/fail' : '/ok'));
  check(r, { 'status is 200': (res) => res.status === 200 });
  server.add(r.timings.waiting);
  if (__ENV.SLOW) sleep(0.2);
}
`

type target struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newTarget(t *testing.T) *target {
	tg := &target{}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("ok")) //nolint:errcheck
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func runK6(t *testing.T, bin string, tg *target, extraEnv []string, signalAfter time.Duration) []byte {
	t.Helper()
	return runK6Signalled(t, bin, tg, extraEnv, signalAfter)
}

// runK6Args runs the script to its end with extra k6 flags.
func runK6Args(t *testing.T, bin string, tg *target, extraEnv []string, args ...string) []byte {
	t.Helper()
	return runK6Signalled(t, bin, tg, extraEnv, 0, args...)
}

func runK6Signalled(t *testing.T, bin string, tg *target, extraEnv []string, signalAfter time.Duration, extraArgs ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	js := filepath.Join(dir, "script.js")
	if err := os.WriteFile(js, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The flags runner Jobs pass: k6 judges no thresholds itself, yet the script's still reach
	// the output for the merged evaluation (TestRunnerReportsExactCounts checks them).
	args := append([]string{"run", "--quiet", "--no-thresholds", "--summary-mode=disabled", "--out", "fleetbench"}, extraArgs...)
	cmd := exec.CommandContext(ctx, bin, append(args, js)...)
	cmd.Env = append(os.Environ(), "TARGET="+tg.srv.URL, "K6_FLEETBENCH_WINDOW=1s", "K6_NO_USAGE_REPORT=true", "HOME="+dir)
	cmd.Env = append(cmd.Env, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if signalAfter > 0 {
		time.Sleep(signalAfter)
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("k6 did not finish: %s", out.Bytes())
	}
	if signalAfter == 0 && err != nil {
		t.Fatalf("k6: %v\n%s", err, out.Bytes())
	}
	return out.Bytes()
}

// The envelope's request count equals what the server saw, and the script's
// thresholds travel along for global evaluation.
func TestRunnerReportsExactCounts(t *testing.T) {
	bin := buildRunner(t)
	tg := newTarget(t)
	log := runK6(t, bin, tg, nil, 0)

	e, err := measure.ExtractEnvelope(log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	s, err := measure.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Final || e.Aborted || e.K6Version != "v2.2.0" {
		t.Errorf("envelope: final=%v aborted=%v k6=%q", e.Final, e.Aborted, e.K6Version)
	}
	hits := uint64(tg.hits.Load())
	if hits != 90 {
		t.Fatalf("server saw %d requests, want 90", hits)
	}
	for _, m := range []string{"http_reqs", "http_req_duration", "iterations", "server_ms"} {
		if got := s.Metrics[m].Stats.Count; got != hits {
			t.Errorf("%s count = %d, want %d", m, got, hits)
		}
	}
	if got := s.Metrics["http_req_failed"].Stats.Passes; got != 9 {
		t.Errorf("failed requests = %d, want 9", got)
	}
	if len(s.Checks) != 1 || s.Checks[0].Passes != 81 || s.Checks[0].Fails != 9 {
		t.Errorf("checks: %+v", s.Checks)
	}
	for _, sr := range s.Metrics["http_reqs"].Series {
		if sr.Tags["scenario"] != "main" {
			t.Errorf("series without scenario: %v", sr.Tags)
		}
	}
	if len(s.Thresholds) != 3 {
		t.Errorf("script thresholds: %+v", s.Thresholds)
	}
	// k6 judges no threshold itself (--no-thresholds), yet the abortOnFail one travels along
	// for the operator's fleet-wide judgement.
	if want := []measure.AbortThreshold{{Metric: "http_req_duration", Expression: "p(99)<60000", DelayNanos: int64(5 * time.Second)}}; !reflect.DeepEqual(e.AbortOnFail, want) {
		t.Errorf("abortOnFail = %+v, want %+v", e.AbortOnFail, want)
	}
	for _, th := range s.Thresholds {
		if !th.Passed {
			t.Errorf("threshold %s %s failed: %+v", th.Metric, th.Expression, th)
		}
	}
	if s.Metrics["data_received"].Stats.Sum <= 0 || e.CPU.UserSeconds+e.CPU.SystemSeconds <= 0 {
		t.Errorf("data_received %g, cpu %+v", s.Metrics["data_received"].Stats.Sum, e.CPU)
	}
}

// SIGTERM mid-run: k6 stops the test and the output still prints an
// envelope whose counts match the requests actually made.
func TestRunnerReportsWhenInterrupted(t *testing.T) {
	bin := buildRunner(t)
	tg := newTarget(t)
	log := runK6(t, bin, tg, []string{"SLOW=1"}, 2*time.Second)
	e, err := measure.ExtractEnvelope(log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	s, err := measure.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	hits := uint64(tg.hits.Load())
	if hits == 0 || hits >= 90 {
		t.Fatalf("server saw %d requests; the interrupt should land mid-run", hits)
	}
	if got := s.Metrics["http_reqs"].Stats.Count; got != hits {
		t.Errorf("http_reqs = %d, server saw %d", got, hits)
	}
	if !e.Aborted || e.Error == "" {
		t.Errorf("interrupted run not marked aborted: %+v", e)
	}
}
