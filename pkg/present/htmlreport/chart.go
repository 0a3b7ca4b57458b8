package htmlreport

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Chart kinds: how report.js draws a chart's x axis.
const (
	// KindTime has unix seconds on x, shown in UTC.
	KindTime = "time"
	// KindLine has plain numbers on x (a sweep value, a device count).
	KindLine = "line"
	// KindBars draws a histogram: x is each bucket's upper bound, on a log scale.
	KindBars = "bars"
	// KindCategory has one x position per named category (XNames).
	KindCategory = "category"
)

// Chart is one chart of a report: the page draws it with uPlot into the element whose
// data-chart attribute is Name. Every series has a value (or a gap) per X.
type Chart struct {
	Name    string    `json:"name"`
	Title   string    `json:"title"`
	Note    string    `json:"note,omitempty"`
	Kind    string    `json:"kind"`
	XLabel  string    `json:"xLabel"`
	YLabel  string    `json:"yLabel"`
	Y2Label string    `json:"y2Label,omitempty"`
	XNames  []string  `json:"xNames,omitempty"`
	X       []float64 `json:"x"`
	Series  []Series  `json:"series"`
	Marks   []Mark    `json:"marks,omitempty"`
	// Spans shade a labelled stretch of x (a runner's gap on a run's timeline).
	Spans []Span `json:"spans,omitempty"`
	// Bands shade the range of a series' repetitions (a plan's latency).
	Bands []Band `json:"bands,omitempty"`
	// Points are dots on the left axis' scale (the slowest requests on the latency chart).
	Points []Point `json:"points,omitempty"`
	// LogX puts a KindLine chart's x on a log scale (a sweep over decades, e.g. payload sizes).
	LogX bool `json:"logX,omitempty"`
	// YAxis and Y2Axis are the left and right value axes, set from the series when the page
	// is written (withAxes).
	YAxis  *Axis `json:"yAxis,omitempty"`
	Y2Axis *Axis `json:"y2Axis,omitempty"`
}

// Series is one line (or the bars) of a chart.
type Series struct {
	Label  string  `json:"label"`
	Values []Value `json:"values"`
	// Right puts the series on the right-hand axis (Y2Label).
	Right bool `json:"right,omitempty"`
	// Color indexes the page's palette; Dash draws a dashed line (a second repetition).
	Color int  `json:"color"`
	Dash  bool `json:"dash,omitempty"`
	// Faint draws it lighter and thinner: the baseline's series under this run's.
	Faint bool `json:"faint,omitempty"`
}

// Mark is a labelled vertical line at X, e.g. the load's start or a breaking point.
type Mark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
	// Alert draws it red.
	Alert bool `json:"alert,omitempty"`
}

// Point is a dot at (X, Y), Label saying what it is.
type Point struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Label string  `json:"label"`
}

// Span is a labelled, shaded stretch of x from From to To, e.g. the part of the load a lost
// runner left unobserved.
type Span struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
}

// Value is a point of a series; NaN is a gap (JSON null).
type Value float64

// Gap is a missing point.
var Gap = Value(math.NaN())

// MarshalJSON writes NaN and infinities as null.
func (v Value) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// Points counts the series' values that are not gaps.
func (s Series) Points() int {
	n := 0
	for _, v := range s.Values {
		if !math.IsNaN(float64(v)) {
			n++
		}
	}
	return n
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// parseNumber reads a status number ("182.40"); ok is false for "" and text.
func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// parseMillis reads a status duration ("11ms", "1.25s", "850µs", "12") in milliseconds.
func parseMillis(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if f, ok := parseNumber(s); ok {
		return f, true
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false
	}
	return float64(d) / float64(time.Millisecond), true
}

// numberOr is a status number, or a gap.
func numberOr(s string) Value {
	if f, ok := parseNumber(s); ok {
		return Value(f)
	}
	return Gap
}

// millisOr is a status duration in milliseconds, or a gap.
func millisOr(s string) Value {
	if f, ok := parseMillis(s); ok {
		return Value(f)
	}
	return Gap
}

// hasPoints says whether any series of the chart has a point.
func hasPoints(c Chart) bool {
	for _, s := range c.Series {
		if s.Points() > 0 {
			return true
		}
	}
	return false
}

// dropEmptySeries removes series without any point.
func dropEmptySeries(series []Series) []Series {
	out := series[:0]
	for _, s := range series {
		if s.Points() > 0 {
			out = append(out, s)
		}
	}
	return out
}
