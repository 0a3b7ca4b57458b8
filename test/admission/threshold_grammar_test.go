package admission

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestThresholdGrammarMatchesTheParser keeps admission and the operator's threshold parser on
// one grammar: the CRD carries the parser's pattern verbatim, and the API server accepts
// exactly the expressions the parser accepts.
func TestThresholdGrammarMatchesTheParser(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "fleetbench.dev_testruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(crd, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(celRules(doc), "self.matches(r'"+measure.ThresholdExpressionPattern+"')") {
		t.Fatal("the CRD's threshold rule is not pkg/measure.ThresholdExpressionPattern: update the marker on v1alpha1.ThresholdExpression and run make manifests")
	}

	corpus := []string{
		"p(95)<200", "p(99.9) <= 500", "avg<=150", "rate<0.01", "count>10", "med<100", "p(100)<1", "p(0)>=0",
		"value==5", "value===5", "min>=0", "max!=3", " rate < 1e-3 ", "avg<-1",
		"p95<200", "p(101)<1", "rate<<0.01", "mean<100", "p(95)<", "<200", "rate<0.01 extra", "p(-1)<2", "rate<0x10", "",
	}
	accepted := 0
	ctx := context.Background()
	for i, expr := range corpus {
		parserOK := measure.ValidateThresholdExpression(expr) == nil
		run := tw.MakeTestRun("grammar-"+string(rune('a'+i)), ns).Threshold("http_req_duration", v1alpha1.ThresholdExpression(expr)).Obj()
		err := env.Client.Create(ctx, run)
		if err == nil {
			accepted++
			_ = env.Client.Delete(ctx, run)
		}
		if (err == nil) != parserOK {
			t.Errorf("%q: API server accepted=%v, parser accepted=%v (%v)", expr, err == nil, parserOK, err)
		}
	}
	// Both sides of the grammar are exercised.
	if accepted == 0 || accepted == len(corpus) {
		t.Fatalf("%d of %d expressions accepted: the corpus no longer tests both sides", accepted, len(corpus))
	}
}

// celRules collects every x-kubernetes-validations rule in a decoded CRD.
func celRules(node any) []string {
	var out []string
	switch n := node.(type) {
	case map[string]any:
		if rule, ok := n["rule"].(string); ok {
			out = append(out, rule)
		}
		for _, v := range n {
			out = append(out, celRules(v)...)
		}
	case []any:
		for _, v := range n {
			out = append(out, celRules(v)...)
		}
	}
	return out
}
