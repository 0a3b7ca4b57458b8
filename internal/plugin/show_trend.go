package plugin

import (
	"fmt"
	"io"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// writeRunTrend prints status.trend under the comparisons: the runs analysed, the method, what
// was found, and a row per change point.
func writeRunTrend(w io.Writer, t *v1alpha1.TrendResult) {
	if t == nil {
		return
	}
	section(w, "Trend over the kept runs", [][]string{
		{"Runs:", fmt.Sprintf("%d (%s … %s)", t.Runs, orDash(t.First), orDash(t.Last))},
		{"Method:", oneLine(t.Method)},
		{"Message:", oneLine(t.Message)},
	})
	if len(t.Shifts) == 0 {
		return
	}
	rows := [][]string{{"METRIC", "FROM RUN", "BEFORE", "AFTER", "SHIFT %", "P-VALUE", "DIRECTION"}}
	for _, s := range t.Shifts {
		name := s.Metric
		if s.Stat != "" {
			name += " " + s.Stat
		}
		rows = append(rows, []string{name, s.Run, s.Before, s.After, s.ShiftPercent, s.PValue, orDash(s.Direction)})
	}
	section(w, "", rows)
}
