package htmlreport

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// dash is what the report shows for a value it does not have: never 0, which reads as a
// measurement ("Breaking point 0").
const dash = "—"

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return dash
	}
	return s
}

// devices is a count, "—" for none (0: not measured).
func devices(n int64) string {
	if n == 0 {
		return dash
	}
	return fmt.Sprint(n)
}

// intervalName says what a FigureRange's range is.
func intervalName(r *v1alpha1.FigureRange) string {
	switch r.Interval {
	case v1alpha1.IntervalCI95:
		if r.Coverage != "" {
			return "95 % CI, " + r.Coverage + " % coverage"
		}
		return "95 % CI"
	case v1alpha1.IntervalMinMax:
		return "min–max"
	case v1alpha1.IntervalPI95:
		return "95 % prediction interval"
	case v1alpha1.IntervalAssumed:
		return "assumed, not measured"
	}
	return ""
}

// figure writes a FigureRange as "median (low–high, min–max)", "median (low–high, 95 % CI)",
// the median alone for one repetition, and "—" when there is none.
func figure(r *v1alpha1.FigureRange) string {
	if r == nil || r.Median == "" {
		return dash
	}
	if r.Interval == v1alpha1.IntervalSingle || r.Low == "" || r.High == "" {
		return r.Median
	}
	return fmt.Sprintf("%s (%s–%s, %s)", r.Median, r.Low, r.High, intervalName(r))
}

// cvOf is a figure's coefficient of variation, "—" without one.
func cvOf(rs ...*v1alpha1.FigureRange) string {
	for _, r := range rs {
		if r != nil && r.CVPercent != "" {
			return r.CVPercent + " %"
		}
	}
	return dash
}

// settingLine is one sweep setting (floor or best) of a profile in the sizing table.
type settingLine struct {
	Kind    string // "floor" or "best"
	Values  string
	Passed  string
	Pushes  string
	Ideal   string
	Typical string
	Break   string
	MemPer  string
	Safe    string
	CV      string
	Limit   string
}

// sizingProfile is a profile's block of the sizing table: its settings, then what it holds.
type sizingProfile struct {
	Profile      string
	Settings     []settingLine
	SafeFleet    string
	Limit        string
	LimitMessage string
	SafeRule     string
	Noise        string
	// MemoryBound holds at any push period; Dropped says which repetitions the ranges leave out.
	MemoryBound string
	Dropped     string
}

func valuesText(v map[string]string) string {
	if len(v) == 0 {
		return dash
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + v[k]
	}
	return strings.Join(parts, " ")
}

func newSettingLine(kind string, c *v1alpha1.CellFigures) settingLine {
	return settingLine{Kind: kind, Values: valuesText(c.Values), Passed: fmt.Sprint(c.Passed),
		Pushes: figure(c.PushesPerSecond), Ideal: figure(c.IdealMaxDevices), Typical: figure(c.TypicalMaxDevices),
		Break: figure(c.BreakingPointDevices), MemPer: figure(c.MemoryPerDeviceMiB), Safe: devices(c.SafeMaxDevices),
		CV: cvOf(c.IdealMaxDevices, c.PushesPerSecond), Limit: orDash(c.Limit)}
}

// sizingProfiles are the summary's profiles that carry ranges (status.summary[].floor).
func sizingProfiles(p *v1alpha1.CapacityPlan) []sizingProfile {
	var out []sizingProfile
	for _, s := range p.Status.Summary {
		if s.Floor == nil && s.Best == nil {
			continue
		}
		sp := sizingProfile{Profile: s.Profile, SafeFleet: devices(s.SafeFleet), Limit: orDash(s.Limit),
			LimitMessage: s.LimitMessage, SafeRule: s.SafeRule, Noise: s.Noise, Dropped: s.DroppedRepetitions}
		if s.MemoryBound > 0 {
			sp.MemoryBound = devices(s.MemoryBound)
		}
		if s.Floor != nil {
			sp.Settings = append(sp.Settings, newSettingLine("floor", s.Floor))
		}
		if s.Best != nil {
			sp.Settings = append(sp.Settings, newSettingLine("best", s.Best))
		}
		out = append(out, sp)
	}
	return out
}

// answerView is status.answer: a sentence and its parts.
type answerView struct {
	Sentence string
	Message  string
	Cost     string
	Found    bool
}

// newAnswerView writes the answer from its fields; status.answer.message follows it, as
// pkg/plan wrote it (it says why there is no answer when none is found).
func newAnswerView(a *v1alpha1.FleetAnswer) *answerView {
	if a == nil {
		return nil
	}
	v := &answerView{Message: a.Message, Found: a.Profile != ""}
	ask := fmt.Sprintf("%d devices acting every %s (%s per second)", a.Devices, orDash(a.Period), orDash(a.Rate))
	if !v.Found {
		v.Sentence = "No profile of this plan holds " + ask + "."
		return v
	}
	predicted := ""
	if a.Predicted {
		predicted = " (predicted, not measured)"
	}
	v.Sentence = fmt.Sprintf("%s%s holds %s: safe up to %s devices, %s %% headroom left, bound by %s.",
		a.Profile, predicted, ask, devices(a.SafeMaxDevices), orDash(a.HeadroomPercent), orDash(a.Limit))
	if a.MonthlyCost != "" {
		money := func(amount string) string { return strings.TrimSpace(orDash(amount) + " " + a.Currency) }
		v.Cost = fmt.Sprintf("Cost: %s per month, %s per 1,000 devices per month", money(a.MonthlyCost), money(a.CostPer1000Devices))
		if a.PriceAsOf != "" {
			v.Cost += " (price as of " + a.PriceAsOf + ")"
		}
		v.Cost += "."
	}
	return v
}
