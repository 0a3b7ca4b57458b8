package statusbound

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// The status schemas of the generated CRDs (make manifests): what the API server enforces.
type schema = map[string]any

func statusSchema(t testing.TB, file string) schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	props, _ := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(schema)
	st, _ := props["status"].(schema)
	if st == nil {
		t.Fatalf("%s has no status schema", file)
	}
	return st
}

// unbounded lists every string, list and map of a schema without a bound on its size.
func unbounded(s schema, path string) []string {
	var out []string
	switch s["type"] {
	case "string":
		_, length := s["maxLength"]
		_, enum := s["enum"]
		if !length && !enum && s["format"] != "date-time" {
			out = append(out, path)
		}
	case "array":
		if _, ok := s["maxItems"]; !ok {
			out = append(out, path)
		}
		if items, ok := s["items"].(schema); ok {
			out = append(out, unbounded(items, path+"[]")...)
		}
	case "object":
		if ap, ok := s["additionalProperties"].(schema); ok {
			if _, ok := s["maxProperties"]; !ok {
				out = append(out, path+"{}")
			}
			// A map's values cannot carry markers of their own; a CEL rule bounds them instead.
			if _, cel := s["x-kubernetes-validations"]; !cel {
				out = append(out, unbounded(ap, path+"{}")...)
			}
		}
		props, _ := s["properties"].(schema)
		for name, p := range props {
			out = append(out, unbounded(p.(schema), path+"."+name)...)
		}
	}
	sort.Strings(out)
	return out
}

// TestEveryStatusListAndStringIsBounded: the API server refuses a whole status write for one
// list or string beyond its bound, so each must have one that the operator can cut to (a
// string without one is only bounded by the object size, which no cut can aim at).
func TestEveryStatusListAndStringIsBounded(t *testing.T) {
	for _, file := range []string{"fleetbench.dev_testruns.yaml", "fleetbench.dev_capacityplans.yaml"} {
		if missing := unbounded(statusSchema(t, file), "status"); len(missing) > 0 {
			t.Errorf("%s: no maxLength/maxItems/maxProperties (or enum) on:\n%v", file, missing)
		}
	}
}

// validate checks v (JSON as decoded into any) against the structural schema's size, enum,
// pattern and required rules, the ones a status write can break.
func validate(v any, s schema, path string) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	switch x := v.(type) {
	case string:
		// Bytes, not characters: the stricter count, and the one the API server's refusals name.
		if m, ok := s["maxLength"].(float64); ok && len(x) > int(m) {
			bad("%d bytes, more than %d", len(x), int(m))
		}
		if !utf8.ValidString(x) {
			bad("not UTF-8")
		}
		if enum, ok := s["enum"].([]any); ok {
			found := false
			for _, e := range enum {
				found = found || e == x
			}
			if !found {
				bad("%q is not one of %v", x, enum)
			}
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			bad("%q does not match %s", x, p)
		}
	case []any:
		if m, ok := s["maxItems"].(float64); ok && len(x) > int(m) {
			bad("%d items, more than %d", len(x), int(m))
		}
		items, _ := s["items"].(schema)
		for i, e := range x {
			errs = append(errs, validate(e, items, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case map[string]any:
		if m, ok := s["maxProperties"].(float64); ok && len(x) > int(m) {
			bad("%d properties, more than %d", len(x), int(m))
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					bad("%s is required", r)
				}
			}
		}
		props, _ := s["properties"].(schema)
		ap, _ := s["additionalProperties"].(schema)
		for k, e := range x {
			if p, ok := props[k].(schema); ok {
				errs = append(errs, validate(e, p, path+"."+k)...)
			} else if ap != nil {
				errs = append(errs, validate(e, ap, path+"."+k)...)
			} else {
				bad("unknown field %q", k)
			}
		}
	}
	return errs
}
