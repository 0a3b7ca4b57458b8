package judge

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A threshold on a sub-metric no sample matched is named in a warning, judged as k6 judges it
// by default (p(95) of nothing is 0: it passes), and fails the verdict with thresholdsOnNoData
// Fail; thresholds with data are judged as before either way.
func TestThresholdsOnNoData(t *testing.T) {
	load := tw.RunnerLoad{Runner: "r0", Requests: 100, Start: time.Unix(1_700_000_000, 0), Duration: 10 * time.Second}
	thresholds := map[string]v1alpha1.ThresholdList{
		"http_req_duration{scenario:push}": {"p(95)<300"},
		"http_req_duration":                {"p(95)<300"},
	}
	for _, tc := range []struct {
		policy     v1alpha1.ThresholdsOnNoData
		verdict    v1alpha1.Verdict
		warning    string
		failedWith string
	}{
		{"", v1alpha1.VerdictPassed, "it passed, as k6 passes it on an empty metric; set spec.thresholdsOnNoData: Fail", ""},
		{v1alpha1.ThresholdsOnNoDataPass, v1alpha1.VerdictPassed, "it passed", ""},
		{v1alpha1.ThresholdsOnNoDataFail, v1alpha1.VerdictFailed, "it failed (spec.thresholdsOnNoData: Fail)",
			"http_req_duration{scenario:push} p(95)<300 (no data, spec.thresholdsOnNoData: Fail)"},
	} {
		o := BuildWith(merged(t, load), thresholds, 1, Options{NoData: tc.policy})
		if verdictOf(o) != tc.verdict {
			t.Errorf("policy %q: verdict %s, want %s (failed %q)", tc.policy, verdictOf(o), tc.verdict, o.FailedThresholds)
		}
		w := o.Results.Warnings
		if len(w) != 1 || !strings.Contains(w[0], "threshold http_req_duration{scenario:push} p(95)<300 was judged on no data") ||
			!strings.Contains(w[0], "no http_req_duration sample carried the tags scenario=push") || !strings.Contains(w[0], tc.warning) {
			t.Errorf("policy %q: warnings %q, want one naming the metric and tag, saying %q", tc.policy, w, tc.warning)
		}
		if tc.failedWith != "" && (len(o.FailedThresholds) != 1 || o.FailedThresholds[0] != tc.failedWith) {
			t.Errorf("policy %q: failed %q, want only %q", tc.policy, o.FailedThresholds, tc.failedWith)
		}
		for _, th := range o.Results.Thresholds {
			if th.Metric == "http_req_duration" && !th.Passed {
				t.Errorf("policy %q: the threshold with data failed: %+v", tc.policy, th)
			}
		}
	}
}
