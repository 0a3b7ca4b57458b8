package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// list is `kubectl fleetbench get` without a name: the namespace's TestRuns and CapacityPlans,
// as kubectl get lists them (onlyPlans: the plans alone).
func (o *options) list(ctx context.Context, onlyPlans bool) error {
	c, ns, err := o.client()
	if err != nil {
		return err
	}
	var runs v1alpha1.TestRunList
	if !onlyPlans {
		if err := c.List(ctx, &runs, client.InNamespace(ns)); err != nil {
			return err
		}
	}
	var plans v1alpha1.CapacityPlanList
	if err := c.List(ctx, &plans, client.InNamespace(ns)); err != nil {
		return err
	}
	writeList(o.streams.Out, ns, runs.Items, plans.Items, time.Now())
	return nil
}

// writeList prints the TestRuns in the printer columns of pkg/present/columns (those
// `kubectl get testruns` shows) and the CapacityPlans in theirs, each by name, with their age
// at now.
func writeList(w io.Writer, ns string, runs []v1alpha1.TestRun, plans []v1alpha1.CapacityPlan, now time.Time) {
	if len(runs) == 0 && len(plans) == 0 {
		_, _ = fmt.Fprintf(w, "No TestRuns or CapacityPlans found in namespace %s.\n", ns)
		return
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	sort.Slice(plans, func(i, j int) bool { return plans[i].Name < plans[j].Name })
	if len(runs) > 0 {
		section(w, "TestRuns", runTable(runs, now))
	}
	if len(plans) > 0 {
		rows := [][]string{{"NAME", "PROFILES", "PROGRESS", "PHASE", "AGE"}}
		for _, p := range plans {
			rows = append(rows, []string{p.Name, orDash(strings.Join(p.Spec.Profiles, ",")), orDash(p.Status.Progress),
				orDash(p.Status.Phase), age(p.CreationTimestamp, now)})
		}
		section(w, "CapacityPlans", rows)
	}
}

// runTable is the TestRuns' table: NAME, the Printer columns, AGE.
func runTable(runs []v1alpha1.TestRun, now time.Time) [][]string {
	cols := columns.For(columns.Printer)
	header := []string{"NAME"}
	for _, c := range cols {
		header = append(header, c.Header(columns.Printer))
	}
	out := [][]string{append(header, "AGE")}
	for i := range runs {
		r := &runs[i]
		line := []string{r.Name}
		for _, c := range cols {
			line = append(line, orDash(c.Value(r)))
		}
		out = append(out, append(line, age(r.CreationTimestamp, now)))
	}
	return out
}

// age is kubectl's age of an object.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
