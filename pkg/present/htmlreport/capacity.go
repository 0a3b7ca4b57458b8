package htmlreport

import (
	"fmt"
	"html/template"
	"slices"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// capacityMark is one profile's figures as the capacity chart draws them; a value of 0 or a
// NaN is not drawn.
type capacityMark struct {
	predicted bool
	safe      float64
	// ideal median and its range
	ideal, low, high float64
	// best setting's ideal median and range (measured only)
	best, bestLow, bestHigh float64
	limit                   string
	// measured: a held-out profile's measured ideal median beside its prediction
	measured float64
	errorPct string
}

// capacityView is the "Capacity by profile" section.
type capacityView struct {
	Chart      template.HTML
	Scoreboard []string
	// Model says what the size model is, or why it cannot be trusted.
	Model     string
	Untrusted []string
}

func rangeOf(r *v1alpha1.FigureRange) (median, low, high float64) {
	if r == nil {
		return 0, 0, 0
	}
	median, _ = parseNumber(r.Median)
	low, _ = parseNumber(r.Low)
	high, _ = parseNumber(r.High)
	return median, low, high
}

// capacityMarks are the chart's categories and what each draws: the summary's profiles, then
// each prediction, beside its profile's measurement when the plan also ran it.
func capacityMarks(p *v1alpha1.CapacityPlan) ([]string, [][]capacityMark) {
	var names []string
	var marks [][]capacityMark
	at := func(profile string) int {
		if i := slices.Index(names, profile); i >= 0 {
			return i
		}
		names, marks = append(names, profile), append(marks, nil)
		return len(names) - 1
	}
	for _, s := range p.Status.Summary {
		m := capacityMark{safe: float64(s.SafeFleet), limit: s.Limit}
		if m.safe == 0 {
			m.safe = float64(s.SafeMaxDevices) // a plan from before the ranges
		}
		if s.Floor != nil {
			m.ideal, m.low, m.high = rangeOf(s.Floor.IdealMaxDevices)
		} else {
			m.ideal = float64(s.IdealMaxDevices)
		}
		if s.Best != nil {
			m.best, m.bestLow, m.bestHigh = rangeOf(s.Best.IdealMaxDevices)
		}
		if m.safe == 0 && m.ideal == 0 {
			continue
		}
		i := at(s.Profile)
		marks[i] = append(marks[i], m)
	}
	if p.Status.Model != nil {
		for _, pr := range p.Status.Model.Predictions {
			m := capacityMark{predicted: true, safe: float64(pr.SafeMaxDevices), limit: pr.Limit,
				measured: float64(pr.MeasuredIdealMaxDevices), errorPct: pr.ErrorPercent}
			m.ideal, m.low, m.high = rangeOf(pr.IdealMaxDevices)
			if m.safe == 0 && m.ideal == 0 {
				continue
			}
			i := at(pr.Profile)
			marks[i] = append(marks[i], m)
		}
	}
	return names, marks
}

func newCapacityView(p *v1alpha1.CapacityPlan) *capacityView {
	names, marks := capacityMarks(p)
	v := &capacityView{}
	if md := p.Status.Model; md != nil {
		v.Model = fmt.Sprintf("Size model: safe devices = %s × cores^%s, fitted to %d measured profiles.", orDash(md.Scale), orDash(md.Exponent), md.Points)
		v.Untrusted = md.Untrusted
		for _, pr := range md.Predictions {
			line := pr.Profile + ": predicted " + figure(pr.IdealMaxDevices) + " ideal devices, safe " + devices(pr.SafeMaxDevices)
			if pr.MeasuredIdealMaxDevices > 0 {
				line += fmt.Sprintf("; measured %d, error %s %%", pr.MeasuredIdealMaxDevices, orDash(pr.ErrorPercent))
			}
			if pr.Message != "" {
				line += " — " + pr.Message
			}
			v.Scoreboard = append(v.Scoreboard, line)
		}
	}
	if len(names) == 0 {
		return v
	}
	top := 0.0
	for _, ms := range marks {
		for _, m := range ms {
			top = max(top, m.safe, m.ideal, m.high, m.best, m.bestHigh, m.measured)
		}
	}
	plot := newSVGPlot("capacity", Axis{}, NiceAxis(0, top*1.15)) // room for the limits' labels
	plot.xNames = names
	plot.frame("profile", "devices")
	slot := (plot.r - plot.l) / float64(len(names))
	for i, ms := range marks {
		for j, m := range ms {
			// side by side when a profile has a measurement and a prediction
			x := plot.px(float64(i)) + (float64(j)-float64(len(ms)-1)/2)*slot*0.42
			drawCapacityMark(plot, x, min(slot*0.3, 60), j, m)
		}
	}
	capacityLegend(plot)
	v.Chart = plot.html("Capacity by profile")
	return v
}

// drawCapacityMark draws a bar for the safe fleet, a point with whiskers for the ideal
// median and its range, the best setting beside it, and the limit's name above; a predicted
// profile is drawn hollow and dashed, with what was measured beside it.
func drawCapacityMark(p *svgPlot, x, w float64, nth int, m capacityMark) {
	kind, col, fill := "measured", colour(0), colour(0)
	if m.predicted {
		kind, col, fill = "predicted", colour(4), "#fff"
	}
	top := p.b
	if m.safe > 0 {
		y := p.py(m.safe)
		p.add(`<rect class="safe %s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" stroke="%s" fill="%s"/>`, kind, x-w/2, y, w, p.b-y, col, col)
		top = min(top, y)
	}
	whisker := func(cx, median, low, high float64, class string) {
		if low > 0 && high > 0 {
			yl, yh := p.py(low), p.py(high)
			p.add(`<path class="whisker %s" d="M%.1f %.1f L%.1f %.1f M%.1f %.1f l10 0 M%.1f %.1f l10 0"/>`,
				class, cx, yl, cx, yh, cx-5, yl, cx-5, yh)
			top = min(top, yh)
		}
		if median > 0 {
			y := p.py(median)
			p.add(`<circle class="ideal %s" cx="%.1f" cy="%.1f" r="5" stroke="%s" fill="%s"/>`, class, cx, y, col, fill)
			top = min(top, y)
		}
	}
	if m.best > 0 && !m.predicted {
		whisker(x-w/4, m.ideal, m.low, m.high, kind+" floor")
		whisker(x+w/4, m.best, m.bestLow, m.bestHigh, kind+" best")
	} else {
		whisker(x, m.ideal, m.low, m.high, kind)
	}
	if m.measured > 0 {
		y := p.py(m.measured)
		p.add(`<path class="held-out" d="M%.1f %.1f l10 10 M%.1f %.1f l-10 10" stroke="%s"/>`, x+w/2+4, y-5, x+w/2+14, y-5, colour(1))
		p.text(x+w/2+18, y+4, "start", "note", "measured, error "+orDash(m.errorPct)+" %")
		top = min(top, y)
	}
	label := orDash(m.limit)
	if m.predicted {
		label = "predicted · " + label
	}
	// a profile's second mark (its prediction) labels a line higher, clear of the first's
	p.text(x, top-8-14*float64(nth), "middle", "limit", label)
}

func capacityLegend(p *svgPlot) {
	x := p.l + 4
	item := func(mark, label string, width float64) {
		p.add(mark, x)
		p.text(x+16, 18, "start", "legend", label)
		x += width
	}
	item(`<rect class="safe measured" x="%.1f" y="8" width="12" height="12" fill="`+colour(0)+`" stroke="`+colour(0)+`"/>`, "safe fleet", 92)
	item(`<circle class="ideal measured" cx="%.1f" cy="14" r="5" transform="translate(6 0)" stroke="`+colour(0)+`" fill="`+colour(0)+`"/>`, "ideal devices: median, range (floor; best right)", 300)
	item(`<rect class="safe predicted" x="%.1f" y="8" width="12" height="12" fill="`+colour(4)+`" stroke="`+colour(4)+`"/>`, "predicted (dashed, hollow)", 186)
	item(`<path class="held-out" d="M%.1f 9 l10 10 m0 -10 l-10 10" stroke="`+colour(1)+`"/>`, "measured", 80)
}
