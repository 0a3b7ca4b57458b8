package judge

import (
	"crypto/md5"
	"encoding/hex"
	"sort"
	"strings"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// K6Summary is the merged result in the shape of k6's end-of-test summary data (what
// handleSummary() receives and --summary-export writes), so tools that read k6 summaries read
// fleetbench's: metrics with their values and thresholds, sub-metrics a threshold names, the
// checks by group, and the run's duration.
type K6Summary struct {
	Metrics   map[string]K6Metric `json:"metrics"`
	RootGroup K6Group             `json:"root_group"`
	Options   map[string]any      `json:"options"`
	State     map[string]any      `json:"state"`
}

// K6Metric is one metric or sub-metric as k6's summary has it.
type K6Metric struct {
	Type       string                 `json:"type"`
	Contains   string                 `json:"contains"`
	Values     map[string]float64     `json:"values"`
	Thresholds map[string]K6Threshold `json:"thresholds,omitempty"`
}

// K6Threshold says whether one threshold held.
type K6Threshold struct {
	OK bool `json:"ok"`
}

// K6Group is a group with its checks and subgroups.
type K6Group struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	ID     string    `json:"id"`
	Groups []K6Group `json:"groups"`
	Checks []K6Check `json:"checks"`
}

// K6Check is one check's counts.
type K6Check struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	ID     string `json:"id"`
	Passes uint64 `json:"passes"`
	Fails  uint64 `json:"fails"`
}

// summaryTrendStats are the trend values written: k6's defaults and p(99).
var summaryTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)", "p(99)"}

// BuildK6Summary renders the merged summary and the judged thresholds (spec and script) in k6's
// summary shape.
func BuildK6Summary(s *measure.Summary, judged []measure.ThresholdResult) K6Summary {
	out := K6Summary{
		Metrics:   map[string]K6Metric{},
		RootGroup: checkGroups(s.Checks),
		Options:   map[string]any{"summaryTrendStats": summaryTrendStats, "summaryTimeUnit": "", "noColor": true},
		State:     map[string]any{"isStdOutTTY": false, "isStdErrTTY": false, "testRunDurationMs": float64(s.Duration.Milliseconds())},
	}
	for name, m := range s.Metrics {
		out.Metrics[name] = k6Metric(m.Type, m.Contains, m.Stats)
	}
	for _, t := range judged {
		m, ok := out.Metrics[t.Metric]
		if !ok {
			m = subMetric(s, t.Metric)
		}
		if m.Thresholds == nil {
			m.Thresholds = map[string]K6Threshold{}
		}
		m.Thresholds[t.Expression] = K6Threshold{OK: t.Passed}
		out.Metrics[t.Metric] = m
	}
	return out
}

// subMetric is a threshold's tagged sub-metric, merged from the series its filter selects.
func subMetric(s *measure.Summary, key string) K6Metric {
	name, m, agg, err := s.SubMetric(key)
	if err != nil || m == nil {
		return K6Metric{Type: string(measure.BuiltinMetrics[name]), Values: map[string]float64{}}
	}
	return k6Metric(m.Type, m.Contains, measure.ComputeStats(m.Type, &agg, s.Duration.Seconds()))
}

func k6Metric(typ measure.MetricType, contains string, st measure.Stats) K6Metric {
	m := K6Metric{Type: string(typ), Contains: contains, Values: map[string]float64{}}
	if m.Contains == "" {
		m.Contains = "default"
	}
	switch typ {
	case measure.Counter:
		m.Values["count"], m.Values["rate"] = st.Sum, st.Rate
	case measure.Gauge:
		m.Values["value"], m.Values["min"], m.Values["max"] = st.Value, st.Min, st.Max
	case measure.Rate:
		m.Values["rate"], m.Values["passes"], m.Values["fails"] = st.Rate, float64(st.Passes), float64(st.Fails)
	case measure.Trend:
		for k, v := range map[string]float64{"avg": st.Avg, "min": st.Min, "med": st.Med, "max": st.Max,
			"p(90)": st.P90, "p(95)": st.P95, "p(99)": st.P99} {
			m.Values[k] = v
		}
	}
	return m
}

// checkGroups nests the checks by their group path ("::outer::inner") as k6's root_group does.
func checkGroups(checks []measure.Check) K6Group {
	root := K6Group{ID: id(""), Groups: []K6Group{}, Checks: []K6Check{}}
	for _, c := range checks {
		g := &root
		path := ""
		for _, part := range strings.Split(strings.TrimPrefix(c.Group, "::"), "::") {
			if part == "" {
				continue
			}
			path += "::" + part
			g = child(g, part, path)
		}
		g.Checks = append(g.Checks, K6Check{Name: c.Name, Path: path + "::" + c.Name, ID: id(path + "::" + c.Name),
			Passes: c.Passes, Fails: c.Fails})
	}
	return root
}

func child(g *K6Group, name, path string) *K6Group {
	for i := range g.Groups {
		if g.Groups[i].Name == name {
			return &g.Groups[i]
		}
	}
	g.Groups = append(g.Groups, K6Group{Name: name, Path: path, ID: id(path), Groups: []K6Group{}, Checks: []K6Check{}})
	sort.SliceStable(g.Groups, func(i, j int) bool { return g.Groups[i].Name < g.Groups[j].Name })
	for i := range g.Groups {
		if g.Groups[i].Name == name {
			return &g.Groups[i]
		}
	}
	return nil
}

// id is k6's: the hex MD5 of the group's or check's path.
func id(path string) string {
	sum := md5.Sum([]byte(path)) //nolint:gosec // an identifier, as k6 makes it
	return hex.EncodeToString(sum[:])
}
