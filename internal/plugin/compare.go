package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/sidebyside"
)

// CompareAPIVersion and CompareKind head compare's JSON document.
const (
	CompareAPIVersion = "fleetbench.dev/v1alpha1"
	CompareKind       = "TestRunComparison"
	ComparePlanKind   = "CapacityPlanComparison"
)

// CompareDocument is `kubectl fleetbench compare A B -o json`: the rows by comparison column
// ID, as the table shows them, and the controller's comparison when there is one.
type CompareDocument struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Baseline   string `json:"baseline"`
	Current    string `json:"current"`
	// Tested: the rows are status.comparison of Current, made with a test of significance;
	// false: two whole-run values a side by side, no test.
	Tested   bool   `json:"tested"`
	Source   string `json:"source"`
	Decision string `json:"decision,omitempty"`
	Worst    string `json:"worst,omitempty"`
	Method   string `json:"method"`
	Message  string `json:"message,omitempty"`
	// Notes say what a reader must know about the rows (no test; a renamed baseline).
	Notes      []string             `json:"notes,omitempty"`
	Rows       []map[string]string  `json:"rows"`
	Comparison *v1alpha1.Comparison `json:"comparison,omitempty"`
	// PlanComparison is B's status.comparison when A and B are CapacityPlans; their rows
	// then carry the cell ("C1 WORKERS=2") under "cell".
	PlanComparison *v1alpha1.PlanComparison `json:"planComparison,omitempty"`
}

// Sources of a comparison.
const (
	sourceStatus     = "status.comparison"
	sourceSideBySide = "status alone"
)

func newCompareCommand(o *options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "compare A B | compare PLAN [-o table|json]",
		Short: "Compare TestRun (or CapacityPlan) B with A: seed 000's table with % of previous, band and decision",
		Long: `Compare TestRun B with TestRun A (its baseline), as seed 000's "Comparison of some data with
later versions": per metric A's value, B's, B in % of A ("% of previous"), the band and the
decision.

When B's status.comparison names A as its baseline (B has spec.baseline), that comparison is
printed: it was made by the operator with a test of significance over the runs' windows, and
shows its confidence interval and p-value. A need not exist any more: a baseline deleted by
its TTL is still named by B's comparison.

Otherwise the table is made from the two runs' status alone: their whole-run values and
seed 000's bands (resources and latency: success <= 100 %, ok <= 120 %; throughput: success
>= 100 %, ok >= 80 %). That is two numbers, not a test: a decision reads e.g. "ok (no test)",
and a difference may be noise. Give B spec.baseline.name: A for a tested comparison.

Two CapacityPlans are compared cell by cell (profile and sweep values), as seed 000's table
per profile: memory peak, KiB per device, pushes/s (req/s without pushes) and safe max
devices. When B's spec.baseline names A, B's status.comparison is printed (a rank test over
the repetitions); otherwise the two tables' means side by side, without a test.

With one CapacityPlan, its first and second repetitions of each cell are set side by side
(seed 001's "1st / 2nd" columns), without a test: how much a cell varies between runs.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("-o %q: want table or json", output)
			}
			var doc *CompareDocument
			var err error
			if len(args) == 1 {
				doc, err = o.compareRepetitions(cmd, args[0])
			} else {
				doc, err = o.compare(cmd, args[0], args[1])
			}
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(o.streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(doc)
			}
			writeCompare(o.streams.Out, doc)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

var errMixed = errors.New("compare two TestRuns or two CapacityPlans, not one of each (a plan's rows name their TestRuns: kubectl fleetbench get cp/NAME)")

// compare reads B, then A, and makes the document: B's own comparison when it names A, else
// the two runs side by side.
func (o *options) compare(cmd *cobra.Command, argA, argB string) (*CompareDocument, error) {
	c, ns, err := o.client()
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	_, nameB, err := parseName(argB, false)
	if err != nil {
		return nil, err
	}
	ka, nameA, err := parseName(argA, false)
	if err != nil {
		return nil, err
	}
	objB, err := lookup(ctx, c, ns, argB, false)
	if err != nil {
		return nil, err
	}
	objA, errA := lookup(ctx, c, ns, argA, false)
	if errA == nil && (objA.plan != nil) != (objB.plan != nil) || ka == kindPlan && objB.run != nil || ka == kindTestRun && objB.plan != nil {
		return nil, errMixed
	}
	if objB.plan != nil {
		return comparePlans(ns, nameA, objA.plan, errA, objB.plan)
	}
	b := objB.run
	doc := &CompareDocument{APIVersion: CompareAPIVersion, Kind: CompareKind, Namespace: ns, Baseline: nameA, Current: nameB}

	if cmp := b.Status.Comparison; cmp != nil && cmp.Baseline != nil && cmp.Baseline.Name == nameA {
		// B was compared with A by the operator; A may since be deleted (its kept results
		// were the baseline), so A is read only to say whether it is still that run.
		doc.Tested, doc.Source, doc.Comparison = true, sourceStatus, cmp.DeepCopy()
		doc.Decision, doc.Worst, doc.Method, doc.Message = string(cmp.Decision), cmp.Worst, cmp.Method, cmp.Message
		if errA == nil && cmp.Baseline.UID != "" && string(objA.run.UID) != cmp.Baseline.UID {
			doc.Notes = append(doc.Notes, fmt.Sprintf("%s was compared with an earlier TestRun named %s (uid %s), not with the %s that exists now", nameB, nameA, cmp.Baseline.UID, nameA))
		}
		doc.Rows = rowCells(columns.TestedRows(cmp))
		return doc, nil
	}
	if errA != nil {
		if apierrors.IsNotFound(errA) || strings.Contains(errA.Error(), "no TestRun or CapacityPlan") {
			return nil, fmt.Errorf("%w; %s's status.comparison does not name %s as its baseline, so there is nothing to compare with", errA, nameB, nameA)
		}
		return nil, errA
	}
	doc.Source, doc.Method = sourceSideBySide, sidebyside.Method
	doc.Notes = append(doc.Notes, fmt.Sprintf("no significance test: %s has no status.comparison with %s as its baseline, so these are one whole-run value a side and a difference may be noise; give %s spec.baseline.name: %s for a tested comparison",
		nameB, nameA, nameB, nameA))
	if cmp := b.Status.Comparison; cmp != nil && cmp.Baseline != nil {
		doc.Notes = append(doc.Notes, fmt.Sprintf("%s was compared with %s, not with %s: `kubectl fleetbench compare %s %s` shows that comparison", nameB, cmp.Baseline.Name, nameA, cmp.Baseline.Name, nameB))
	}
	doc.Rows = rowCells(sidebyside.Rows(objA.run, b))
	return doc, nil
}

// rowCells are the rows by comparison column ID.
func rowCells(rows []columns.ComparisonRow) []map[string]string {
	out := make([]map[string]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Cells(columns.ComparisonColumns))
	}
	return out
}

// writeCompare prints the document: a head naming the runs and how they were compared, then
// the table.
func writeCompare(w io.Writer, doc *CompareDocument) {
	head := [][]string{{"Baseline (A):", doc.Baseline}, {"This run (B):", doc.Current}}
	switch doc.Kind {
	case ComparePlanKind:
		head[1][0] = "This plan (B):"
	case ComparePlanRepetitionsKind:
		head = [][]string{{"1st:", doc.Baseline}, {"2nd:", doc.Current}}
	}
	if doc.Tested {
		by := "the operator (status.comparison of " + doc.Current
		if doc.Comparison != nil {
			b := doc.Comparison.Baseline
			src := b.Source
			if b.CompletionTime != nil {
				src += ", completed " + b.CompletionTime.UTC().Format(time.RFC3339)
			}
			by += "; baseline read from " + orDash(src)
		}
		head = append(head, []string{"Compared by:", by + ")"})
		head = append(head, []string{"Decision:", orDash(doc.Decision) + suffix(": ", doc.Worst)})
	} else {
		by := "this command, from the two runs' status alone"
		if doc.Kind != CompareKind {
			by = "this command, from the plans' tables alone"
		}
		head = append(head, []string{"Compared by:", by})
	}
	head = append(head, []string{"Method:", orDash(oneLine(doc.Method))})
	if doc.Message != "" {
		head = append(head, []string{"Message:", oneLine(doc.Message)})
	}
	for _, n := range doc.Notes {
		head = append(head, []string{"Note:", n})
	}
	section(w, "", head)
	table := comparisonTable(doc.Rows)
	if doc.Kind == ComparePlanRepetitionsKind && len(doc.Rows) > 0 { // seed 001's own headers
		seed001 := map[string]string{"BASELINE": "1ST", "CURRENT": "2ND", "% OF PREVIOUS": "% OF 1ST"}
		for i, h := range table[0] {
			if s, ok := seed001[h]; ok {
				table[0][i] = s
			}
		}
	}
	section(w, "Comparison", table)
}

// comparisonTable is a header and a line per row in the Table comparison columns; a column
// no row has a value in (the CI and p-value of an untested comparison) is left out.
func comparisonTable(rows []map[string]string) [][]string {
	if len(rows) == 0 {
		return [][]string{{"(no metric compared)"}}
	}
	var cols []columns.ComparisonColumn
	for _, r := range rows {
		if r[cellKey] != "" { // a CapacityPlan's rows: the cell leads, as seed 000's profile does
			cols = append(cols, columns.ComparisonColumn{ID: cellKey, Short: "CELL"})
			break
		}
	}
	for _, c := range columns.ComparisonFor(columns.Table) {
		for _, r := range rows {
			if r[c.ID] != "" {
				cols = append(cols, c)
				break
			}
		}
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Header(columns.Table)
	}
	out := [][]string{header}
	for _, r := range rows {
		line := make([]string, len(cols))
		for i, c := range cols {
			line[i] = orDash(r[c.ID])
		}
		out = append(out, line)
	}
	return out
}

func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// writeRunComparison prints a run's comparison with its baseline (what "the baseline", or
// "the fixed reference") under its results: who it was, its shape, the decision, and the table.
func writeRunComparison(w io.Writer, what, label string, c *v1alpha1.Comparison) {
	if c == nil {
		return
	}
	var head [][]string
	if b := c.Baseline; b != nil {
		src := b.Name + " (" + orDash(b.Source)
		if b.CompletionTime != nil {
			src += ", completed " + b.CompletionTime.UTC().Format(time.RFC3339)
		}
		head = append(head, []string{label, src + ")"})
		if b.Shape != "" {
			head = append(head, []string{"Shape:", oneLine(b.Shape)})
		}
	} else {
		head = append(head, []string{label, "none found"})
	}
	head = append(head, []string{"Decision:", orDash(string(c.Decision)) + suffix(": ", c.Worst)})
	if c.Method != "" {
		head = append(head, []string{"Method:", oneLine(c.Method)})
	}
	if c.Message != "" {
		head = append(head, []string{"Message:", oneLine(c.Message)})
	}
	section(w, "Comparison with "+what, head)
	if len(c.Metrics) > 0 {
		section(w, "", comparisonTable(rowCells(columns.TestedRows(c))))
	}
}
