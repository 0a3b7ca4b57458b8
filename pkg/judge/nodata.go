package judge

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// judgeNoData warns, once per threshold key, that thresholds matched no sample and were judged
// on no data, as k6 would (zero values, or a rate skipped): a tag no request carries passes
// silently in k6. With policy Fail they fail instead. A threshold that could not be evaluated
// at all (Error) has failed already and is left alone.
func judgeNoData(evaluated []measure.ThresholdResult, policy v1alpha1.ThresholdsOnNoData) []string {
	exprs := map[string][]string{}
	passed := map[string]bool{}
	for i := range evaluated {
		t := &evaluated[i]
		if !t.NoData || t.Error != "" {
			continue
		}
		if policy == v1alpha1.ThresholdsOnNoDataFail {
			t.Passed = false
		}
		if _, seen := passed[t.Metric]; !seen {
			passed[t.Metric] = true
		}
		passed[t.Metric] = passed[t.Metric] && t.Passed
		exprs[t.Metric] = append(exprs[t.Metric], t.Expression)
	}
	keys := make([]string, 0, len(exprs))
	for k := range exprs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, key := range keys {
		name, tags, _ := measure.ParseMetricSelector(key) // evaluated without Error: it parses
		what := fmt.Sprintf("the runners recorded no %s sample", name)
		if len(tags) > 0 {
			what = fmt.Sprintf("no %s sample carried the tags %s (tag the requests, e.g. {tags: {name: 'push'}} in their params, or fix the key)",
				name, tagList(tags))
		}
		judged := "it failed on the empty metric's zero values, as in k6"
		switch {
		case policy == v1alpha1.ThresholdsOnNoDataFail:
			judged = "it failed (spec.thresholdsOnNoData: Fail)"
		case passed[key]:
			judged = "it passed, as k6 passes it on an empty metric; set spec.thresholdsOnNoData: Fail to fail it instead"
		}
		out = append(out, clip(fmt.Sprintf("threshold %s %s was judged on no data: %s; %s",
			key, strings.Join(exprs[key], ", "), what, judged), 1024))
	}
	return out
}

func tagList(tags map[string]string) string {
	parts := make([]string, 0, len(tags))
	for k, v := range tags {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// clip keeps a warning within the API's 1024 characters per item, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n-3])
	if len(r) > 0 && r[len(r)-1] == '\uFFFD' {
		r = r[:len(r)-1]
	}
	return string(r) + "..."
}
