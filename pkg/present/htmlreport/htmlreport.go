// Package htmlreport writes a TestRun's or a CapacityPlan's report as one self-contained HTML
// file: the charting library, styles and data are inlined, so it opens with no network access.
// It renders what it is given and makes no client calls.
//
// The charts are drawn by uPlot (assets/, fetched by hack/report-assets.sh): every chart is an
// element with a data-chart attribute, and the page keeps the uPlot instances by that name in
// window.fleetbenchCharts (window.fleetbenchReady is true once they are drawn), which the
// browser test reads.
package htmlreport

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

//go:embed assets/uPlot.iife.min.js assets/uPlot.min.css assets/LICENSE assets/VERSION
var assets embed.FS

//go:embed templates/*.html templates/report.css templates/report.js
var templateFS embed.FS

// TestRunInput is what a TestRun's report shows. Timeline and Summary come from the full
// result ConfigMap and may be nil when it was not kept (the report then says so).
type TestRunInput struct {
	Run      *v1alpha1.TestRun
	Timeline *judge.Timeline
	Summary  *judge.K6Summary
	// Baseline is the kept record of status.comparison's baseline, whose series are drawn over
	// this run's charts; nil when it could not be read, BaselineMissing then says why.
	Baseline        *compare.Record
	BaselineMissing string
	// Generated is the time printed as the report's date; zero means now.
	Generated time.Time
	// TraceURL links each slow request's trace id to a trace UI: a URL with TraceIDPlaceholder
	// (CheckTraceURL); empty shows the ids without links.
	TraceURL string
}

// PlanInput is what a CapacityPlan's report shows: its table and its children (for peak steps
// and per-child links).
type PlanInput struct {
	Plan     *v1alpha1.CapacityPlan
	Children []v1alpha1.TestRun
	// ChildHref, when set, links each row's TestRun name to its own report (e.g. name+".html").
	ChildHref func(testRun string) string
	// Generated is the time printed as the report's date; zero means now.
	Generated time.Time
}

// page is what every report's layout needs.
type page struct {
	Title     string
	Kind      string
	Generated string
	Charts    []Chart
	// Inlined assets and the charts' data.
	CSS, UPlotCSS template.CSS
	UPlotJS, JS   template.JS
	Data          template.JS
	UPlotVersion  string
	UPlotLicense  string
}

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"utc":          utc,
	"percent":      percent,
	"mib":          func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"verdictClass": verdictClass,
	"orDash":       orDash,
	"devices":      devices,
}).ParseFS(templateFS, "templates/*.html"))

func verdictClass(v v1alpha1.Verdict) string {
	switch v {
	case v1alpha1.VerdictPassed:
		return "pass"
	case v1alpha1.VerdictFailed, v1alpha1.VerdictRegressed:
		return "fail"
	case v1alpha1.VerdictInconclusive:
		return "warn"
	}
	return "none"
}

func utc(t any) string {
	switch t := t.(type) {
	case time.Time:
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	case *time.Time:
		if t != nil {
			return utc(*t)
		}
	}
	return "–"
}

// withoutBanner drops the library's leading /*! ... */ comment, which holds its home page's
// address: the page names no external URL (the footer carries the licence instead).
func withoutBanner(js string) string {
	if strings.HasPrefix(js, "/*!") {
		if end := strings.Index(js, "*/"); end >= 0 {
			return strings.TrimLeft(js[end+2:], "\n")
		}
	}
	return js
}

func newPage(kind, title string, generated time.Time, charts []Chart) (page, error) {
	if generated.IsZero() {
		generated = time.Now()
	}
	if charts == nil {
		charts = []Chart{}
	}
	for i := range charts {
		charts[i] = withAxes(charts[i])
	}
	data, err := json.Marshal(map[string]any{"charts": charts}) // escapes <, > and &: safe in a script
	if err != nil {
		return page{}, fmt.Errorf("encoding the charts' data: %w", err)
	}
	read := func(fs embed.FS, name string) string {
		b, err := fs.ReadFile(name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		return string(b)
	}
	return page{
		Title: title, Kind: kind, Generated: utc(generated), Charts: charts,
		CSS:          template.CSS(read(templateFS, "templates/report.css")),
		UPlotCSS:     template.CSS(read(assets, "assets/uPlot.min.css")),
		UPlotJS:      template.JS(withoutBanner(read(assets, "assets/uPlot.iife.min.js"))),
		JS:           template.JS(read(templateFS, "templates/report.js")),
		Data:         template.JS(data),
		UPlotVersion: strings.TrimSpace(read(assets, "assets/VERSION")),
		UPlotLicense: read(assets, "assets/LICENSE"),
	}, nil
}

// testRunPage is the view of one TestRun.
type testRunPage struct {
	page
	Run        *v1alpha1.TestRun
	Status     *v1alpha1.TestRunStatus
	Results    *v1alpha1.Results
	Headline   []cell
	Key        map[string]cell
	Runners    []runnerRow
	Checks     []v1alpha1.NamedCheck
	Timeline   *judge.Timeline
	NoTimeline bool
	Restarts   int32
	Started    string
	Completed  string
	Comparison *comparisonView
	Gaps       *gapsView
	Slowest    []slowRow
}

// WriteTestRun writes the report of one TestRun.
func WriteTestRun(w io.Writer, in TestRunInput) error {
	if in.Run == nil {
		return fmt.Errorf("htmlreport: no TestRun to report")
	}
	run := in.Run
	if in.TraceURL != "" {
		if err := CheckTraceURL(in.TraceURL); err != nil {
			return fmt.Errorf("htmlreport: %w", err)
		}
	}
	charts := withSlowest(TestRunCharts(in.Timeline), in.Timeline)
	var seriesMissing string
	if cmp := run.Status.Comparison; cmp != nil && cmp.Baseline != nil {
		seriesMissing = in.BaselineMissing
		if in.Baseline != nil {
			charts, seriesMissing = overlayBaseline(charts, in.Timeline, in.Baseline, cmp.Baseline.Name)
		} else if seriesMissing == "" {
			seriesMissing = "its kept record was not read"
		}
	}
	charts = withTrend(charts, run)
	charts = withGaps(charts, run, in.Timeline)
	if c := PeakChart("peak", run); c.Name != "" {
		charts = append(charts, c)
	}
	if c := ZoneLatencyChart(run); c.Name != "" {
		charts = append(charts, c)
	}
	pg, err := newPage("TestRun", "TestRun "+qualified(run.Namespace, run.Name), in.Generated, charts)
	if err != nil {
		return err
	}
	v := testRunPage{page: pg, Run: run, Status: &run.Status, Results: run.Status.Results,
		Headline: headline(run), Key: keyCells(run), Runners: runnerRows(in.Timeline),
		Checks: checkRows(run.Status.Results, in.Summary), Timeline: in.Timeline, NoTimeline: in.Timeline == nil,
		Comparison: newComparisonView(run.Status.Comparison, seriesMissing), Gaps: newGapsView(run),
		Slowest: slowRows(in.Timeline, run.Status.Results, in.TraceURL)}
	if run.Status.StartTime != nil {
		v.Started = utc(run.Status.StartTime.Time)
	}
	if run.Status.CompletionTime != nil {
		v.Completed = utc(run.Status.CompletionTime.Time)
	}
	if t := run.Status.Target; t != nil {
		v.Restarts = t.Restarts
	}
	return templates.ExecuteTemplate(w, "testrun.html", v)
}

// planPage is the view of one CapacityPlan.
type planPage struct {
	page
	Plan  *v1alpha1.CapacityPlan
	Table planTable
	Peaks []v1alpha1.TestRun
	// The capacity sections (capacity.html), from status.summary, model and answer.
	Answer   *answerView
	Capacity *capacityView
	Sizing   []sizingProfile
	Scaling  []scalingView
}

// WritePlan writes the report of a CapacityPlan.
func WritePlan(w io.Writer, in PlanInput) error {
	if in.Plan == nil {
		return fmt.Errorf("htmlreport: no CapacityPlan to report")
	}
	p := in.Plan
	pg, err := newPage("CapacityPlan", "CapacityPlan "+qualified(p.Namespace, p.Name), in.Generated, PlanCharts(p, in.Children))
	if err != nil {
		return err
	}
	v := planPage{page: pg, Plan: p, Table: newPlanTable(p, DimensionNames(p), in.ChildHref),
		Answer: newAnswerView(p.Status.Answer), Capacity: newCapacityView(p), Sizing: sizingProfiles(p), Scaling: scalingViews(p)}
	for _, c := range in.Children {
		if c.Status.Peak != nil && len(c.Status.Peak.Steps) > 0 {
			v.Peaks = append(v.Peaks, c)
		}
	}
	return templates.ExecuteTemplate(w, "plan.html", v)
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
