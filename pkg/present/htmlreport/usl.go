package htmlreport

import (
	"fmt"
	"html/template"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// USLThroughput is the Universal Scalability Law (Gunther): the throughput at load n of a
// system with single-load throughput lambda, contention sigma and coherency kappa,
// X(N) = λN / (1 + σ(N−1) + κN(N−1)). The report only draws it from the coefficients
// pkg/plan fitted (status.summary[].scaling); it fits nothing.
func USLThroughput(lambda, sigma, kappa, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// uslCurveSteps is how many segments draw the curve.
const uslCurveSteps = 120

// scalingView is one profile's USL section: the chart and its coefficients in words.
type scalingView struct {
	Profile   string
	Chart     template.HTML
	Trusted   bool
	Untrusted []string
	// Facts are the coefficients and the peak, each "—" when the fit has none.
	Sigma, Kappa, Lambda, PeakN, PeakThroughput, Residual string
	By                                                    string
	Points                                                int32
}

func estimate(e *v1alpha1.Estimate) string {
	if e == nil || e.Value == "" {
		return dash
	}
	if e.Low != "" && e.High != "" {
		return fmt.Sprintf("%s (95 %% CI %s – %s)", e.Value, e.Low, e.High)
	}
	return e.Value
}

func estimateValue(e *v1alpha1.Estimate) (float64, bool) {
	if e == nil {
		return 0, false
	}
	return parseNumber(e.Value)
}

// scalingViews are the USL sections of the profiles whose summary has a fit.
func scalingViews(p *v1alpha1.CapacityPlan) []scalingView {
	var out []scalingView
	for i, s := range p.Status.Summary {
		f := s.Scaling
		if f == nil {
			continue
		}
		out = append(out, scalingView{Profile: s.Profile, Chart: uslChart(fmt.Sprintf("usl-%d", i), s.Profile, f),
			Trusted: f.Trusted, Untrusted: f.Untrusted, Sigma: estimate(f.Sigma), Kappa: estimate(f.Kappa),
			Lambda: estimate(f.Lambda), PeakN: orDash(f.PeakN), PeakThroughput: orDash(f.PeakThroughput),
			Residual: orDash(f.ResidualStdErr), By: orDash(f.By), Points: f.Points})
	}
	return out
}

// uslChart draws the measured points and, when the fit has its three coefficients, the curve
// through them (dashed when the fit is not trusted) and the peak.
func uslChart(name, profile string, f *v1alpha1.ScalingFit) template.HTML {
	type pt struct{ n, x float64 }
	var pts []pt
	xMax, yMax := 0.0, 0.0
	for _, m := range f.Measured {
		n, ok1 := parseNumber(m.N)
		x, ok2 := parseNumber(m.Throughput)
		if ok1 && ok2 {
			pts = append(pts, pt{n, x})
			xMax, yMax = max(xMax, n), max(yMax, x)
		}
	}
	lambda, okL := estimateValue(f.Lambda)
	sigma, okS := estimateValue(f.Sigma)
	kappa, okK := estimateValue(f.Kappa)
	curve := okL && okS && okK
	peak, okP := parseNumber(f.PeakN)
	// Show the peak when it is near the measured range: far beyond it, the curve would
	// squeeze the points into a corner.
	if okP && peak > xMax && (xMax == 0 || peak <= 3*xMax) {
		xMax = peak * 1.1
	}
	if xMax == 0 {
		xMax = 1
	}
	var line []pt
	if curve {
		for i := 0; i <= uslCurveSteps; i++ {
			n := xMax * float64(i) / uslCurveSteps
			if x := USLThroughput(lambda, sigma, kappa, n); finite(x) && x >= 0 {
				line = append(line, pt{n, x})
				yMax = max(yMax, x)
			}
		}
	}
	p := newSVGPlot(name, NiceAxis(0, xMax), NiceAxis(0, yMax))
	p.frame("load N: "+orDash(f.By), "throughput")
	if len(line) > 1 {
		var d strings.Builder
		for i, q := range line {
			if i == 0 {
				fmt.Fprintf(&d, "M%.1f %.1f", p.px(q.n), p.py(q.x))
			} else {
				fmt.Fprintf(&d, " L%.1f %.1f", p.px(q.n), p.py(q.x))
			}
		}
		class := "fit"
		if !f.Trusted {
			class = "fit untrusted"
		}
		p.add(`<path class="%s" d="%s" stroke="%s"/>`, class, d.String(), colour(0))
	}
	if okP && peak > 0 && peak <= p.x.Max {
		x := p.px(peak)
		p.add(`<line class="peak" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, p.t, p.b)
		p.text(x+4, p.t+12, "start", "mark", "peak N = "+f.PeakN)
	}
	for _, q := range pts {
		p.add(`<circle class="measured" cx="%.1f" cy="%.1f" r="4" fill="%s"/>`, p.px(q.n), p.py(q.x), colour(1))
	}
	// legend
	p.add(`<circle cx="%.1f" cy="14" r="4" fill="%s"/>`, p.l+6, colour(1))
	p.text(p.l+14, 18, "start", "legend", fmt.Sprintf("measured (%d)", len(pts)))
	if len(line) > 1 {
		label := "USL fit"
		if !f.Trusted {
			label = "USL fit (untrusted)"
		}
		class := "fit"
		if !f.Trusted {
			class = "fit untrusted"
		}
		p.add(`<path class="%s" d="M%.1f 14 l22 0" stroke="%s"/>`, class, p.l+130, colour(0))
		p.text(p.l+158, 18, "start", "legend", label)
	}
	return p.html("Scaling of " + profile)
}
