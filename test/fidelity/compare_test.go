package fidelity

import (
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/judge"
)

func summary(reqs, passes float64, thresholdOK bool, checkPasses uint64) judge.K6Summary {
	return judge.K6Summary{
		Metrics: map[string]judge.K6Metric{
			"http_reqs": {Type: "counter", Values: map[string]float64{"count": reqs}},
			"data_sent": {Type: "counter", Values: map[string]float64{"count": reqs * 97}},
			"checks":    {Type: "rate", Values: map[string]float64{"passes": passes, "fails": 1}},
			"http_reqs{name: 'home'}": {Type: "counter", Values: map[string]float64{"count": reqs},
				Thresholds: map[string]judge.K6Threshold{"count>10": {OK: thresholdOK}}},
		},
		RootGroup: judge.K6Group{Checks: []judge.K6Check{{Name: "is 200", Passes: checkPasses}}},
	}
}

func TestCompare(t *testing.T) {
	k6 := summary(30, 29, true, 29)
	sameButBytes := summary(30, 29, true, 29)
	sameButBytes.Metrics["data_sent"] = judge.K6Metric{Type: "counter", Values: map[string]float64{"count": 1}}
	// fleetbench writes sub-metric names as k6 normalizes them; the corpus as its author did.
	renamed := summary(30, 29, true, 29)
	renamed.Metrics["http_reqs{name:home}"] = renamed.Metrics["http_reqs{name: 'home'}"]
	delete(renamed.Metrics, "http_reqs{name: 'home'}")
	extra := summary(30, 29, true, 29)
	extra.Metrics["iterations"] = judge.K6Metric{Type: "counter", Values: map[string]float64{"count": 30},
		Thresholds: map[string]judge.K6Threshold{"count>1": {OK: true}}}
	for _, tc := range []struct {
		name     string
		got      judge.K6Summary
		want     []string // each diff, by a part of it
		verdicts int      // how many of them CompareVerdicts reports
	}{
		{name: "equal", got: k6},
		{name: "byte counts differ across executions", got: sameButBytes},
		{name: "sub-metric written another way", got: renamed},
		{name: "a request more", got: summary(31, 29, true, 29), want: []string{"http_reqs count: k6 30, the fleet 31", "http_reqs{name: 'home'} count"}},
		{name: "a rate's passes", got: summary(30, 28, true, 29), want: []string{"checks passes/fails: k6 29/1, the fleet 28/1"}},
		{name: "a verdict", got: summary(30, 29, false, 29), want: []string{`"count>10": k6 ok=true, the fleet ok=false`}, verdicts: 1},
		{name: "a threshold k6 did not judge", got: extra, want: []string{`threshold iterations "count>1": judged by the fleet, not by k6`}, verdicts: 1},
		{name: "a check's passes", got: summary(30, 29, true, 28), want: []string{`check " / is 200": k6 29 passes/0 fails, the fleet 28/0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := Compare(k6, tc.got)
			if len(diffs) != len(tc.want) {
				t.Fatalf("diffs %q, want %d: %q", diffs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(diffs[i], w) {
					t.Errorf("diff %d %q, want it to say %q", i, diffs[i], w)
				}
			}
			if got := CompareVerdicts(k6, tc.got); len(got) != tc.verdicts {
				t.Errorf("CompareVerdicts: %q, want %d", got, tc.verdicts)
			}
		})
	}
}
