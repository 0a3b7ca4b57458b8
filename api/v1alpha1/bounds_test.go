package v1alpha1

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type node = map[string]any

// specSchema is the spec schema of a generated CRD (make manifests): what the API server enforces.
func specSchema(t *testing.T, file string) node {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema node `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	props, _ := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(node)
	spec, _ := props["spec"].(node)
	if spec == nil {
		t.Fatalf("%s has no spec schema", file)
	}
	return spec
}

// unboundedSpec lists every string, list and map of a spec schema without a bound on its size.
func unboundedSpec(s node, path string) []string {
	var out []string
	has := func(key string) bool { _, ok := s[key]; return ok }
	switch {
	case s["x-kubernetes-int-or-string"] == true:
		if !has("maxLength") {
			out = append(out, path+" (int or string)")
		}
	case s["type"] == "string":
		if !has("maxLength") && !has("enum") {
			out = append(out, path)
		}
	case s["type"] == "array":
		if !has("maxItems") {
			out = append(out, path+"[]")
		}
		if items, ok := s["items"].(node); ok {
			out = append(out, unboundedSpec(items, path+"[]")...)
		}
	default:
		// Objects, and TestRun's untyped spec.cleanup (hack/crdpatch).
		if s["x-kubernetes-preserve-unknown-fields"] == true && !has("maxProperties") {
			out = append(out, path+" (any fields)")
		}
		if ap, ok := s["additionalProperties"].(node); ok {
			if !has("maxProperties") {
				out = append(out, path+"{}")
			}
			// A map's values cannot carry markers of their own; a CEL rule on the map bounds them.
			if !has("x-kubernetes-validations") {
				out = append(out, unboundedSpec(ap, path+"{}")...)
			}
		}
		props, _ := s["properties"].(node)
		for name, p := range props {
			out = append(out, unboundedSpec(p.(node), path+"."+name)...)
		}
	}
	sort.Strings(out)
	return out
}

// TestEverySpecFieldIsBounded: every string, list and map a tenant writes into a TestRun or a
// CapacityPlan has a bound, so the manager's cache of them cannot be grown by one field, and CEL's
// cost estimates stay low. Fields of Kubernetes' own types get theirs from hack/crdpatch; a
// field of fleetbench's own types needs a marker (MaxLength, MaxItems, MaxProperties, items:
// MaxLength, or a CEL rule over a map's values): add one a real user never meets, saying why
// when it is not obvious. Profiles are written by admins only.
func TestEverySpecFieldIsBounded(t *testing.T) {
	for _, file := range []string{"fleetbench.dev_testruns.yaml", "fleetbench.dev_capacityplans.yaml"} {
		if missing := unboundedSpec(specSchema(t, file), "spec"); len(missing) > 0 {
			t.Errorf("%s: no bound on:\n%s", file, strings.Join(missing, "\n"))
		}
	}
}

// TestUnboundedSpecFindsEachKind: the walk above finds each kind of unbounded node, so the
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
	if got := unboundedSpec(s, "spec"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unbounded = %q, want %q", got, want)
	}
}
