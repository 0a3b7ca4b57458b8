package plugin

import (
	"encoding/csv"
	"io"

	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// CSVHeader are the CSV report's columns, named as seed 000 (Dwarfguard 0.8.0) names them, so a
// CapacityPlan's rows paste into that spreadsheet: the CSV columns of pkg/present/columns, which
// says where each comes from. Seed 000 keeps its sizing table pivoted (a column per machine, a
// row per test and handler count); the CSV is the same table in long form, one line per cell.
var CSVHeader = func() []string {
	var out []string
	for _, c := range columns.For(columns.CSV) {
		out = append(out, c.Header(columns.CSV))
	}
	return out
}()

// writeCSV writes the header and a line per row, each cell read by its column.
func writeCSV(w io.Writer, rows []columns.Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	cols := columns.For(columns.CSV)
	for _, r := range rows {
		line := make([]string, len(cols))
		for i, c := range cols {
			line[i] = textsafe.Line(r.Cell(c)) // a spreadsheet or a terminal shows them
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
