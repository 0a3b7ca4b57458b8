package columns

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/plan"
)

var renderers = map[Renderer]string{Table: "Table", CSV: "CSV", JUnit: "JUnit", HTML: "HTML", Printer: "Printer"}

// TestEveryColumnIsNamedOnce: each renderer a column is In heads it, no renderer shows two
// columns under one name, and a printer column has the field it shows.
func TestEveryColumnIsNamedOnce(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range All {
		if c.ID == "" || ids[c.ID] {
			t.Errorf("column %q: IDs must be set and distinct", c.ID)
		}
		ids[c.ID] = true
		if c.Value == nil || c.Name == "" {
			t.Errorf("column %q has no Value or Name", c.ID)
		}
		if c.In&Printer != 0 && c.Path == "" {
			t.Errorf("column %q is a printer column without a Path", c.ID)
		}
	}
	for r, name := range renderers {
		seen := map[string]string{}
		for _, c := range For(r) {
			h := c.Header(r)
			if h == "" {
				t.Errorf("%s shows column %q without a header", name, c.ID)
			}
			if other, dup := seen[h]; dup {
				t.Errorf("%s heads both %q and %q %q", name, other, c.ID, h)
			}
			seen[h] = c.ID
		}
	}
}

type printerColumn struct {
	Name     string `json:"name"`
	JSONPath string `json:"jsonPath"`
}

// TestPrinterColumnsAreTheDefinitions: the TestRun CRD's printer columns (kubebuilder markers in
// api/v1alpha1, static strings) show the columns defined here under their Short name and Path;
// a marker that renames one or points it at another field fails here.
func TestPrinterColumnsAreTheDefinitions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "fleetbench.dev_testruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name    string          `json:"name"`
				Columns []printerColumn `json:"additionalPrinterColumns"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) == 0 {
		t.Fatal("the CRD has no versions")
	}
	for _, v := range crd.Spec.Versions {
		byName, byPath := map[string]printerColumn{}, map[string]printerColumn{}
		for _, pc := range v.Columns {
			byName[pc.Name], byPath[pc.JSONPath] = pc, pc
		}
		for _, c := range For(Printer) {
			want := printerColumn{Name: c.Short, JSONPath: c.Path}
			got, ok := byName[c.Short]
			if !ok {
				got = byPath[c.Path]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: printer column of %q (-defined +CRD):\n%s", v.Name, c.ID, diff)
			}
		}
		// A printer column showing a defined column's field or name but not marked Printer.
		for _, c := range All {
			if c.In&Printer != 0 {
				continue
			}
			if pc, ok := byPath[c.Path]; ok && c.Path != "" {
				t.Errorf("%s: printer column %q shows %s, the column %q, which is not In Printer", v.Name, pc.Name, c.Path, c.ID)
			}
			if pc, ok := byName[c.Short]; ok && c.Short != "" {
				t.Errorf("%s: printer column %q is named as the column %q, which is not In Printer", v.Name, pc.Name, c.ID)
			}
		}
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		phase   v1alpha1.TestRunPhase
		verdict v1alpha1.Verdict
		reason  string
		want    string
	}{
		{v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, "TargetNotReady", "Failed (TargetNotReady)"},
		{v1alpha1.PhaseFailed, "", "", "Failed"},
		{"", "", "", "Pending"},
		{v1alpha1.PhaseRunning, "", "", "Running"},
		{v1alpha1.PhaseSucceeded, v1alpha1.VerdictInconclusive, "GeneratorBound", "INCONCLUSIVE"},
	} {
		run := tw.MakeTestRun("r", "ns").Phase(tc.phase, tc.reason, "").Verdict(tc.verdict).Obj()
		if got := outcome(run); got != tc.want {
			t.Errorf("outcome(%q, %q, %q) = %q, want %q", tc.phase, tc.verdict, tc.reason, got, tc.want)
		}
	}
}

// rowOf is the CapacityPlan row pkg/plan makes of the child run, and the plan holding it.
func rowOf(run *v1alpha1.TestRun) *v1alpha1.CapacityPlan {
	p := tw.MakeCapacityPlan("bench-6", run.Namespace, run, run.Spec.Profile).Sweep("web", "WORKERS", "4").
		SweepComponentField("web", "tls", "true").Obj()
	cells := []plan.Cell{{Profile: run.Spec.Profile, Values: []string{"4", "true"}, Repetition: 1}}
	p.Status.Table = plan.Rows(&p.Spec, p.Name, cells, []plan.Child{{Run: run}})
	p.Status.Table[0].TestRun = run.Name
	return p
}

// TestFromRowReadsBackEveryRowColumn: a plan's row read back shows every column it carries as
// the child TestRun does, and leaves the others blank.
func TestFromRowReadsBackEveryRowColumn(t *testing.T) {
	for _, run := range []*v1alpha1.TestRun{
		tw.MakeTestRun("measured", "ns").Measured(v1alpha1.VerdictPassed).Obj(),
		tw.MakeTestRun("broken", "ns").Phase(v1alpha1.PhaseFailed, "TargetNotReady", "").Verdict(v1alpha1.VerdictFailed).Obj(),
		tw.MakeTestRun("waiting", "ns").Obj(),
	} {
		p := rowOf(run)
		rows := PlanRows(p)
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", run.Name, len(rows))
		}
		want, got := map[string]string{}, map[string]string{}
		for _, c := range All {
			if c.Row && c.ID != Repetition {
				want[c.ID] = c.Value(run)
			} else if c.ID != Test && c.ID != Handlers && c.ID != Repetition {
				want[c.ID] = ""
			}
			if _, ok := want[c.ID]; ok {
				got[c.ID] = rows[0].Cell(c)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the row read back (-run +row):\n%s", run.Name, diff)
		}
		if diff := cmp.Diff(map[string]string{Test: "bench-6-SSL", Handlers: "4", Repetition: "1"}, rows[0].Keys); diff != "" {
			t.Errorf("%s: key cells (-want +got):\n%s", run.Name, diff)
		}
	}
}
