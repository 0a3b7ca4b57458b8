package compare

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestDocumentedBaselinesAreAdmissible reads every YAML example with a spec.baseline in the
// README and docs/comparison.md and holds it to the rules of the TestRun schema that can be
// checked without an API server: no unknown field, a metric name given once (the list is keyed
// by name), the enums, a stat only on a k6 metric, and the ok band at least as wide as the
// success band. docs/comparison.md's sub-metric example named one metric twice (before issue 39).
func TestDocumentedBaselinesAreAdmissible(t *testing.T) {
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	stats := []string{"avg", "med", "p90", "p95", "p99", "rate", "value"}
	found := 0
	for _, file := range []string{"../../../README.md", "../../../docs/comparison.md"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(raw), -1) {
			if !strings.Contains(m[1], "baseline:") {
				continue
			}
			var doc struct {
				Spec struct {
					Baseline v1alpha1.BaselineSpec `json:"baseline"`
				} `json:"spec"`
			}
			if err := yaml.UnmarshalStrict([]byte(m[1]), &doc); err != nil {
				t.Errorf("%s: an example does not read as a TestRun's spec.baseline: %v\n%s", file, err, m[1])
				continue
			}
			found++
			b := doc.Spec.Baseline
			if (b.Name == "") == (b.Selector == nil) {
				t.Errorf("%s: spec.baseline needs exactly one of name or selector:\n%s", file, m[1])
			}
			if b.OnMissing != "" && !slices.Contains([]v1alpha1.BaselineOnMissing{v1alpha1.BaselineMissingFail, v1alpha1.BaselineMissingWarn}, b.OnMissing) {
				t.Errorf("%s: onMissing %q", file, b.OnMissing)
			}
			if b.OnUndecided != "" && !slices.Contains([]v1alpha1.BaselineOnUndecided{v1alpha1.BaselineUndecidedPass,
				v1alpha1.BaselineUndecidedInconclusive, v1alpha1.BaselineUndecidedFail}, b.OnUndecided) {
				t.Errorf("%s: onUndecided %q", file, b.OnUndecided)
			}
			seen := map[string]bool{}
			for _, cm := range b.Metrics {
				if seen[cm.Name] {
					t.Errorf("%s: spec.baseline.metrics names %s twice: the API refuses it (the list is keyed by name)", file, cm.Name)
				}
				seen[cm.Name] = true
				if cm.Stat != "" && (!slices.Contains(stats, cm.Stat) || isBuiltinName(cm.Name)) {
					t.Errorf("%s: %s with stat %q", file, cm.Name, cm.Stat)
				}
				if cm.Direction != "" && cm.Direction != v1alpha1.LowerIsBetter && cm.Direction != v1alpha1.HigherIsBetter {
					t.Errorf("%s: %s direction %q", file, cm.Name, cm.Direction)
				}
				own := NewMetric(cm.Name, "", v1alpha1.LowerIsBetter)
				for _, bi := range Builtins() {
					if bi.Name == cm.Name {
						own = bi
					}
				}
				if m := applyOverride(own, cm); m.Note != "" && cm.SuccessPercent != nil && cm.OKPercent != nil {
					t.Errorf("%s: %s: %s", file, cm.Name, m.Note)
				}
			}
		}
	}
	if found < 2 {
		t.Fatalf("found %d examples with a spec.baseline, want the README's and docs/comparison.md's", found)
	}
}
