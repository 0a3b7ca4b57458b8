package fidelity

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// Compare says where a fleet's result (got, in k6's summary shape) differs from one k6
// process's own summary (want) of a separate execution of the same script: every threshold
// verdict, every counter's count, every rate's passes and fails, every check's passes and fails.
// Timings and byte counts are not compared: separate executions differ in them (the byte counts
// by the Host header and each process's own connections). Gauges are last values, which a
// fleet sums, so they are not compared either.
func Compare(want, got judge.K6Summary) []string {
	diffs := CompareVerdicts(want, got)
	gotMetrics := canonicalMetrics(got)
	for _, name := range slices.Sorted(maps.Keys(want.Metrics)) {
		w := want.Metrics[name]
		g, found := gotMetrics[CanonicalKey(name)]
		base, _, _ := strings.Cut(name, "{")
		switch {
		case base == "data_sent" || base == "data_received":
		case w.Type == "counter":
			if g.Values["count"] != w.Values["count"] {
				diffs = append(diffs, fmt.Sprintf("%s count: k6 %g, the fleet %g (found %v)", name, w.Values["count"], g.Values["count"], found))
			}
		case w.Type == "rate":
			if g.Values["passes"] != w.Values["passes"] || g.Values["fails"] != w.Values["fails"] {
				diffs = append(diffs, fmt.Sprintf("%s passes/fails: k6 %g/%g, the fleet %g/%g (found %v)",
					name, w.Values["passes"], w.Values["fails"], g.Values["passes"], g.Values["fails"], found))
			}
		}
	}
	wantChecks, gotChecks := checkCounts(want.RootGroup), checkCounts(got.RootGroup)
	for _, k := range slices.Sorted(maps.Keys(wantChecks)) {
		if g, ok := gotChecks[k]; !ok || g != wantChecks[k] {
			diffs = append(diffs, fmt.Sprintf("check %q: k6 %d passes/%d fails, the fleet %d/%d (found %v)",
				k, wantChecks[k][0], wantChecks[k][1], g[0], g[1], ok))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(gotChecks)) {
		if _, ok := wantChecks[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("check %q: the fleet has it, k6 does not", k))
		}
	}
	return diffs
}

// CompareVerdicts says where the fleet's threshold verdicts differ from k6's: each threshold
// k6 judged has the same verdict, and the fleet judged no other. It is all that compares for a
// script that stops early on purpose, as how much ran before the stop differs.
func CompareVerdicts(want, got judge.K6Summary) []string {
	var diffs []string
	gotMetrics := canonicalMetrics(got)
	for _, name := range slices.Sorted(maps.Keys(want.Metrics)) {
		w := want.Metrics[name]
		g := gotMetrics[CanonicalKey(name)]
		for _, expr := range slices.Sorted(maps.Keys(w.Thresholds)) {
			ok := w.Thresholds[expr].OK
			if gth, judged := g.Thresholds[expr]; !judged {
				diffs = append(diffs, fmt.Sprintf("threshold %s %q: k6 ok=%v, the fleet judged nothing", name, expr, ok))
			} else if gth.OK != ok {
				diffs = append(diffs, fmt.Sprintf("threshold %s %q: k6 ok=%v, the fleet ok=%v", name, expr, ok, gth.OK))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got.Metrics)) {
		for _, expr := range slices.Sorted(maps.Keys(got.Metrics[name].Thresholds)) {
			if !hasThreshold(want, name, expr) {
				diffs = append(diffs, fmt.Sprintf("threshold %s %q: judged by the fleet, not by k6", name, expr))
			}
		}
	}
	return diffs
}

func canonicalMetrics(s judge.K6Summary) map[string]judge.K6Metric {
	out := make(map[string]judge.K6Metric, len(s.Metrics))
	for name, m := range s.Metrics {
		out[CanonicalKey(name)] = m
	}
	return out
}

func hasThreshold(s judge.K6Summary, name, expr string) bool {
	for n, m := range s.Metrics {
		if _, ok := m.Thresholds[expr]; ok && CanonicalKey(n) == CanonicalKey(name) {
			return true
		}
	}
	return false
}

// checkCounts maps "group path / check name" to its passes and fails.
func checkCounts(root judge.K6Group) map[string][2]uint64 {
	out := map[string][2]uint64{}
	var walk func(g judge.K6Group)
	walk = func(g judge.K6Group) {
		for _, c := range g.Checks {
			out[g.Path+" / "+c.Name] = [2]uint64{c.Passes, c.Fails}
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// CanonicalKey writes a threshold key or sub-metric name with sorted, unquoted tags, so
// `http_reqs{ name: 'home' }` (as written) and k6's `http_reqs{name: 'home'}` compare equal.
func CanonicalKey(key string) string {
	name, filter, err := measure.ParseMetricSelector(key)
	if err != nil || filter == nil {
		return key
	}
	kv := make([]string, 0, len(filter))
	for k, v := range filter {
		kv = append(kv, k+":"+v)
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}
