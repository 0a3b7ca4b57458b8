// Package crdschema reads the generated CRDs' OpenAPI schemas (make manifests: what the API
// server enforces), for the tests that hold them to what the code needs: every spec and
// status string, list and map bounded.
package crdschema

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

// Node is one schema node.
type Node = map[string]any

// Part is the schema of the CRD file's top-level field part ("spec", "status"), read from dir.
func Part(dir, file, part string) (Node, error) {
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema Node `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, err
	}
	if len(crd.Spec.Versions) == 0 {
		return nil, fmt.Errorf("%s has no versions", file)
	}
	props, _ := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(Node)
	s, _ := props[part].(Node)
	if s == nil {
		return nil, fmt.Errorf("%s has no %s schema", file, part)
	}
	return s, nil
}

// Unbounded lists every string, list, map and untyped object of schema s without a bound on
// its size. A string is bounded by maxLength, an enum or the date-time format; a map's values by
// their own bounds or a CEL rule on the map.
func Unbounded(s Node, path string) []string {
	var out []string
	has := func(key string) bool { _, ok := s[key]; return ok }
	switch {
	case s["x-kubernetes-int-or-string"] == true:
		if !has("maxLength") {
			out = append(out, path+" (int or string)")
		}
	case s["type"] == "string":
		if !has("maxLength") && !has("enum") && s["format"] != "date-time" {
			out = append(out, path)
		}
	case s["type"] == "array":
		if !has("maxItems") {
			out = append(out, path+"[]")
		}
		if items, ok := s["items"].(Node); ok {
			out = append(out, Unbounded(items, path+"[]")...)
		}
	default:
		// Objects, and TestRun's untyped spec.cleanup (hack/crdpatch).
		if s["x-kubernetes-preserve-unknown-fields"] == true && !has("maxProperties") {
			out = append(out, path+" (any fields)")
		}
		if ap, ok := s["additionalProperties"].(Node); ok {
			if !has("maxProperties") {
				out = append(out, path+"{}")
			}
			if !has("x-kubernetes-validations") {
				out = append(out, Unbounded(ap, path+"{}")...)
			}
		}
		props, _ := s["properties"].(Node)
		for name, p := range props {
			out = append(out, Unbounded(p.(Node), path+"."+name)...)
		}
	}
	sort.Strings(out)
	return out
}
