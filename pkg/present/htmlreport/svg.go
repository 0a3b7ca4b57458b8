package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// svgPlot draws a static chart as inline SVG, for the charts uPlot has no shape for (whiskers,
// a fitted curve under measured points). Its value axes come from NiceAxis, like the uPlot
// charts', and its colours from the same palette, so both kinds read alike. Every text it
// writes is escaped: profile names and messages are a tenant's.
type svgPlot struct {
	name   string
	w, h   float64
	l, r   float64 // plot area's left and right edges
	t, b   float64 // plot area's top and bottom edges
	x, y   Axis
	xNames []string // a category axis: one position per name, 0..len-1
	out    strings.Builder
}

// palette is report.js's.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#843c39"}

func colour(i int) string { return palette[((i%len(palette))+len(palette))%len(palette)] }

func newSVGPlot(name string, x, y Axis) *svgPlot {
	return &svgPlot{name: name, w: 760, h: 320, l: 64, r: 740, t: 30, b: 276, x: x, y: y}
}

func (p *svgPlot) px(v float64) float64 {
	if len(p.xNames) > 0 {
		return p.l + (v+0.5)*(p.r-p.l)/float64(len(p.xNames))
	}
	return p.l + (v-p.x.Min)/(p.x.Max-p.x.Min)*(p.r-p.l)
}

func (p *svgPlot) py(v float64) float64 {
	return p.b - (v-p.y.Min)/(p.y.Max-p.y.Min)*(p.b-p.t)
}

func (p *svgPlot) add(format string, args ...any) { fmt.Fprintf(&p.out, format, args...) }

// text writes an escaped label.
func (p *svgPlot) text(x, y float64, anchor, class, s string) {
	p.add(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, template.HTMLEscapeString(s))
}

// frame draws the grid, the ticks' labels and the axes' labels.
func (p *svgPlot) frame(xLabel, yLabel string) {
	for i, v := range p.y.Ticks {
		y := p.py(v)
		p.add(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.l, p.r, y, y)
		p.text(p.l-6, y+4, "end", "tick", p.y.Labels[i])
	}
	if len(p.xNames) > 0 {
		for i, n := range p.xNames {
			p.text(p.px(float64(i)), p.b+16, "middle", "tick", n)
		}
	} else {
		for i, v := range p.x.Ticks {
			x := p.px(v)
			p.add(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, p.t, p.b)
			p.text(x, p.b+16, "middle", "tick", p.x.Labels[i])
		}
	}
	p.add(`<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.l, p.r, p.b, p.b)
	p.add(`<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, p.l, p.l, p.t, p.b)
	p.text((p.l+p.r)/2, p.h-8, "middle", "label", xLabel)
	p.add(`<text class="label" text-anchor="middle" transform="translate(14 %.1f) rotate(-90)">%s</text>`, (p.t+p.b)/2, template.HTMLEscapeString(yLabel))
}

// html is the finished chart, found by its data-figure attribute.
func (p *svgPlot) html(title string) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg class="figure" data-figure="%s" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">%s</svg>`,
		template.HTMLEscapeString(p.name), p.w, p.h, template.HTMLEscapeString(title), p.out.String()))
}

// finite is v when it is a number to draw, else false.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
