package output

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"go.k6.io/k6/v2/lib"
	_ "go.k6.io/k6/v2/lib/executor" // registers the executors' configs
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
)

func scenarios(t *testing.T, js string) lib.Options {
	t.Helper()
	var opts lib.Options
	if err := json.Unmarshal([]byte(`{"scenarios":`+js+`}`), &opts); err != nil {
		t.Fatal(err)
	}
	return opts
}

// Without K6_FLEETBENCH_WINDOW (the spec did not give the run's length), the runner chooses its
// windows from the script's plan: 20 to 40 windows of the load, whatever its gracefulStop; a
// scenario bounded only by maxDuration starts narrow and doubles.
func TestWindowFollowsTheScriptsPlan(t *testing.T) {
	for _, tc := range []struct {
		name, scenarios string
		want            time.Duration
	}{
		{"the quickstart: 30 s of arrival rate, 30 s gracefulStop", `{"load": {"executor": "constant-arrival-rate", "rate": 200, "timeUnit": "1s", "duration": "30s", "preAllocatedVUs": 100}}`, time.Second},
		{"10 s of constant VUs", `{"load": {"executor": "constant-vus", "vus": 10, "duration": "10s"}}`, 250 * time.Millisecond},
		{"stages: 1 m up, 3 m, 1 m down", `{"ramp": {"executor": "ramping-vus", "stages": [{"duration": "1m", "target": 50}, {"duration": "3m", "target": 50}, {"duration": "1m", "target": 0}]}}`, 10 * time.Second},
		{"stages of 60 s (and a 30 s gracefulRampDown)", `{"ramp": {"executor": "ramping-vus", "stages": [{"duration": "30s", "target": 5}, {"duration": "30s", "target": 0}]}}`, 2 * time.Second},
		{"ramping arrival rate over 90 s", `{"r": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 5, "stages": [{"duration": "90s", "target": 100}]}}`, 3 * time.Second},
		{"a second scenario starting at 20 s for 20 s", `{"a": {"executor": "constant-vus", "vus": 1, "duration": "10s"}, "b": {"executor": "constant-vus", "vus": 1, "duration": "20s", "startTime": "20s"}}`, time.Second},
		{"an hour", `{"soak": {"executor": "constant-vus", "vus": 1, "duration": "1h"}}`, 10 * time.Second},
		{"iterations, bounded by maxDuration only", `{"it": {"executor": "shared-iterations", "vus": 2, "iterations": 100}}`, measure.OpenEndedWindow},
		{"iterations per VU beside a timed scenario", `{"a": {"executor": "constant-vus", "vus": 1, "duration": "30s"}, "b": {"executor": "per-vu-iterations", "vus": 1, "iterations": 3}}`, measure.OpenEndedWindow},
	} {
		if got := windowForScript(scenarios(t, tc.scenarios)); got != tc.want {
			t.Errorf("%s: window %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := windowForScript(lib.Options{}); got != measure.DefaultWindow {
		t.Errorf("no scenarios: %s, want %s", got, measure.DefaultWindow)
	}
}

// The operator's K6_FLEETBENCH_WINDOW wins over the script's plan.
func TestOperatorsWindowWins(t *testing.T) {
	opts := scenarios(t, `{"load": {"executor": "constant-vus", "vus": 1, "duration": "30s"}}`)
	for env, want := range map[string]time.Duration{"": time.Second, "3s": 3 * time.Second} {
		o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_WINDOW": env}, ScriptOptions: opts, StdOut: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		if o.cfg.Collector.Window != want {
			t.Errorf("K6_FLEETBENCH_WINDOW=%q: window %s, want %s", env, o.cfg.Collector.Window, want)
		}
	}
}
