package plugin

import (
	"fmt"
	"io"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/plan"
)

// writePlanCapacity prints what a planner signs: per profile its safe fleet, what bounds it and
// its memory bound, each figure of the floor (weakest setting) and the best setting as "median
// (low–high)" with the kind of range, each row's own noise warning, the repetitions left out,
// the model's predictions with their scoreboard error, and the answer to spec.question. A
// missing value is "—", never 0.
func writePlanCapacity(w io.Writer, s *v1alpha1.CapacityPlanStatus) {
	if !hasCapacity(s) {
		return
	}
	rows := [][]string{{"PROFILE", "SOURCE", "SAFE FLEET", "LIMIT", "MEMORY BOUND", "IDEAL MAX", "RANGE", "NOTE"}}
	var notes [][]string
	for _, ps := range s.Summary {
		var ideal *v1alpha1.FigureRange
		note := ""
		if ps.Floor != nil {
			// The row shows the floor's range: its note is the floor's noise, never the best's.
			ideal, note = ps.Floor.IdealMaxDevices, ps.Floor.Noise
		}
		rows = append(rows, []string{ps.Profile, "measured", devicesOrNone(ps.SafeFleet), orNone(ps.Limit), devicesOrNone(ps.MemoryBound), figure(ideal), rangeKind(ideal), orNone(note)})
		for _, n := range [][2]string{{"limit", ps.LimitMessage}, {"safe rule", ps.SafeRule}, {"best setting noise", bestNoise(ps)},
			{"noise", legacyNoise(ps)}, {"left out", ps.DroppedRepetitions}, {"scaling", scaling(ps.Scaling)}} {
			if n[1] != "" {
				notes = append(notes, []string{ps.Profile + " " + n[0] + ":", oneLine(n[1])})
			}
		}
	}
	if m := s.Model; m != nil {
		for _, pr := range m.Predictions {
			note := pr.Message
			if pr.ErrorPercent != "" {
				note = fmt.Sprintf("scoreboard: measured %s, predicted %s %% off", devicesOrNone(pr.MeasuredIdealMaxDevices), signed(pr.ErrorPercent))
			}
			rows = append(rows, []string{pr.Profile, "predicted", devicesOrNone(pr.SafeMaxDevices), orNone(pr.Limit), devicesOrNone(pr.MemoryBound),
				figure(pr.IdealMaxDevices), rangeKind(pr.IdealMaxDevices), orNone(note)})
		}
	}
	section(w, "Capacity per profile (safe fleet: the floor's low end × the safe percentage, or MEMORY BOUND when smaller; "+
		"at another push period the answer rescales the first and caps at MEMORY BOUND, which no period changes)", rows)
	if seedMemoryShown(s) {
		notes = append(notes, []string{"DEVS AT FULL RAM:", "seed 000's figure of each run above: devices ÷ RAM utilisation, all the RAM a run used " +
			"taken to grow with devices, up to 100 % of the profile's memory. Not what the answer uses: MEMORY BOUND is the safe percentage " +
			"of the memory, less what the target held before the load, over the memory per device (its source in the limit note)"})
	}

	cells := [][]string{{"PROFILE", "SETTING", "CELL", "PASSED", "PUSHES/S", "IDEAL MAX", "TYPICAL MAX", "BREAKING POINT", "MIB/DEVICE", "SAFE", "LIMIT", "RANGE"}}
	for _, ps := range s.Summary {
		for _, c := range []struct {
			name string
			f    *v1alpha1.CellFigures
		}{{"floor", ps.Floor}, {"best", ps.Best}} {
			if c.f == nil {
				continue
			}
			f := c.f
			cells = append(cells, []string{ps.Profile, c.name, orNone(strings.TrimSpace(plan.CellLabel("", f.Values))), fmt.Sprint(f.Passed), figure(f.PushesPerSecond), figure(f.IdealMaxDevices),
				figure(f.TypicalMaxDevices), figure(f.BreakingPointDevices), figure(f.MemoryPerDeviceMiB), devicesOrNone(f.SafeMaxDevices), orNone(f.Limit), rangeKind(f.IdealMaxDevices)})
		}
	}
	if len(cells) > 1 {
		section(w, "Floor and best settings (median (low–high) over the repetitions that PASSED)", cells)
	}
	if m := s.Model; m != nil {
		notes = append(notes, []string{"Model:", fmt.Sprintf("capacity = %s × cores^%s, fitted to %d measured profiles", orNone(m.Scale), orNone(m.Exponent), m.Points)})
		for _, u := range m.Untrusted {
			notes = append(notes, []string{"Model untrusted:", oneLine(u)})
		}
	}
	if a := s.Answer; a != nil {
		notes = append(notes, []string{"Answer:", oneLine(a.Message)})
	}
	section(w, "Notes", notes)
}

// bestNoise is the best setting's own noise warning, for the notes: its range is in the
// settings table, not in the capacity row.
func bestNoise(ps v1alpha1.ProfileSummary) string {
	if ps.Best == nil {
		return ""
	}
	return ps.Best.Noise
}

// legacyNoise is the profile's noise of a status written before each setting kept its own:
// it may speak of either setting, so it goes to the notes, not beside the floor's range.
func legacyNoise(ps v1alpha1.ProfileSummary) string {
	if ps.Floor != nil && ps.Floor.Noise != "" || ps.Best != nil && ps.Best.Noise != "" {
		return ""
	}
	return ps.Noise
}

// seedMemoryShown: some row or profile has seed 000's memory figure, which the tables above
// show beside the answer's memory bound.
func seedMemoryShown(s *v1alpha1.CapacityPlanStatus) bool {
	for _, ps := range s.Summary {
		if ps.MaxSafeDevicesByMemory > 0 {
			return true
		}
	}
	for _, r := range s.Table {
		if r.MaxSafeDevicesByMemory > 0 {
			return true
		}
	}
	return false
}

// hasCapacity: the status carries issue 27's figures (a plan made before has only the
// weakest-row summary above).
func hasCapacity(s *v1alpha1.CapacityPlanStatus) bool {
	if s.Model != nil || s.Answer != nil {
		return true
	}
	for _, ps := range s.Summary {
		if ps.Floor != nil || ps.Best != nil || ps.SafeFleet != 0 || ps.Limit != "" {
			return true
		}
	}
	return false
}

// figure is "median (low–high)", the median alone for one repetition, — for none.
func figure(f *v1alpha1.FigureRange) string {
	switch {
	case f == nil || f.Median == "":
		return none
	case f.Low == "" && f.High == "":
		return f.Median
	}
	return fmt.Sprintf("%s (%s–%s)", f.Median, orNone(f.Low), orNone(f.High))
}

// rangeKind says what the range is: min–max of n, a 95 % CI of the median with its exact
// coverage, a prediction's 95 % prediction interval or assumed range, and the coefficient of
// variation.
func rangeKind(f *v1alpha1.FigureRange) string {
	if f == nil || f.Median == "" {
		return none
	}
	var s string
	switch f.Interval {
	case v1alpha1.IntervalCI95:
		s = "95% CI"
		if f.Coverage != "" {
			s += " (" + f.Coverage + "%)"
		}
	case v1alpha1.IntervalPI95:
		s = "95% prediction interval"
	case v1alpha1.IntervalAssumed:
		s = "assumed, not measured"
	case v1alpha1.IntervalMinMax:
		s = "min–max"
	case v1alpha1.IntervalSingle:
		s = "single run"
	default:
		s = orNone(f.Interval)
	}
	s += fmt.Sprintf(", n=%d", f.N)
	if f.CVPercent != "" {
		s += ", CV " + f.CVPercent + "%"
	}
	return s
}

func signed(pct string) string {
	if pct != "" && !strings.HasPrefix(pct, "-") && !strings.HasPrefix(pct, "+") {
		return "+" + pct
	}
	return pct
}

// scaling is the USL fit in a line: by what, σ, κ, the peak, and whether to trust it.
func scaling(f *v1alpha1.ScalingFit) string {
	if f == nil {
		return ""
	}
	est := func(e *v1alpha1.Estimate) string {
		if e == nil || e.Value == "" {
			return none
		}
		if e.Low == "" && e.High == "" {
			return e.Value
		}
		return fmt.Sprintf("%s (%s–%s)", e.Value, orNone(e.Low), orNone(e.High))
	}
	s := fmt.Sprintf("USL over %s, %d points: σ %s, κ %s, λ %s, peak at %s (%s/s), residual %s",
		orNone(f.By), f.Points, est(f.Sigma), est(f.Kappa), est(f.Lambda), orNone(f.PeakN), orNone(f.PeakThroughput), orNone(f.ResidualStdErr))
	if !f.Trusted {
		s += "; untrusted: " + orNone(strings.Join(f.Untrusted, "; "))
	}
	return s
}
