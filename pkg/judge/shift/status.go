package shift

import (
	"fmt"
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// maxStatusShifts bounds status.trend.shifts (its MaxItems).
const maxStatusShifts = 32

// Status is status.trend for a run: the change points of t within its last lastN runs, the
// method, and a message that says what was found and what was left out (notes: records that
// could not be read, runs without the order's label).
func Status(t Trend, lastN int, o Options, notes []string) v1alpha1.TrendResult {
	o = o.WithDefaults()
	out := v1alpha1.TrendResult{Runs: int32(len(t.Runs)), Method: Method(o)}
	if n := len(t.Runs); n > 0 {
		out.First, out.Last = textsafe.Cut(t.Runs[0].Name, 253), textsafe.Cut(t.Runs[n-1].Name, 253)
	}
	recent := t.Recent(lastN)
	worse := 0
	for _, s := range recent {
		if s.Direction == Worse {
			worse++
		}
		if len(out.Shifts) < maxStatusShifts {
			out.Shifts = append(out.Shifts, v1alpha1.TrendShift{Metric: textsafe.Cut(s.Metric, 256), Stat: textsafe.Cut(s.Stat, 16), Run: textsafe.Cut(s.Run, 253),
				Before: number(s.Before), After: number(s.After), ShiftPercent: strconv.FormatFloat(s.ShiftPercent, 'f', 2, 64),
				PValue: strconv.FormatFloat(s.PValue, 'f', 4, 64), Direction: s.Direction})
		}
	}
	var msg string
	switch {
	case len(t.Runs) < 2*o.MinSegment:
		msg = fmt.Sprintf("%d runs: a change point needs %d on each side; nothing could be found yet", len(t.Runs), o.MinSegment)
	case len(recent) == 0:
		msg = fmt.Sprintf("no change point within the last %d of %d runs", lastN, len(t.Runs))
	default:
		msg = fmt.Sprintf("%d change points within the last %d of %d runs, %d for the worse", len(recent), lastN, len(t.Runs), worse)
	}
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	out.Message = textsafe.Cut(msg, 1024)
	return out
}

// Worst is the first change for the worse among the trend's shifts, as a verdict's message
// says it; "" when none is.
func Worst(r v1alpha1.TrendResult) string {
	for _, s := range r.Shifts {
		if s.Direction == Worse {
			name := s.Metric
			if s.Stat != "" {
				name += " " + s.Stat
			}
			return fmt.Sprintf("%s %s %% from %s (%s → %s, p %s)", name, signed(s.ShiftPercent), s.Run, s.Before, s.After, s.PValue)
		}
	}
	return ""
}

// Method is status.trend.method for o.
func Method(o Options) string {
	o = o.WithDefaults()
	test := fmt.Sprintf("permutation test (%d permutations)", o.Permutations)
	if o.Test == TTest {
		test = "two-sample t-test"
	}
	return fmt.Sprintf("E-Divisive means over whole-run values, %s, p ≤ %s, window %d, at least %d runs a level",
		test, strconv.FormatFloat(o.PValue, 'g', 4, 64), o.Window, o.MinSegment)
}

func signed(p string) string {
	if strings.HasPrefix(p, "-") {
		return p
	}
	return "+" + p
}

func number(v float64) string {
	if v != 0 && (v < 0.01 && v > -0.01) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
