package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// arrivalRate is the quickstart's shape, shortened: an arrival-rate scenario whose length only
// the script gives, with pre-allocated VUs.
const arrivalRate = `
import http from 'k6/http';
export const options = {
  scenarios: {
    load: { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1s', duration: '3s', preAllocatedVUs: 20 },
  },
};
export default function () { http.get(__ENV.TARGET + '/ok'); }
`

// Two real runners of a script-only run, as the operator starts them (a segment each, no
// K6_FLEETBENCH_WINDOW): each chooses its windows from the script's plan (3 s: 100 ms, not the
// 10 s that left one window), every request is counted once, and the merged VUs allocated are
// the 20 pre-allocated over the fleet, the VUs in use at most those.
func TestScriptOnlyRunGetsTwentyWindows(t *testing.T) {
	bin := buildRunner(t)
	tg := newTarget(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "script.js")
	if err := os.WriteFile(js, []byte(arrivalRate), 0o644); err != nil {
		t.Fatal(err)
	}
	envs := make([]measure.Envelope, 2)
	var wg sync.WaitGroup
	for i, segment := range []string{"0:1/2", "1/2:1"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--quiet", "--no-thresholds", "--summary-mode=disabled", "--out", "fleetbench",
				"--execution-segment", segment, "--execution-segment-sequence", "0,1/2,1", js)
			cmd.Env = append(os.Environ(), "TARGET="+tg.srv.URL, "K6_NO_USAGE_REPORT=true", "HOME="+dir, "K6_FLEETBENCH_WINDOW=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Errorf("runner %d: %v\n%s", i, err, out.Bytes())
				return
			}
			e, err := measure.ExtractEnvelope(out.Bytes())
			if err != nil {
				t.Errorf("runner %d: %v\n%s", i, err, out.Bytes())
				return
			}
			envs[i] = e
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, e := range envs {
		if e.WindowNanos != int64(100*time.Millisecond) {
			t.Errorf("runner %d: windows of %s, want 100 ms (a 3 s script)", i, time.Duration(e.WindowNanos))
		}
	}
	s, err := measure.Merge(envs...)
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.Metrics["http_reqs"]
	if hits := uint64(tg.hits.Load()); reqs.Stats.Sum != float64(hits) || hits < 290 {
		t.Errorf("http_reqs %g, the server saw %d (want about 300)", reqs.Stats.Sum, hits)
	}
	if n := len(reqs.Windows); n < 20 {
		t.Errorf("%d windows with requests, want at least 20", n)
	}
	allocated, inUse := s.Metrics["vus_max"], s.Metrics["vus"]
	if allocated == nil || inUse == nil {
		t.Fatalf("vus_max %v, vus %v: k6's VU gauges are missing", allocated, inUse)
	}
	full := 0
	for _, w := range allocated.Windows {
		if w.Stats.Avg > 20 {
			t.Errorf("window at %s: %g VUs allocated, more than the 20 pre-allocated", w.Start, w.Stats.Avg)
		}
		if w.Stats.Avg == 20 {
			full++
		}
	}
	if full == 0 {
		t.Errorf("no window has the fleet's 20 VUs allocated: %+v", allocated.Windows)
	}
	for _, w := range inUse.Windows {
		if w.Stats.Avg < 0 || w.Stats.Avg > 20 {
			t.Errorf("window at %s: %g VUs in use, want 0 to 20", w.Start, w.Stats.Avg)
		}
	}
}
