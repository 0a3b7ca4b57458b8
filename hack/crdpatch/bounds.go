package main

import (
	"fmt"
	"reflect"
	"strings"
)

// Kubernetes' own types (corev1.Volume, EnvVar, Affinity, ...) carry no size markers, and a
// tenant writes every spec field: the API server would store a 1 MiB env value or a list of
// 10,000 tolerations, which every reconcile and every re-list of the manager's cache then holds.
// bound gives every string, list and map under such a type a bound a real user never meets;
// fleetbench's own fields carry theirs as markers, next to the field, and a field that forgets
// one fails api/v1alpha1's TestEverySpecFieldIsBounded (nothing here bounds it). The Go type is
// walked beside the schema to tell the two apart. Bounds also keep CEL's cost estimates low.

// Strings: defaultString unless the field's name is below. A Kubernetes name is at most 253.
const (
	defaultString = 1024
	defaultList   = 64
	defaultMap    = 64
	// A quantity (1500m, 2Gi) or a port name; far below.
	intOrString = 64
)

var stringCaps = map[string]int{
	// An env or header value: a token, a URL, a small PEM; larger data belongs in envFrom or a
	// volume. A command or argument may carry an inline shell script.
	"value": 32768, "command": 32768, "args": 32768,
	// Paths: Linux's PATH_MAX.
	"path": 4096, "mountPath": 4096, "subPath": 4096, "subPathExpr": 4096, "localhostProfile": 4096,
	"keyPath": 4096, "certificateChainPath": 4096, "credentialBundlePath": 4096, "volumePath": 4096,
	"directory": 4096, "secretFile": 4096, "keyring": 4096,
	// A Windows GMSA credential spec is a JSON document.
	"gmsaCredentialSpec": 65536,
	// The values of label maps: Kubernetes' own limit on a label value.
	"matchLabels": 63, "nodeSelector": 63, "labels": 63,
	"annotations": 8192,
}

var listCaps = map[string]int{
	// Selector values (zones, host names), projected keys, and a container's command line.
	"values": 256, "items": 256, "command": 256, "args": 256,
}

// bound walks the spec schema node beside its Go type t; name is the field's JSON name.
func bound(node map[string]any, t reflect.Type, name string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if strings.HasPrefix(t.PkgPath(), "k8s.io/") {
		boundForeign(node, name)
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		props, _ := node["properties"].(map[string]any)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			field, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if field == "-" {
				continue
			}
			if field == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
				if err := bound(node, f.Type, name); err != nil {
					return err
				}
				continue
			}
			child, ok := props[field].(map[string]any)
			if !ok {
				return fmt.Errorf("%s.%s: in the Go type but not in the schema", name, field)
			}
			if err := bound(child, f.Type, field); err != nil {
				return fmt.Errorf("%s.%w", name, err)
			}
		}
	case reflect.Slice, reflect.Array:
		if items, ok := node["items"].(map[string]any); ok {
			return bound(items, t.Elem(), name)
		}
	case reflect.Map:
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			return bound(ap, t.Elem(), name)
		}
	}
	return nil
}

// boundForeign bounds every string, list and map of a Kubernetes type's schema that has none.
func boundForeign(node map[string]any, name string) {
	setDefault := func(key string, v int) {
		if _, ok := node[key]; !ok {
			node[key] = v
		}
	}
	if node["x-kubernetes-int-or-string"] == true {
		setDefault("maxLength", intOrString)
		return
	}
	if node["x-kubernetes-preserve-unknown-fields"] == true && node["properties"] == nil {
		setDefault("maxProperties", defaultMap)
	}
	switch node["type"] {
	case "string":
		if _, enum := node["enum"]; !enum {
			setDefault("maxLength", capOf(stringCaps, name, defaultString))
		}
	case "array":
		setDefault("maxItems", capOf(listCaps, name, defaultList))
		if items, ok := node["items"].(map[string]any); ok {
			boundForeign(items, name)
		}
	case "object":
		props, _ := node["properties"].(map[string]any)
		for k, p := range props {
			if p, ok := p.(map[string]any); ok {
				boundForeign(p, k)
			}
		}
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			setDefault("maxProperties", defaultMap)
			boundForeign(ap, name)
		}
	}
}

func capOf(caps map[string]int, name string, def int) int {
	if c, ok := caps[name]; ok {
		return c
	}
	return def
}
