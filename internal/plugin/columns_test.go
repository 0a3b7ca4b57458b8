package plugin

import (
	"bytes"
	"encoding/csv"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/plan"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
)

// Plain tests of the renderers against pkg/present/columns: no API server involved.

// measuredRun is a finished TestRun with every figure set, and distinct.
func measuredRun() *v1alpha1.TestRun {
	run := tw.MakeTestRun("stab", "ns").Type(v1alpha1.TestTypeStability).Measured(v1alpha1.VerdictPassed).
		Compared("stab-prev", "", tw.LatencyWithin()).Obj()
	run.Spec.Target.Components[0].Env = []corev1.EnvVar{{Name: "WORKERS", Value: "4"}}
	return run
}

// planOf is a CapacityPlan whose one row pkg/plan made of run, as the plan controller does.
func planOf(run *v1alpha1.TestRun) *v1alpha1.CapacityPlan {
	p := tw.MakeCapacityPlan("bench-6", run.Namespace, run, run.Spec.Profile).Sweep("web", "WORKERS", "4").Obj()
	p.Status.Table = plan.Rows(&p.Spec, p.Name, []plan.Cell{{Profile: run.Spec.Profile, Values: []string{"4"}, Repetition: 1}},
		[]plan.Child{{Run: run}})
	p.Status.Table[0].TestRun = run.Name
	return p
}

// want is what r must show of row: every column it shows, by its header there, with the value
// the definition reads; skip leaves a column out (shown only when it has a value).
func want(r columns.Renderer, row columns.Row, skip func(c columns.Column, v string) bool) map[string]string {
	out := map[string]string{}
	for _, c := range columns.For(r) {
		if v := row.Cell(c); skip == nil || !skip(c, v) {
			out[c.Header(r)] = v
		}
	}
	return out
}

// byHeader pairs a table's header with one of its lines.
func byHeader(t *testing.T, header, line []string) map[string]string {
	t.Helper()
	if len(header) != len(line) {
		t.Fatalf("header %q and line %q differ in length", header, line)
	}
	out := map[string]string{}
	for i, h := range header {
		out[h] = line[i]
	}
	return out
}

func undash(m map[string]string) map[string]string {
	for k, v := range m {
		if v == "-" {
			m[k] = ""
		}
	}
	return m
}

func csvCells(t *testing.T, rows []columns.Row) []map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := writeCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		out = append(out, byHeader(t, recs[0], r))
	}
	return out
}

var (
	statRE = regexp.MustCompile(`<div class="stat" data-column="([^"]*)"><div class="label">([^<]*)</div><div class="value">([^<]*)</div>`)
	factRE = regexp.MustCompile(`<dt>([^<]*)</dt><dd data-column="([^"]*)">([^<]*)</dd>`)
	thRE   = regexp.MustCompile(`<th(?: title="[^"]*")?>([^<]*)</th>`)
	tdRE   = regexp.MustCompile(`<td(?: data-column="([^"]*)")?(?: class="num")?>(?:<a [^>]*>|<span [^>]*>)?([^<]*)`)
)

// TestEveryRendererShowsTheColumns renders one TestRun, and the plan row made of it, through
// every renderer and finds each column the definition gives it under the defined name with the
// defined value: a renderer that renames, drops or misreads a column fails here.
func TestEveryRendererShowsTheColumns(t *testing.T) {
	run := measuredRun()
	row := columns.RunRow(run)
	p := planOf(run)
	planRows := columns.PlanRows(p)

	t.Run("table", func(t *testing.T) {
		for _, r := range []columns.Row{row, planRows[0]} {
			table := sizingTable(nil, []columns.Row{r})
			if diff := cmp.Diff(want(columns.Table, r, nil), undash(byHeader(t, table[0], table[1]))); diff != "" {
				t.Errorf("plan %v (-defined +table):\n%s", r.Plan, diff)
			}
		}
	})
	t.Run("csv", func(t *testing.T) {
		for _, r := range []columns.Row{row, planRows[0]} {
			if diff := cmp.Diff(want(columns.CSV, r, nil), csvCells(t, []columns.Row{r})[0]); diff != "" {
				t.Errorf("plan %v (-defined +csv):\n%s", r.Plan, diff)
			}
		}
	})
	t.Run("junit", func(t *testing.T) {
		got := map[string]string{}
		for _, pr := range junitTestRun(run).Suites[0].Properties {
			got[pr.Name] = pr.Value
		}
		if diff := cmp.Diff(want(columns.JUnit, row, nil), got); diff != "" {
			t.Errorf("(-defined +junit properties):\n%s", diff)
		}
	})
	t.Run("html testrun", func(t *testing.T) {
		var b bytes.Buffer
		if err := htmlreport.WriteTestRun(&b, htmlreport.TestRunInput{Run: run}); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range statRE.FindAllStringSubmatch(b.String(), -1) {
			got[html.UnescapeString(m[2])] = html.UnescapeString(m[3])
		}
		for _, m := range factRE.FindAllStringSubmatch(b.String(), -1) {
			got[html.UnescapeString(m[1])] = html.UnescapeString(m[3])
		}
		if m := regexp.MustCompile(`data-column="verdict">([^<]*)<`).FindStringSubmatch(b.String()); m != nil {
			got["Verdict"] = m[1]
		}
		// The page is one run's: a plan row's keys (its repetition, its TestRun) are not among its facts.
		planOnly := func(c columns.Column, v string) bool { return c.ID == columns.Repetition || c.ID == columns.TestRun }
		if diff := cmp.Diff(want(columns.HTML, row, planOnly), got); diff != "" {
			t.Errorf("(-defined +page):\n%s", diff)
		}
	})
	t.Run("html plan", func(t *testing.T) {
		var b bytes.Buffer
		if err := htmlreport.WritePlan(&b, htmlreport.PlanInput{Plan: p}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		start := strings.Index(page, "<h2>Table</h2>")
		if start < 0 {
			t.Fatalf("no plan table:\n%s", page)
		}
		table := page[start : start+strings.Index(page[start:], "</table>")]
		var header, line []string
		for _, m := range thRE.FindAllStringSubmatch(table, -1) {
			header = append(header, html.UnescapeString(m[1]))
		}
		for _, m := range tdRE.FindAllStringSubmatch(table, -1) {
			line = append(line, html.UnescapeString(m[2]))
		}
		got := byHeader(t, header, line)
		delete(got, "WORKERS") // the sweep's own column, named by the plan
		notInRows := func(c columns.Column, v string) bool { return !c.Row }
		if diff := cmp.Diff(want(columns.HTML, planRows[0], notInRows), got); diff != "" {
			t.Errorf("(-defined +page):\n%s", diff)
		}
	})
}
