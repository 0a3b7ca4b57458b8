package plugin

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
)

var (
	cmpThRE = regexp.MustCompile(`<th data-column="([^"]*)">([^<]*)</th>`)
	cmpTdRE = regexp.MustCompile(`<td data-column="([^"]*)"(?: class="[^"]*")?>([^<]*)</td>`)
)

// TestHTMLShowsTheComparisonColumns: the HTML report's comparison table has every comparison
// column defined for HTML, under its name, with the value the definition reads, in order.
func TestHTMLShowsTheComparisonColumns(t *testing.T) {
	run := measuredRun()
	var b bytes.Buffer
	if err := htmlreport.WriteTestRun(&b, htmlreport.TestRunInput{Run: run}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	start := strings.Index(page, `<table class="small comparison-table">`)
	if start < 0 {
		t.Fatalf("no comparison table:\n%s", page)
	}
	table := page[start : start+strings.Index(page[start:], "</table>")]
	row := columns.TestedRows(run.Status.Comparison)[0]
	var wantHead, gotHead []string
	wantCells, gotCells := map[string]string{}, map[string]string{}
	for _, c := range columns.ComparisonFor(columns.HTML) {
		wantHead = append(wantHead, c.ID+"="+c.Header(columns.HTML))
		wantCells[c.ID] = c.Value(row)
	}
	for _, m := range cmpThRE.FindAllStringSubmatch(table, -1) {
		gotHead = append(gotHead, m[1]+"="+html.UnescapeString(m[2]))
	}
	for _, m := range cmpTdRE.FindAllStringSubmatch(table, -1) {
		gotCells[m[1]] = html.UnescapeString(m[2])
	}
	if diff := cmp.Diff(wantHead, gotHead); diff != "" {
		t.Errorf("header (-defined +page):\n%s", diff)
	}
	if diff := cmp.Diff(wantCells, gotCells); diff != "" {
		t.Errorf("row (-defined +page):\n%s", diff)
	}
}
