package htmlreport

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// cell is one column's value on the page, from pkg/present/columns: headed by the column's
// Name, marked with its ID (data-column) so a test finds it.
type cell struct {
	ID, Name, Unit, Value string
	Num                   bool
	// Class styles the value (a verdict's colour), Suffix follows it, Href links it, and
	// Bound flags a generator-bound row.
	Class, Suffix, Href string
	Bound               bool
}

func cellOf(c columns.Column, r columns.Row) cell {
	return cell{ID: c.ID, Name: c.Header(columns.HTML), Unit: c.Unit, Value: r.Cell(c), Num: !c.Key || c.ID == columns.Repetition}
}

// headline are the result columns of the HTML report the run has a value for.
func headline(run *v1alpha1.TestRun) []cell {
	var out []cell
	for _, c := range columns.For(columns.HTML) {
		if v := cellOf(c, columns.RunRow(run)); !c.Key && v.Value != "" {
			out = append(out, v)
		}
	}
	return out
}

// keyCells are the run's key columns of the HTML report by ID: its facts (phase, profile) and
// its verdict.
func keyCells(run *v1alpha1.TestRun) map[string]cell {
	out := map[string]cell{}
	for _, c := range columns.For(columns.HTML) {
		if c.Key {
			out[c.ID] = cellOf(c, columns.RunRow(run))
		}
	}
	return out
}

// planTable is a plan's table: the HTML columns a plan's row carries, its sweep dimensions
// after the profile.
type planTable struct {
	Header []cell
	Rows   []planLine
}

type planLine struct {
	Bound bool
	Cells []cell
}

func newPlanTable(p *v1alpha1.CapacityPlan, dims []string, href func(string) string) planTable {
	var cols []columns.Column
	for _, c := range columns.For(columns.HTML) {
		if c.Row {
			cols = append(cols, c)
		}
	}
	var t planTable
	for _, c := range cols {
		t.Header = append(t.Header, cell{ID: c.ID, Name: c.Header(columns.HTML), Unit: c.Unit})
		if c.ID == columns.Profile {
			for _, d := range dims {
				t.Header = append(t.Header, cell{Name: d})
			}
		}
	}
	for _, r := range columns.PlanRows(p) {
		st := r.Run.Status
		line := planLine{Bound: st.GeneratorBound}
		for _, c := range cols {
			v := cellOf(c, r)
			switch c.ID {
			case columns.Verdict:
				if v.Value != "" {
					v.Class = verdictClass(st.Verdict) + "-text"
				}
				if st.Reason != "" {
					v.Suffix = " (" + st.Reason + ")"
				}
				v.Bound = st.GeneratorBound
			case columns.TestRun:
				if href != nil && v.Value != "" {
					v.Href = href(v.Value)
				}
			}
			line.Cells = append(line.Cells, v)
			if c.ID == columns.Profile {
				for _, d := range dims {
					line.Cells = append(line.Cells, cell{Value: r.Values[d], Num: true})
				}
			}
		}
		t.Rows = append(t.Rows, line)
	}
	return t
}
