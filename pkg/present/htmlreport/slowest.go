package htmlreport

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// TraceIDPlaceholder is where a trace URL template (TestRunInput.TraceURL) takes the trace id,
// e.g. http://jaeger.example/trace/{traceID} or https://grafana.example/explore?...{traceID}.
const TraceIDPlaceholder = "{traceID}"

// The slowest requests come from the full result's timeline, which anyone who may write a
// ConfigMap in the namespace could have written: what is shown is bounded, every string is
// escaped by the template, and a trace id is linked only when it is hex.
const (
	// maxSlowRows bounds the table.
	maxSlowRows = measure.SlowestOfRun
	// maxSlowPoints bounds the latency chart's dots: K (at most 50) in each of 60 windows.
	maxSlowPoints = measure.MaxSlowest * 60
)

// CheckTraceURL says whether tmpl is a trace URL template the report may link through: an
// absolute http or https URL with TraceIDPlaceholder in it.
func CheckTraceURL(tmpl string) error {
	if !strings.Contains(tmpl, TraceIDPlaceholder) {
		return fmt.Errorf("trace URL %q has no %s", tmpl, TraceIDPlaceholder)
	}
	u, err := url.Parse(strings.ReplaceAll(tmpl, TraceIDPlaceholder, "0"))
	if err != nil {
		return fmt.Errorf("trace URL %q: %w", tmpl, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("trace URL %q is not an absolute http or https URL", tmpl)
	}
	return nil
}

// traceHref is the link to trace id through tmpl (checked), or "" without a template or for an
// id that is not hex; the template's escaping then makes it an attribute value.
func traceHref(tmpl, id string) string {
	if tmpl == "" || !measure.ValidTraceID(id) {
		return ""
	}
	return strings.ReplaceAll(tmpl, TraceIDPlaceholder, id)
}

// slowRow is one row of the slowest requests' table.
type slowRow struct {
	Duration string
	// At is the time into the load the request started (+12.3s), or its UTC time when the
	// load's start is unknown; StartUTC is always the UTC time.
	At, StartUTC                          string
	Name, URL, Method, Status, Runner, ID string
	TraceHref                             string
}

// slowRows are the run's slowest requests: the timeline's (up to measure.SlowestOfRun), or
// status' when the full result was not kept.
func slowRows(tl *judge.Timeline, r *v1alpha1.Results, traceURL string) []slowRow {
	var rows []slowRow
	if tl != nil && len(tl.SlowestOfRun) > 0 {
		for _, s := range tl.SlowestOfRun[:min(len(tl.SlowestOfRun), maxSlowRows)] {
			if math.IsNaN(s.DurationMillis) || math.IsInf(s.DurationMillis, 0) {
				continue
			}
			s = measure.CutSlow(s)
			start := time.Unix(0, s.StartUnixNano)
			rows = append(rows, slowRow{Duration: judge.Millis(s.DurationMillis), At: sinceLoad(start, tl.LoadStart),
				StartUTC: utc(start), Name: s.Name, URL: s.URL, Method: s.Method, Status: s.Status, Runner: s.Runner,
				ID: s.TraceID, TraceHref: traceHref(traceURL, s.TraceID)})
		}
		return rows
	}
	if r == nil {
		return nil
	}
	for _, s := range r.SlowestRequests[:min(len(r.SlowestRequests), maxSlowRows)] {
		id := s.TraceID
		if !measure.ValidTraceID(id) {
			id = ""
		}
		rows = append(rows, slowRow{Duration: s.Duration, At: utc(s.Start.Time), StartUTC: utc(s.Start.Time), Name: s.Name,
			URL: s.URL, Method: s.Method, Status: s.Status, Runner: s.Runner, ID: id, TraceHref: traceHref(traceURL, id)})
	}
	return rows
}

// sinceLoad is start as time into the load, e.g. 12.345s.
func sinceLoad(start, load time.Time) string {
	if load.IsZero() {
		return utc(start)
	}
	return fmt.Sprintf("%.3fs", start.Sub(load).Seconds())
}

// withSlowest puts each window's slowest requests on the latency chart as dots at their start
// and duration.
func withSlowest(charts []Chart, tl *judge.Timeline) []Chart {
	if tl == nil || len(tl.Slowest) == 0 {
		return charts
	}
	for i := range charts {
		if charts[i].Name != "latency" {
			continue
		}
		c := &charts[i]
		for _, s := range tl.Slowest[:min(len(tl.Slowest), maxSlowPoints)] {
			if math.IsNaN(s.DurationMillis) || math.IsInf(s.DurationMillis, 0) || s.DurationMillis < 0 {
				continue
			}
			label := fmt.Sprintf("%s %s", judge.Millis(s.DurationMillis), measure.CutSlow(s).Name)
			c.Points = append(c.Points, Point{X: unixSeconds(time.Unix(0, s.StartUnixNano)), Y: s.DurationMillis, Label: label})
		}
		if len(c.Points) > 0 {
			c.Note = "Dots: each window's slowest requests, where they started and how long they took."
		}
	}
	return charts
}
