// Package htmlreport writes a TestRun's or a CapacityPlan's report as one self-contained HTML
// file: the charting library, styles and data are inlined, so it opens with no network access.
// It renders what it is given and makes no client calls.
package htmlreport

import (
	"errors"
	"io"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/report"
)

// TestRunInput is what a TestRun's report shows. Timeline and Summary come from the full
// result ConfigMap and may be nil when it was not kept (the report then says so).
type TestRunInput struct {
	Run      *v1alpha1.TestRun
	Timeline *report.Timeline
	Summary  *report.K6Summary
}

// PlanInput is what a CapacityPlan's report shows: its table and its children (for peak steps
// and per-child links).
type PlanInput struct {
	Plan     *v1alpha1.CapacityPlan
	Children []v1alpha1.TestRun
}

// WriteTestRun writes the report of one TestRun.
func WriteTestRun(w io.Writer, in TestRunInput) error { return errors.New("not implemented yet") }

// WritePlan writes the report of a CapacityPlan.
func WritePlan(w io.Writer, in PlanInput) error { return errors.New("not implemented yet") }
