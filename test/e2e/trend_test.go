//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// trendReleases and trendSlowFrom: fourteen releases of the sample backend, the eighth on
// holding each push twice as long (20 ms, then 40 ms). The permutation test (199 permutations)
// can give at best p 0.005, and a perfect split of n runs is matched by 2 of C(n, n/2) random
// orders: 5 against 5 (2 in 252) lands at p 0.01 or just above about as often as not, so a
// real 10-run series was not called a change; 7 against 7 (2 in 3432) reaches 0.005.
const (
	trendReleases = 14
	trendSlowFrom = 8
)

// TestTrendFindsTheSlowRelease (issue 38, the trend across releases): kept runs of the sample
// backend, one deliberate slowdown in the middle. The last release's spec.trend names the
// change point of latency at the eighth, for the worse, in status.trend (onShift Warn: it
// passes, and says so), and `kubectl fleetbench trend -l test=trend` finds the same run.
func TestTrendFindsTheSlowRelease(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-trend")

	var last *v1alpha1.TestRun
	for i := 1; i <= trendReleases; i++ {
		delay := "20ms"
		if i >= trendSlowFrom {
			delay = "40ms"
		}
		run := releaseRun(ns, fmt.Sprint("t", i), delay, nil)
		run.Labels = map[string]string{"test": "trend", "release": fmt.Sprint("1.", i, ".0")}
		run.Spec.Load.Duration = "15s" // whole-run values are what a trend reads
		if i == trendReleases {
			run.Spec.Trend = &v1alpha1.TrendSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"test": "trend"}},
				OrderBy: "label:release", LastRuns: trendReleases - trendSlowFrom + 1, OnShift: v1alpha1.TrendShiftWarn}
		}
		last = e.run(t, run, 3*time.Minute)
		requirePassed(t, last)
	}

	tr := last.Status.Trend
	if tr == nil {
		t.Fatalf("no status.trend: %s", last.Status.Message)
	}
	t.Logf("status.trend: %d runs %s … %s: %s", tr.Runs, tr.First, tr.Last, tr.Message)
	for _, s := range tr.Shifts {
		t.Logf("  %s %s from %s: %s → %s (%s %%, p %s) %s", s.Metric, s.Stat, s.Run, s.Before, s.After, s.ShiftPercent, s.PValue, s.Direction)
	}
	want := fmt.Sprint("ingest-t", trendSlowFrom)
	found := false
	for _, s := range tr.Shifts {
		if strings.HasPrefix(s.Metric, "latency") && s.Run == want && s.Direction == "worse" {
			found = true
		}
		if s.Run != want {
			t.Errorf("a change point at %s (%s), want only the slowdown's run %s", s.Run, s.Metric, want)
		}
	}
	if tr.Runs != trendReleases || !found {
		t.Fatalf("status.trend over %d runs, want %d with latency shifting for the worse at %s", tr.Runs, trendReleases, want)
	}
	if !strings.Contains(last.Status.Message, "shifted for the worse over its kept runs") {
		t.Errorf("message %q does not say the shift", last.Status.Message)
	}

	out, code := e.plugin(t, "trend", "-n", ns, "-l", "test=trend", "--order-by", "label:release", "--format", "json")
	if code != 0 {
		t.Fatalf("kubectl fleetbench trend exit %d:\n%s", code, out)
	}
	var doc struct {
		Runs []struct {
			Name string `json:"name"`
		} `json:"runs"`
		Metrics []struct {
			Name         string `json:"name"`
			ChangePoints []struct {
				Index     int    `json:"index"`
				Direction string `json:"direction"`
			} `json:"changePoints"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("trend --format json: %v\n%s", err, out)
	}
	pluginFound := false
	for _, m := range doc.Metrics {
		for _, cp := range m.ChangePoints {
			if strings.HasPrefix(m.Name, "latency") && cp.Index < len(doc.Runs) && doc.Runs[cp.Index].Name == want && cp.Direction == "worse" {
				pluginFound = true
			}
		}
	}
	if len(doc.Runs) != trendReleases || !pluginFound {
		t.Errorf("kubectl fleetbench trend: %d runs, latency's change point at %s found: %t\n%s", len(doc.Runs), want, pluginFound, out)
	}
}
