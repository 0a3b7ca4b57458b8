// Package browsertest opens a report written by htmlreport in a real headless Chromium (Debian's
// /usr/bin/chromium, installed by `make browser`), offline, and says what it drew: every chart
// with its number of points and whether its canvas has pixels, every network request the page
// attempted, the page's text and a full-page screenshot. Tests of any package use it to assert
// a report renders; a missing browser is an error, never a skip.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is the browser the check runs: Debian's chromium package.
const ChromiumPath = "/usr/bin/chromium"

// Chart is what the page drew for one element with a data-chart attribute.
type Chart struct {
	Name string `json:"name"`
	// Found is false when the page has the element but no uPlot instance for it.
	Found bool `json:"found"`
	// Points is the number of x values the instance holds; Values counts the series' non-null
	// values; Series excludes the x series.
	Points int `json:"points"`
	Values int `json:"values"`
	Series int `json:"series"`
	// X are the instance's x values (a sweep's values, a run's window times).
	X []float64 `json:"x"`
	// NonBlank is true when the canvas has any painted pixel; ColoredPixels counts the pixels
	// that are neither grey nor black (series, not axes or grid).
	NonBlank      bool `json:"nonBlank"`
	ColoredPixels int  `json:"coloredPixels"`
	Width         int  `json:"width"`
	Height        int  `json:"height"`
	// YMin, YMax (left) and Y2Min, Y2Max (right, when the chart has that axis) are the value
	// scales' ranges as drawn; YTicks and Y2Ticks the axes' tick labels.
	YMin    float64  `json:"yMin"`
	YMax    float64  `json:"yMax"`
	Y2Min   *float64 `json:"y2Min"`
	Y2Max   *float64 `json:"y2Max"`
	YTicks  []string `json:"yTicks"`
	Y2Ticks []string `json:"y2Ticks"`
	// Legend is what the legend shows with the cursor off the chart, LegendHover with the
	// cursor on its middle point: one entry per visible slot, "label" or "label: value".
	Legend      []string `json:"legend"`
	LegendHover []string `json:"legendHover"`
	// Spans are the shaded stretches the page's data asks for (a run's gaps), as painted.
	Spans []Span `json:"spans"`
	// Lines are the instance's series (the x series excluded), in order.
	Lines []Line `json:"lines"`
}

// Line is one series as the chart holds it: its label, its axis' scale ("y" or "y2"), how many
// values are not null, and the least and greatest of them (nil without any).
type Line struct {
	Label  string   `json:"label"`
	Scale  string   `json:"scale"`
	Values int      `json:"values"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
}

// String reads "label (scale): n values, min to max".
func (l Line) String() string {
	if l.Min == nil || l.Max == nil {
		return fmt.Sprintf("%s (%s): %d values", l.Label, l.Scale, l.Values)
	}
	return fmt.Sprintf("%s (%s): %d values, %g to %g", l.Label, l.Scale, l.Values, *l.Min, *l.Max)
}

// Line returns the chart's series of that label, or false.
func (c Chart) Line(label string) (Line, bool) {
	for _, l := range c.Lines {
		if l.Label == label {
			return l, true
		}
	}
	return Line{}, false
}

// Span is one shaded stretch of a chart: Covered is the share of the plot's height painted in
// the pixel column at its middle, Outside the same just beside it (a series line and the grid
// paint a few pixels of a column; a shaded span paints all of them).
type Span struct {
	Label   string  `json:"label"`
	From    float64 `json:"from"`
	To      float64 `json:"to"`
	Covered float64 `json:"covered"`
	Outside float64 `json:"outside"`
}

// Result is what the check saw.
type Result struct {
	Title  string
	Text   string // document.body.innerText
	Charts []Chart
	// Requests are the URLs of every request the page attempted, file: ones included;
	// NonFileRequests those that were not file: URLs.
	Requests        []string
	NonFileRequests []string
	// Errors are uncaught exceptions, console errors and the page's own chart errors.
	Errors []string
	// Cells are the page's elements with a data-column or data-field attribute, as drawn.
	Cells []Cell
	// Figures are the page's static SVG charts (data-figure), as laid out.
	Figures []Figure
}

// Figure is a static chart the report drew as SVG: its laid-out size and what it holds.
type Figure struct {
	Name   string `json:"name"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Circles, Paths and Rects count the marks by element; Text is every label's text.
	Circles int    `json:"circles"`
	Paths   int    `json:"paths"`
	Rects   int    `json:"rects"`
	Text    string `json:"text"`
}

// Figure returns the figure of that name, or false.
func (r Result) Figure(name string) (Figure, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// figuresJS measures every data-figure element as laid out.
const figuresJS = `Array.from(document.querySelectorAll("[data-figure]")).map(function (el) {
  var b = el.getBoundingClientRect();
  return {name: el.getAttribute("data-figure"), width: Math.round(b.width), height: Math.round(b.height),
    circles: el.querySelectorAll("circle").length, paths: el.querySelectorAll("path").length,
    rects: el.querySelectorAll("rect").length,
    text: Array.from(el.querySelectorAll("text")).map(function (t) { return t.textContent; }).join(" | ")};
})`

// Cell is an element with a data-column attribute (a value the report takes from a column
// defined once, pkg/present/columns) or a data-field attribute (another value a test finds).
type Cell struct {
	Column string `json:"column"`
	// Row is the data-row of the enclosing row, if any (a compared metric).
	Row  string `json:"row"`
	Text string `json:"text"`
	// Color is the computed text colour, e.g. "rgb(198, 40, 40)".
	Color string `json:"color"`
}

// Cell returns the cell of that row and column, or false.
func (r Result) Cell(row, column string) (Cell, bool) {
	for _, c := range r.Cells {
		if c.Row == row && c.Column == column {
			return c, true
		}
	}
	return Cell{}, false
}

// cellsJS reads every data-column and data-field element as drawn.
const cellsJS = `Array.from(document.querySelectorAll("[data-column],[data-field]")).map(function (el) {
  var row = el.closest("[data-row]");
  return {column: el.getAttribute("data-column") || el.getAttribute("data-field"), row: row ? row.getAttribute("data-row") : "",
    text: el.innerText, color: getComputedStyle(el).color};
})`

// Chart returns the chart of that name, or false.
func (r Result) Chart(name string) (Chart, bool) {
	for _, c := range r.Charts {
		if c.Name == name {
			return c, true
		}
	}
	return Chart{}, false
}

// chartsJS measures every chart container: test-side code, so the page cannot vouch for itself.
const chartsJS = `(function () {
var specs = {};
try { JSON.parse(document.getElementById("fleetbench-data").textContent).charts.forEach(function (c) { specs[c.name] = c; }); } catch (e) {}
return Array.from(document.querySelectorAll("[data-chart]")).map(function (el) {
  var name = el.getAttribute("data-chart");
  var u = (window.fleetbenchCharts || {})[name];
  var r = {name: name, found: !!u, points: 0, values: 0, series: 0, nonBlank: false, coloredPixels: 0, width: 0, height: 0};
  if (!u) return r;
  r.points = u.data[0].length;
  r.x = Array.from(u.data[0]);
  r.series = u.data.length - 1;
  for (var s = 1; s < u.data.length; s++) for (var i = 0; i < u.data[s].length; i++) if (u.data[s][i] != null) r.values++;
  r.lines = [];
  for (var s = 1; s < u.data.length; s++) {
    var line = {label: String(u.series[s].label), scale: u.series[s].scale, values: 0, min: null, max: null};
    for (var i = 0; i < u.data[s].length; i++) {
      var v = u.data[s][i];
      if (v == null) continue;
      line.values++;
      if (line.min == null || v < line.min) line.min = v;
      if (line.max == null || v > line.max) line.max = v;
    }
    r.lines.push(line);
  }
  var c = u.ctx.canvas; r.width = c.width; r.height = c.height;
  var d = u.ctx.getImageData(0, 0, c.width, c.height).data;
  for (var p = 0; p < d.length; p += 4) {
    if (d[p + 3] === 0) continue;
    r.nonBlank = true;
    var mx = Math.max(d[p], d[p + 1], d[p + 2]), mn = Math.min(d[p], d[p + 1], d[p + 2]);
    if (mx - mn > 48) r.coloredPixels++;
  }
  // painted is the share of the plot's height painted in the pixel column at x (canvas pixels).
  function painted(x) {
    var b = u.bbox, n = 0;
    x = Math.round(x);
    if (x < b.left || x >= b.left + b.width) return 0;
    for (var y = Math.round(b.top); y < b.top + b.height; y++) if (d[(y * c.width + x) * 4 + 3] > 0) n++;
    return n / Math.max(1, Math.round(b.height));
  }
  r.spans = ((specs[name] || {}).spans || []).map(function (s) {
    var x0 = u.valToPos(s.from, "x", true), x1 = u.valToPos(s.to, "x", true), gap = 6 * uPlot.pxRatio;
    var beside = x0 - gap >= u.bbox.left + 2 ? x0 - gap : x1 + gap;
    return {label: s.label, from: s.from, to: s.to, covered: painted((x0 + x1) / 2), outside: painted(beside)};
  });
  r.yMin = u.scales.y.min; r.yMax = u.scales.y.max;
  if (u.scales.y2 && u.series.some(function (s) { return s.scale === "y2"; })) { r.y2Min = u.scales.y2.min; r.y2Max = u.scales.y2.max; }
  u.axes.forEach(function (a) {
    var labels = (a._values || []).map(String);
    if (a.scale === "y") r.yTicks = labels;
    if (a.scale === "y2") r.y2Ticks = labels;
  });
  // the legend's visible slots, as a reader sees them: hidden cells (display: none) left out
  function legend() {
    var out = [];
    el.querySelectorAll(".u-legend tr").forEach(function (tr) {
      if (!tr.offsetParent) return;
      var label = (tr.querySelector("th") || {}).innerText || "", slots = [];
      tr.querySelectorAll("td").forEach(function (td) { if (td.offsetParent) slots.push(td.innerText); });
      out.push(slots.length ? label.trim() + ": " + slots.join(" ") : label.trim());
    });
    return out;
  }
  r.legend = legend();
  if (u.data[0].length > 0) {
    var mid = Math.floor(u.data[0].length / 2);
    u.setCursor({left: u.valToPos(u.data[0][mid], "x"), top: u.bbox.height / 2 / uPlot.pxRatio});
    r.legendHover = legend();
    u.setCursor({left: -10, top: -10});
  }
  return r;
});
})()`

// Check opens htmlPath (a local file) in headless Chromium with the network emulated offline,
// waits for the page's charts, measures them, and writes a full-page PNG to screenshotPath
// (when not empty). It fails when the browser is missing or the page does not finish drawing;
// the caller asserts on the Result (charts, requests, errors).
func Check(ctx context.Context, htmlPath, screenshotPath string) (Result, error) {
	var res Result
	if _, err := os.Stat(ChromiumPath); err != nil {
		return res, fmt.Errorf("%s is missing: run `make browser` to install Debian's chromium (%w)", ChromiumPath, err)
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return res, err
	}
	if _, err := os.Stat(abs); err != nil {
		return res, err
	}
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()

	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("allow-file-access-from-files", false),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()

	var mu sync.Mutex
	var requests, errs []string
	tabCtx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if ev.Request != nil {
				requests = append(requests, ev.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			if d := ev.ExceptionDetails; d != nil {
				msg := d.Text
				if d.Exception != nil && d.Exception.Description != "" {
					msg += " " + d.Exception.Description
				}
				errs = append(errs, "exception: "+msg)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				errs = append(errs, "console: "+strings.Join(parts, " "))
			}
		}
	}))
	defer cancelTab()

	if err := chromedp.Do(tabCtx); err != nil { // starts the browser and attaches the tab
		return res, fmt.Errorf("starting %s: %w", ChromiumPath, err)
	}
	if _, err := chromedp.Call(tabCtx, network.Enable, network.EnableParams{}); err != nil {
		return res, fmt.Errorf("enabling the network domain: %w", err)
	}
	offline := []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	if _, err := chromedp.Call(tabCtx, network.EmulateNetworkConditionsByRule,
		network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: offline}); err != nil {
		return res, fmt.Errorf("emulating offline: %w", err)
	}
	if _, err := chromedp.Call(tabCtx, network.OverrideNetworkState,
		network.OverrideNetworkStateParams{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		return res, fmt.Errorf("emulating offline: %w", err)
	}
	if err := chromedp.Do(tabCtx, chromedp.Navigate(pageURL)); err != nil {
		return res, fmt.Errorf("opening %s: %w", pageURL, err)
	}
	if _, err := chromedp.Run(tabCtx, chromedp.Poll[bool](`window.fleetbenchReady === true`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		return res, fmt.Errorf("waiting for the report's charts (window.fleetbenchReady): %w", err)
	}
	if res.Charts, err = chromedp.Run(tabCtx, chromedp.Evaluate[[]Chart](chartsJS)); err != nil {
		return res, fmt.Errorf("measuring the charts: %w", err)
	}
	if res.Cells, err = chromedp.Run(tabCtx, chromedp.Evaluate[[]Cell](cellsJS)); err != nil {
		return res, fmt.Errorf("reading the cells: %w", err)
	}
	if res.Figures, err = chromedp.Run(tabCtx, chromedp.Evaluate[[]Figure](figuresJS)); err != nil {
		return res, fmt.Errorf("measuring the figures: %w", err)
	}
	if res.Title, err = chromedp.Run(tabCtx, chromedp.Title()); err != nil {
		return res, err
	}
	if res.Text, err = chromedp.Run(tabCtx, chromedp.Evaluate[string](`document.body.innerText`)); err != nil {
		return res, err
	}
	pageErrs, err := chromedp.Run(tabCtx, chromedp.Evaluate[[]string](`window.fleetbenchErrors || []`))
	if err != nil {
		return res, err
	}
	if screenshotPath != "" {
		png, err := chromedp.Run(tabCtx, chromedp.FullScreenshot(100))
		if err != nil {
			return res, fmt.Errorf("taking the screenshot: %w", err)
		}
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			return res, err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	res.Requests = append(res.Requests, requests...)
	for _, r := range requests {
		if !strings.HasPrefix(r, "file:") {
			res.NonFileRequests = append(res.NonFileRequests, r)
		}
	}
	res.Errors = append(append(res.Errors, errs...), pageErrs...)
	return res, nil
}

// Verify is the usual assertion: no request other than file: ones, no page error, and every
// expected chart drawn with its number of points and coloured pixels on its canvas. want maps a
// chart's name to its points; a chart the page has but want lacks is an error too.
func Verify(res Result, want map[string]int) error {
	var problems []string
	if len(res.NonFileRequests) > 0 {
		problems = append(problems, fmt.Sprintf("the page attempted network requests: %v", res.NonFileRequests))
	}
	if len(res.Errors) > 0 {
		problems = append(problems, fmt.Sprintf("the page reported errors: %v", res.Errors))
	}
	seen := map[string]bool{}
	for _, c := range res.Charts {
		seen[c.Name] = true
		n, ok := want[c.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("unexpected chart %q", c.Name))
		case !c.Found:
			problems = append(problems, fmt.Sprintf("chart %q: no uPlot instance", c.Name))
		case c.Points != n || c.Points == 0:
			problems = append(problems, fmt.Sprintf("chart %q: %d points, want %d", c.Name, c.Points, n))
		case c.Values == 0 || !c.NonBlank || c.ColoredPixels == 0:
			problems = append(problems, fmt.Sprintf("chart %q: blank (values %d, non-blank %v, coloured pixels %d)",
				c.Name, c.Values, c.NonBlank, c.ColoredPixels))
		}
	}
	for name := range want {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("chart %q is missing", name))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
