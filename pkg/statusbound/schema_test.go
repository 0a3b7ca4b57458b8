package statusbound

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"fleetbench.dev/fleetbench/internal/crdschema"
)

// The status schemas of the generated CRDs (make manifests): what the API server enforces.
type schema = crdschema.Node

func statusSchema(t testing.TB, file string) schema {
	t.Helper()
	s, err := crdschema.Part(filepath.Join("..", "..", "config", "crd", "bases"), file, "status")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryStatusListAndStringIsBounded: the API server refuses a whole status write for one
// list or string beyond its bound, so each must have one that the operator can cut to (a
// string without one is only bounded by the object size, which no cut can aim at).
func TestEveryStatusListAndStringIsBounded(t *testing.T) {
	for _, file := range []string{"fleetbench.dev_testruns.yaml", "fleetbench.dev_capacityplans.yaml"} {
		var missing []string
		for _, path := range crdschema.Unbounded(statusSchema(t, file), "status") {
			// The Profile's quantities, copied as an admin wrote them (tenants only read Profiles).
			if !strings.HasPrefix(path, "status.profile.spec.") || !strings.HasSuffix(path, " (int or string)") {
				missing = append(missing, path)
			}
		}
		if len(missing) > 0 {
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
