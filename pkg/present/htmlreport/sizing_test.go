package htmlreport

import (
	"bytes"
	"html"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestUSLThroughput(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		lambda, sigma, kappa float64
		n, want              float64
	}{
		{"linear: no contention, no coherency", 10, 0, 0, 7, 70},
		{"one load is lambda", 60, 0.05, 0.002, 1, 60},
		{"Amdahl: sigma alone", 1, 0.5, 0, 3, 1.5},
		{"coherency: 1·4/(1+0.1·3+0.01·4·3)", 1, 0.1, 0.01, 4, 4 / 1.42},
		{"zero load", 60, 0.05, 0.002, 0, 0},
	} {
		if got := USLThroughput(tc.lambda, tc.sigma, tc.kappa, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: X(%v) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
	// The curve peaks at √((1−σ)/κ).
	u := fixtureUSL
	peak := math.Sqrt((1 - u.sigma) / u.kappa)
	at := USLThroughput(u.lambda, u.sigma, u.kappa, peak)
	if at < USLThroughput(u.lambda, u.sigma, u.kappa, peak-1) || at < USLThroughput(u.lambda, u.sigma, u.kappa, peak+1) {
		t.Errorf("X is not highest at the peak N %.1f", peak)
	}
}

func TestFigureAndDash(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.FigureRange
		want string
	}{
		{"none", nil, "—"},
		{"empty median", &v1alpha1.FigureRange{Interval: v1alpha1.IntervalMinMax}, "—"},
		{"one repetition", &v1alpha1.FigureRange{Median: "120", Interval: v1alpha1.IntervalSingle, N: 1}, "120"},
		{"min-max", minMax("24000", "23280", "24720"), "24000 (23280–24720, min–max)"},
		{"ci95", &v1alpha1.FigureRange{Median: "50", Low: "44", High: "57", Interval: v1alpha1.IntervalCI95, Coverage: "96.9", N: 6},
			"50 (44–57, 95 % CI, 96.9 % coverage)"},
	} {
		if got := figure(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if devices(0) != "—" || devices(37992) != "37992" || orDash(" ") != "—" {
		t.Errorf("devices(0) %q, devices(37992) %q, orDash(blank) %q", devices(0), devices(37992), orDash(" "))
	}
}

// figureSVG is the <svg> of one data-figure.
func figureSVG(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<svg class="figure" data-figure="` + regexp.QuoteMeta(name) + `".*?</svg>`).FindString(page)
	if m == "" {
		t.Fatalf("no figure %q", name)
	}
	return m
}

func writePlan(t *testing.T, p *v1alpha1.CapacityPlan) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePlan(&buf, PlanInput{Plan: p}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestPlanReportCapacityByProfile(t *testing.T) {
	page := writePlan(t, fixtureSizingPlan())
	svg := figureSVG(t, page, "capacity")
	for _, tc := range []struct {
		what, want string
		n          int
	}{
		{"a safe-fleet bar per measured profile, and the legend's", `class="safe measured"`, 4 + 1},
		{"the predicted C3, dashed, and the legend's", `class="safe predicted"`, 1 + 1},
		{"a hollow point for the prediction", `class="ideal predicted"`, 1},
		{"floor whiskers of the measured profiles", `class="whisker measured floor"`, 2},
		{"best whiskers beside them (C1, C2)", `class="whisker measured best"`, 2},
		{"whiskers of the profiles without a best", `class="whisker measured"`, 2},
		{"the prediction's whisker", `class="whisker predicted"`, 1},
		{"the held-out measurement beside its prediction", `class="held-out"`, 1 + 1},
		{"C2's limit", `>memory</text>`, 1},
		{"C3's limit, measured", `>generator</text>`, 1},
		{"C3's prediction", `>predicted · cpu</text>`, 1},
		{"C4's limit", `>target</text>`, 1},
		{"the scoreboard on the chart", `>measured, error +4.3 %</text>`, 1},
		{"profile names on the axis", `class="tick">C3</text>`, 1},
	} {
		if got := strings.Count(svg, tc.want); got != tc.n {
			t.Errorf("%s: %d × %s, want %d", tc.what, got, tc.want, tc.n)
		}
	}
	for _, want := range []string{
		"C3: predicted 74050 (66000–82000, 95 % CI) ideal devices, safe 46200; measured 71000, error +4.3 %",
		"Size model: safe devices = 24200 × cores^0.93, fitted to 3 measured profiles.",
	} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

func TestPlanReportSizingWithRanges(t *testing.T) {
	page := writePlan(t, fixtureSizingPlan())
	for _, want := range []string{
		`data-field="ideal">24000 (23280–24720, min–max)</td>`,    // C1 floor
		`data-field="ideal">60000 (58200–61800, min–max)</td>`,    // C1 best
		`data-field="breaking">31000 (30000–32500, min–max)</td>`, // C1 floor's breaking point
		`data-field="cv">12.4 %</td>`,                             // C3's noise, as a number
		`data-field="safe-fleet">10570</b> devices, limited by <b data-field="limit">memory</b>`,
		"fills 80 % of 4096 MiB at 10,570 devices",
		"safe = 70 % of the low end of ideal devices (M/M/1 response time 3.3× service time)",
		`Noisy: CV 12.4 % &gt; 10 %: about 6 more repetitions would help`,
		`<tr data-row="C4/floor">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the sizing table lacks %q", want)
		}
	}
	// C4 has no breaking point: "—", never 0.
	_, c4, _ := strings.Cut(page, `<tr data-row="C4/floor">`)
	c4, _, _ = strings.Cut(c4, "</tr>")
	if !strings.Contains(c4, `data-field="breaking">—</td>`) {
		t.Errorf("C4's breaking point is not —: %s", c4)
	}
	answer := `C3 holds 40000 devices acting every 260s (153.85 per second): safe up to 44800 devices, 10.7 % headroom left, bound by generator.`
	cost := `Cost: 146.00 EUR per month, 3.65 EUR per 1,000 devices per month (price as of 2026-11-01).`
	if !strings.Contains(page, answer) || !strings.Contains(page, cost) {
		t.Errorf("the answer is not %q with %q", answer, cost)
	}
	// Without a price, no cost; with no profile, the sentence says none holds it.
	p := fixtureSizingPlan()
	p.Status.Answer.MonthlyCost, p.Status.Answer.Profile = "", ""
	page = writePlan(t, p)
	if strings.Contains(page, "Cost:") || !strings.Contains(page, "No profile of this plan holds 40000 devices") {
		_, answer, _ := strings.Cut(page, "<h2>Answer")
		t.Errorf("an answer without a profile or price: %.400s", answer)
	}
}

// uslCurve reads the fit's path back as (N, throughput) from the chart's axes.
func uslPeak(t *testing.T, svg string) float64 {
	t.Helper()
	d := regexp.MustCompile(`<path class="fit[^"]*" d="([^"]+)"`).FindStringSubmatch(svg)
	if d == nil {
		t.Fatal("no fitted curve")
	}
	bestX, bestY := 0.0, math.Inf(1)
	for _, pt := range regexp.MustCompile(`[ML]([0-9.]+) ([0-9.]+)`).FindAllStringSubmatch(d[1], -1) {
		x, _ := strconv.ParseFloat(pt[1], 64)
		y, _ := strconv.ParseFloat(pt[2], 64)
		if y < bestY {
			bestX, bestY = x, y
		}
	}
	p := newSVGPlot("", NiceAxis(0, 32), Axis{}) // C1's measured loads reach 32
	return p.x.Min + (bestX-p.l)/(p.r-p.l)*(p.x.Max-p.x.Min)
}

func TestPlanReportScaling(t *testing.T) {
	page := writePlan(t, fixtureSizingPlan())
	trusted, untrusted := figureSVG(t, page, "usl-0"), figureSVG(t, page, "usl-1")
	if got := strings.Count(trusted, `class="measured"`); got != len(fixtureUSLLoads) {
		t.Errorf("C1's chart has %d measured points, want %d", got, len(fixtureUSLLoads))
	}
	if !strings.Contains(trusted, `<path class="fit" `) || strings.Contains(trusted, "untrusted") {
		t.Errorf("C1's fit is trusted: a solid curve")
	}
	if !strings.Contains(trusted, ">peak N = 21.8</text>") {
		t.Errorf("C1's chart does not mark the peak")
	}
	// The curve is drawn from λ, σ, κ: it is highest at √((1−σ)/κ) ≈ 21.8 devices.
	if n := uslPeak(t, trusted); math.Abs(n-21.8) > 0.5 {
		t.Errorf("C1's curve peaks at N %.2f, want 21.8", n)
	}
	if !strings.Contains(untrusted, `<path class="fit untrusted" `) || strings.Count(untrusted, `class="measured"`) != 2 {
		t.Errorf("C2's fit: a dashed curve through its 2 points")
	}
	for _, want := range []string{
		`data-field="sigma">0.050 (95 % CI 0.031 – 0.069)</span>`,
		`data-field="kappa">0.0020 (95 % CI 0.0014 – 0.0026)</span>`,
		`data-field="untrusted">untrusted: σ &lt; 0; too few points: 2, need 1 low plus 4 higher</p>`,
		`data-field="peak">—</span>`, // C2 has no peak
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the scaling section lacks %q", want)
		}
	}
	if strings.Count(page, `data-field="untrusted"`) != 1 {
		t.Errorf("only C2's fit is untrusted")
	}
}

// TestPlanReportMissingIsDash: seed 000's summary without memory or breaking point, and a
// row without latency, show "—" where the report showed 0 or nothing.
func TestPlanReportMissingIsDash(t *testing.T) {
	page := writePlan(t, fixturePlan())
	for _, field := range []string{"safe-by-memory", "breaking-point"} {
		if !strings.Contains(page, `data-field="`+field+`">—</td>`) || strings.Contains(page, `data-field="`+field+`">0</td>`) {
			t.Errorf("%s is not — when missing", field)
		}
	}
	p := fixturePlan()
	p.Status.Table[0].Latency = nil
	page = writePlan(t, p)
	if !strings.Contains(page, `<td data-column="p95" class="num">—</td>`) {
		t.Errorf("a row without latency does not show — in its p95 cell")
	}
}

func TestPlanChartsSizingPlan(t *testing.T) {
	charts := PlanCharts(fixtureSizingPlan(), nil)
	if got, want := names(charts), []string{"plan-throughput", "plan-latency"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v: no round-trip/goodput chart on a push benchmark", got, want)
	}
	lat := charts[1]
	// 4 profiles × 3 quantiles would be 12 entries: p95 alone, a line per profile.
	if want := []string{"C1 · p95", "C2 · p95", "C3 · p95", "C4 · p95"}; !slices.Equal(labels(lat), want) {
		t.Errorf("latency series %v, want %v", labels(lat), want)
	}
	if !strings.Contains(lat.Note, "p95 only") || !strings.Contains(lat.Note, "min–max") {
		t.Errorf("latency note %q", lat.Note)
	}
	// 8 groups (profile × another dimension) keep 6 lines and say so.
	p := fixtureSizingPlan()
	for i := range p.Status.Table {
		p.Status.Table[i].Values["tls"] = []string{"on", "off"}[i%2]
	}
	lat = PlanCharts(p, nil)[1]
	if len(lat.Series) != maxLegend || !strings.Contains(lat.Note, "… 2 more groups in the table below") {
		t.Errorf("8 groups: %d series, note %q", len(lat.Series), lat.Note)
	}
}

func TestRoundTrip(t *testing.T) {
	row := func(rps, mbps string) v1alpha1.CapacityRow {
		return v1alpha1.CapacityRow{RequestsPerSecond: rps, ReceivedMbps: mbps}
	}
	for _, tc := range []struct {
		name string
		rows []v1alpha1.CapacityRow
		want bool
	}{
		{"payload echoed: 64 B to 64 KiB", fixturePayloadPlan().Status.Table, true},
		{"pushes: the same answer at every rate", fixturePlan().Status.Table, false},
		{"no goodput measured", []v1alpha1.CapacityRow{row("100", ""), row("200", "")}, false},
		{"TLS rows beside plain ones: answers 2–3× as large", []v1alpha1.CapacityRow{row("100", "1"), row("100", "2"), row("100", "3")}, false},
		{"answers four times as large", []v1alpha1.CapacityRow{row("100", "1"), row("100", "4")}, true},
	} {
		if got := roundTrip(tc.rows); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
