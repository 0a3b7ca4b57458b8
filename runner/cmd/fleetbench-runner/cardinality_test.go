package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// explodingTags requests a new URL every iteration without a name tag, so k6 names each
// request by its URL, and a threshold on the name tag makes the runner keep it.
const explodingTags = `
import http from 'k6/http';
export const options = {
  scenarios: { main: { executor: 'shared-iterations', vus: 4, iterations: 1500, maxDuration: '60s' } },
  thresholds: { 'http_req_duration{name:home}': ['p(95)<5000'] },
};
export default function () {
  http.get(__ENV.TARGET + '/orders/' + __ITER + '-' + __VU);
}
`

// TestExplodingTagsStayBounded: 1500 distinct URLs become at most MaxSeriesPerMetric series
// per metric; every request is still counted, and the envelope names the metric and the tag,
// which the status turns into a warning saying what to change.
func TestExplodingTagsStayBounded(t *testing.T) {
	bin := buildRunner(t)
	tg := newTarget(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "script.js")
	if err := os.WriteFile(js, []byte(explodingTags), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := runK6Process(bin, dir, []string{"TARGET=" + tg.srv.URL},
		"run", "--quiet", "--no-thresholds", "--summary-mode=disabled", "--out", "fleetbench", js)
	if err != nil || code != 0 {
		t.Fatalf("k6 exit %d: %v\n%s", code, err, out)
	}
	e, err := measure.ExtractEnvelope(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := measure.Merge(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Metrics["http_reqs"].Stats.Sum; got != 1500 || tg.hits.Load() != 1500 {
		t.Errorf("http_reqs %g, target saw %d, want 1500", got, tg.hits.Load())
	}
	limit := measure.DefaultCollectorConfig.MaxSeriesPerMetric
	for _, m := range e.Metrics {
		if len(m.Series) > limit+1 {
			t.Errorf("%s kept %d series, limit %d plus the overflow series", m.Name, len(m.Series), limit)
		}
	}
	var named bool
	for _, o := range e.Overflows {
		if o.Metric == "http_req_duration" && o.Tag == "name" {
			named = true
			t.Logf("%s (runner max RSS %d MiB)", o.Message(), e.CPU.MaxRSSBytes>>20)
			if !strings.Contains(o.Message(), `tag "name"`) {
				t.Errorf("message %q", o.Message())
			}
		}
	}
	if !named {
		t.Errorf("overflows %+v: want http_req_duration's blamed on tag name", e.Overflows)
	}
}
