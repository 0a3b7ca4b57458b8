package plugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/plan"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/sidebyside"
)

// cellKey is the row key of a CapacityPlan comparison's cell ("C1 WORKERS=2").
const cellKey = "cell"

// comparePlans makes the document of two CapacityPlans: B's status.comparison when it names
// A (made by the operator with a rank test over the repetitions; A may since be deleted),
// else the two tables' cells side by side (pkg/plan matches them; no test).
func comparePlans(ns, nameA string, a *v1alpha1.CapacityPlan, errA error, b *v1alpha1.CapacityPlan) (*CompareDocument, error) {
	doc := &CompareDocument{APIVersion: CompareAPIVersion, Kind: ComparePlanKind, Namespace: ns, Baseline: nameA, Current: b.Name}
	if cmp := b.Status.Comparison; cmp != nil && cmp.Baseline != nil && cmp.Baseline.Name == nameA {
		doc.Tested, doc.Source, doc.PlanComparison = true, sourceStatus, cmp.DeepCopy()
		doc.Decision, doc.Worst, doc.Method, doc.Message = string(cmp.Decision), cmp.Worst, cmp.Method, cmp.Message
		if a != nil && cmp.Baseline.UID != "" && string(a.UID) != cmp.Baseline.UID {
			doc.Notes = append(doc.Notes, fmt.Sprintf("%s was compared with an earlier CapacityPlan named %s (uid %s), not with the %s that exists now", b.Name, nameA, cmp.Baseline.UID, nameA))
		}
		doc.Rows = planRows(cmp, func(m v1alpha1.MetricComparison) columns.ComparisonRow {
			return columns.ComparisonRow{Metric: m, Tested: true}
		})
		return doc, nil
	}
	if errA != nil {
		if apierrors.IsNotFound(errA) || strings.Contains(errA.Error(), "no TestRun or CapacityPlan") {
			return nil, fmt.Errorf("%w; %s's status.comparison does not name %s as its baseline, so there is nothing to compare with", errA, b.Name, nameA)
		}
		return nil, errA
	}
	doc.Source, doc.Method = sourceSideBySide, sidebyside.Method+"; per cell the mean over the repetitions that Succeeded"
	doc.Notes = append(doc.Notes, fmt.Sprintf("no significance test: %s has no status.comparison with %s as its baseline, so these are the means of the two tables and a difference may be noise; a plan with spec.baseline.name: %s (and 4 or more repetitions a side) is compared with a test",
		b.Name, nameA, nameA))
	if cmp := b.Status.Comparison; cmp != nil && cmp.Baseline != nil {
		doc.Notes = append(doc.Notes, fmt.Sprintf("%s was compared with %s, not with %s: `kubectl fleetbench compare cp/%s cp/%s` shows that comparison", b.Name, cmp.Baseline.Name, nameA, cmp.Baseline.Name, b.Name))
	}
	side := plan.ComparePlans(a, b)
	doc.Rows = planRows(&side, sidebyside.Untested)
	return doc, nil
}

// planRows are a plan comparison's rows by comparison column ID, each with its cell.
func planRows(c *v1alpha1.PlanComparison, row func(v1alpha1.MetricComparison) columns.ComparisonRow) []map[string]string {
	var out []map[string]string
	for _, cell := range c.Cells {
		label := plan.CellLabel(cell.Profile, cell.Values)
		for _, m := range cell.Metrics {
			r := row(m).Cells(columns.ComparisonColumns)
			r[cellKey] = label
			out = append(out, r)
		}
	}
	return out
}

// ComparePlanRepetitionsKind heads `compare PLAN`'s JSON document.
const ComparePlanRepetitionsKind = "CapacityPlanRepetitions"

// compareRepetitions is seed 001's "1st / 2nd" table of one plan: each cell's first and
// second repetitions side by side, without a test (one run a side).
func (o *options) compareRepetitions(cmd *cobra.Command, arg string) (*CompareDocument, error) {
	_, obj, err := o.resolve(cmd.Context(), arg, true)
	if err != nil {
		return nil, err
	}
	p := obj.plan
	if max(p.Spec.Repetitions, 1) < 2 {
		return nil, fmt.Errorf("CapacityPlan %s has spec.repetitions %d: a 1st / 2nd table needs 2 or more; to compare two plans give both: compare A B", p.Name, max(p.Spec.Repetitions, 1))
	}
	first, second := plan.Repetition(p, 1), plan.Repetition(p, 2)
	doc := &CompareDocument{APIVersion: CompareAPIVersion, Kind: ComparePlanRepetitionsKind, Namespace: p.Namespace, Baseline: first.Name, Current: second.Name,
		Source: sourceSideBySide, Method: sidebyside.Method}
	doc.Notes = append(doc.Notes, "seed 001's 1st / 2nd runs: one run a side, no significance test; the 2nd in % of the 1st, judged by seed 000's bands")
	c := plan.ComparePlans(first, second)
	doc.Rows = planRows(&c, sidebyside.Untested)
	return doc, nil
}
