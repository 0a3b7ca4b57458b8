// crdpatch bounds every string, list and map of the specs tenants write (bounds.go), in the
// TestRun and CapacityPlan CRDs, and makes TestRun's spec.cleanup in the generated CRD admit k6-operator's string form
// (`cleanup: post`) at the OpenAPI level, so that admission refuses it with a message naming
// fleetbench's equivalent instead of "must be of type object". `make manifests` runs it after
// controller-gen, which cannot express the schema.
//
// Why not CEL: the API server gives CEL no type for a node that is neither an object nor a
// string (only x-kubernetes-int-or-string is dynamic, and that refuses objects), and a type
// error stops CEL from running. So the node is untyped with x-kubernetes-preserve-unknown-fields,
// keeps the object form's properties (target's enum and default), and refuses every other JSON
// type with a plain OpenAPI check: strings by a pattern that never matches and reads as the hint,
// numbers, arrays and booleans by bounds they cannot meet, and unknown keys by counting them:
// target is always there (defaulted), so the object has one key, or two when the second is
// keepFor and target keeps the target (anyOf; keepFor's own CEL rule, on the object form, cannot
// run on the untyped node and is dropped here for that check). The controller decodes only what
// is admitted: an object.
// Only the TestRun CRD is patched: CapacityPlan's CEL reads spec.template.cleanup.target, which
// needs the typed object.
//
//	go run ./hack/crdpatch config/crd/bases/fleetbench.dev_testruns.yaml config/crd/bases/fleetbench.dev_capacityplans.yaml
package main

import (
	"bytes"
	"fmt"
	"os"
	"reflect"

	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// specTypes are the Go types of the specs a tenant writes, by CRD kind. Profiles are
// cluster-scoped and written by an admin only (config/rbac/user_roles.yaml).
var specTypes = map[string]reflect.Type{
	"TestRun":      reflect.TypeFor[v1alpha1.TestRunSpec](),
	"CapacityPlan": reflect.TypeFor[v1alpha1.CapacityPlanSpec](),
}

// CleanupStringHint is the pattern the string form fails: the hint, then `$^`, which no string
// matches (the end of the text cannot be followed by its start).
const CleanupStringHint = "k6-operator's `cleanup: post` is spec.ttlSecondsAfterFinished: 0 here " +
	"(spec.cleanup.target says what happens to the target)$^"

// KeepForHint is the pattern target must match beside keepFor: KeepUntilDeleted, or a never
// matching alternative that reads as the hint.
const KeepForHint = "^KeepUntilDeleted$|spec.cleanup.keepFor applies to a kept target only: set spec.cleanup.target: " +
	"KeepUntilDeleted, or drop keepFor$^"

// PositiveDurationHint is Duration's CEL rule as a pattern: units of k6 and Go durations, one
// of them with a non-zero digit, or a never matching alternative that reads as the hint.
const PositiveDurationHint = `^([0-9]+(\.[0-9]+)?(ms|s|m|h))*([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)(ms|s|m|h)([0-9]+(\.[0-9]+)?(ms|s|m|h))*$` +
	`|spec.cleanup.keepFor must be a positive duration such as 30m, 2h or 1h30m$^`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch CRD.yaml...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := patch(path); err != nil {
			fmt.Fprintln(os.Stderr, "crdpatch:", err)
			os.Exit(1)
		}
	}
}

func patch(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd map[string]any
	// controller-gen writes one document with a leading ---; it marshals with the same library,
	// so an unchanged node writes back byte for byte.
	if err := yaml.Unmarshal(bytes.TrimPrefix(raw, []byte("---\n")), &crd); err != nil {
		return err
	}
	kind, _ := dig(crd, "spec", "names", "kind").(string)
	specType, ok := specTypes[kind]
	if !ok {
		return fmt.Errorf("%s: kind %q is not one tenants write", path, kind)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("%s: no spec.versions", path)
	}
	for _, v := range versions {
		spec, ok := dig(v, "schema", "openAPIV3Schema", "properties", "spec").(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no spec schema", path)
		}
		if err := bound(spec, specType, "spec"); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if kind != "TestRun" {
			continue
		}
		props, _ := spec["properties"].(map[string]any)
		node, ok := props["cleanup"].(map[string]any)
		if !ok || dig(node, "properties", "target") == nil {
			return fmt.Errorf("%s: spec.cleanup is not the object with target it is patched from", path)
		}
		keepFor, ok := dig(node, "properties", "keepFor").(map[string]any)
		if !ok {
			return fmt.Errorf("%s: spec.cleanup has no keepFor to allow for", path)
		}
		// Nor can CEL run below the untyped node: keepFor's duration rule becomes a pattern.
		delete(keepFor, "x-kubernetes-validations")
		keepFor["pattern"] = PositiveDurationHint
		delete(node, "type")
		delete(node, "x-kubernetes-validations") // keepFor needs KeepUntilDeleted: the anyOf below
		node["x-kubernetes-preserve-unknown-fields"] = true
		node["pattern"] = CleanupStringHint
		node["maxProperties"] = 2
		// The API server reports the failing branch with the most checks applied, the first on
		// a tie: the trivial checks make a stray key report the first ("Too many") and keepFor
		// beside a target not kept the second (the hint). test/admission pins both messages.
		anything := map[string]any{"pattern": ".*"}
		node["anyOf"] = []any{
			map[string]any{"maxProperties": 1, "properties": map[string]any{"target": anything}},
			map[string]any{"required": []any{"keepFor"}, "properties": map[string]any{"target": map[string]any{"pattern": KeepForHint}, "keepFor": anything}},
		}
		node["maximum"], node["minimum"] = -1, 0
		node["maxItems"], node["minItems"] = 0, 1
		node["not"] = map[string]any{"enum": []any{true, false}}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
