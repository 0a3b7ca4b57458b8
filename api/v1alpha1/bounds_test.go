package v1alpha1

import (
	"path/filepath"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/internal/crdschema"
)

type node = crdschema.Node

// specSchema is the spec schema of a generated CRD.
func specSchema(t *testing.T, file string) node {
	t.Helper()
	s, err := crdschema.Part(filepath.Join("..", "..", "config", "crd", "bases"), file, "spec")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEverySpecFieldIsBounded: every string, list and map a tenant writes into a TestRun or a
// CapacityPlan has a bound, so the manager's cache of them cannot be grown by one field, and CEL's
// cost estimates stay low. Fields of Kubernetes' own types get theirs from hack/crdpatch; a
// field of fleetbench's own types needs a marker (MaxLength, MaxItems, MaxProperties, items:
// MaxLength, or a CEL rule over a map's values): add one a real user never meets, saying why
// when it is not obvious. Profiles are written by admins only.
func TestEverySpecFieldIsBounded(t *testing.T) {
	for _, file := range []string{"fleetbench.dev_testruns.yaml", "fleetbench.dev_capacityplans.yaml"} {
		if missing := crdschema.Unbounded(specSchema(t, file), "spec"); len(missing) > 0 {
			t.Errorf("%s: no bound on:\n%s", file, strings.Join(missing, "\n"))
		}
	}
}

// TestUnboundedSpecFindsEachKind: the walk finds each kind of unbounded node, so the
// test cannot pass by finding nothing.
func TestUnboundedSpecFindsEachKind(t *testing.T) {
	s := node{"type": "object", "properties": node{
		"name":   node{"type": "string"},
		"kind":   node{"type": "string", "enum": []any{"a"}},
		"args":   node{"type": "array", "maxItems": 2.0, "items": node{"type": "string"}},
		"labels": node{"type": "object", "additionalProperties": node{"type": "string"}},
		"port":   node{"x-kubernetes-int-or-string": true},
		"raw":    node{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	}}
	want := []string{"spec.args[]", "spec.labels{}", "spec.labels{}", "spec.name", "spec.port (int or string)", "spec.raw (any fields)"}
	if got := crdschema.Unbounded(s, "spec"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unbounded = %q, want %q", got, want)
	}
}
