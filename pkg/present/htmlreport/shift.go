package htmlreport

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"fleetbench.dev/fleetbench/pkg/judge/shift"
)

// ShiftInput is what the trend page shows: a test's kept runs in order and each metric's
// change points (pkg/judge/shift).
type ShiftInput struct {
	Namespace, Selector, OrderBy string
	// Method says how the change points were found, in words.
	Method string
	Trend  shift.Trend
	// RunLabels name the runs on the charts' x axis (a release label); run names when nil.
	RunLabels []string
	// Notes say what was left out and why.
	Notes []string
	// Generated is the time printed as the page's date; zero means now.
	Generated time.Time
}

// shiftPage is the view of a trend.
type shiftPage struct {
	page
	In      ShiftInput
	Runs    []shiftRun
	Metrics []shiftMetric
}

type shiftRun struct {
	N                               int
	Label, Name, Completed, Verdict string
}

type shiftMetric struct {
	Title  string
	Chart  template.HTML
	Points []shiftPoint
}

type shiftPoint struct {
	Run, Before, After, Shift, P, Direction, Class string
}

// WriteShift writes the trend page: a chart per metric over the runs, each change point marked
// where its new level starts, the levels drawn as dashed lines, and a table of the points.
// Static SVG, no script: the page opens anywhere.
func WriteShift(w io.Writer, in ShiftInput) error {
	title := "Trend of " + orDash(in.Selector)
	if in.Namespace != "" {
		title += " in " + in.Namespace
	}
	pg, err := newPage("trend", title, in.Generated, nil)
	if err != nil {
		return err
	}
	labels := in.RunLabels
	if len(labels) != len(in.Trend.Runs) {
		labels = make([]string, len(in.Trend.Runs))
		for i, r := range in.Trend.Runs {
			labels[i] = r.Name
		}
	}
	v := shiftPage{page: pg, In: in}
	for i, r := range in.Trend.Runs {
		v.Runs = append(v.Runs, shiftRun{N: i + 1, Label: labels[i], Name: r.Name, Completed: utc(r.CompletionTime), Verdict: orDash(r.Verdict)})
	}
	for i, m := range in.Trend.Metrics {
		sm := shiftMetric{Title: MetricTitle(m), Chart: shiftChart(fmt.Sprintf("trend-%d", i), m, labels)}
		format := ShiftFormat(m)
		for _, cp := range m.ChangePoints {
			sm.Points = append(sm.Points, shiftPoint{Run: in.Trend.Runs[cp.Index].Name, Before: format(cp.Before),
				After: format(cp.After), Shift: ShiftPercent(cp.ShiftPercent), P: strconv.FormatFloat(cp.PValue, 'g', 3, 64),
				Direction: orDash(cp.Direction), Class: shiftClass(cp.Direction)})
		}
		v.Metrics = append(v.Metrics, sm)
	}
	return templates.ExecuteTemplate(w, "shift.html", v)
}

// MetricTitle is a metric's name with its stat and unit: "latencyP95 (ms)".
func MetricTitle(m shift.Metric) string {
	t := m.Name
	if m.Stat != "" && !strings.EqualFold(m.Name, "latency"+m.Stat) {
		t += " " + m.Stat
	}
	if m.Unit != "" {
		t += " (" + m.Unit + ")"
	}
	return t
}

// ShiftValue writes a whole-run value with the digits that tell runs apart.
func ShiftValue(v float64) string { return strconv.FormatFloat(v, 'f', valueDecimals(v), 64) }

// ShiftFormat writes a metric's values alike, with the decimals its largest value needs, so
// a column does not switch between 1005 and 804.00.
func ShiftFormat(m shift.Metric) func(float64) string {
	top := 0.0
	for _, v := range m.Values {
		top = max(top, math.Abs(v.Value))
	}
	d := valueDecimals(top)
	return func(v float64) string { return strconv.FormatFloat(v, 'f', d, 64) }
}

func valueDecimals(v float64) int {
	switch a := math.Abs(v); {
	case a >= 1000:
		return 0
	case a >= 1:
		return 2
	}
	return 4
}

// ShiftPercent writes a relative shift with its sign.
func ShiftPercent(p float64) string { return fmt.Sprintf("%+.1f %%", p) }

func shiftClass(direction string) string {
	switch direction {
	case shift.Worse:
		return "fail-text"
	case shift.Better:
		return "pass-text"
	}
	return ""
}

// maxXLabels bounds the run labels written under a chart; the others are left blank.
const maxXLabels = 12

// shiftChart draws m's values over the runs: a point per run that has the metric, the levels
// between change points as dashed lines, and a mark where each new level starts.
func shiftChart(name string, m shift.Metric, labels []string) template.HTML {
	ys := make([]Series, 1)
	for _, v := range m.Values {
		ys[0].Values = append(ys[0].Values, Value(v.Value))
	}
	lo, hi := extent(ys)
	p := newSVGPlot(name, Axis{}, NiceAxis(lo, hi))
	every := (len(labels) + maxXLabels - 1) / maxXLabels
	p.xNames = make([]string, len(labels))
	for i, l := range labels {
		if every <= 1 || i%every == 0 {
			p.xNames[i] = textShort(l, 14)
		}
	}
	if len(labels) == 0 {
		p.xNames = []string{""}
	}
	p.frame("run, in order", MetricTitle(m))
	// levels: from each change point (or the first run) to the next
	starts := []int{}
	if len(m.Values) > 0 {
		starts = append(starts, m.Values[0].Run)
	}
	for _, cp := range m.ChangePoints {
		starts = append(starts, cp.Index)
	}
	for k, from := range starts {
		to := len(labels)
		if k+1 < len(starts) {
			to = starts[k+1]
		}
		mean := levelMean(m.Values, from, to) // a change point's Before and After are these
		p.add(`<path class="fit level" d="M%.1f %.1f L%.1f %.1f" stroke="%s" stroke-dasharray="6 4"/>`,
			p.px(float64(from)-0.4), p.py(mean), p.px(float64(to-1)+0.4), p.py(mean), colour(2))
	}
	for _, cp := range m.ChangePoints {
		x := (p.px(float64(cp.Index)-1) + p.px(float64(cp.Index))) / 2
		stroke := "#444"
		if cp.Direction == shift.Worse {
			stroke = colour(1)
		}
		p.add(`<line class="peak change" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" style="stroke:%s"/>`, x, x, p.t, p.b, stroke)
		p.text(x+4, p.t+12, "start", "mark", fmt.Sprintf("%s %s (p %.3g)", ShiftPercent(cp.ShiftPercent), cp.Direction, cp.PValue))
	}
	var d strings.Builder
	for i, v := range m.Values {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, p.px(float64(v.Run)), p.py(v.Value))
	}
	if d.Len() > 0 {
		p.add(`<path class="fit" d="%s" stroke="%s" stroke-width="1"/>`, strings.TrimSpace(d.String()), colour(0))
	}
	for _, v := range m.Values {
		p.add(`<circle class="measured" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s</title></circle>`,
			p.px(float64(v.Run)), p.py(v.Value), colour(0), template.HTMLEscapeString(labels[v.Run]), ShiftValue(v.Value))
	}
	return p.html(MetricTitle(m) + " over the runs")
}

func levelMean(vs []shift.Value, from, to int) float64 {
	s, n := 0.0, 0
	for _, v := range vs {
		if v.Run >= from && v.Run < to {
			s += v.Value
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// textShort cuts a label to n runes with an ellipsis.
func textShort(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
