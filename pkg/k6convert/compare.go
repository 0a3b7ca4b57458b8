package k6convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Dropped lists every value of want that got does not hold unchanged, as field paths
// (spec.runner.env[0].value): what an API server silently pruned or rewrote when it stored the
// converted object. got may add fields (defaults); it may not lose or change one of want's.
// Numbers compare by their JSON text, so YAML's float64 4 equals the server's int64 4.
func Dropped(want, got any) []string {
	var out []string
	droppedAt(want, got, "", &out)
	return out
}

func droppedAt(want, got any, path string, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: stored as %s", orRoot(path), describe(got)))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			child := k
			if path != "" {
				child = path + "." + k
			}
			gv, ok := g[k]
			if !ok {
				*out = append(*out, child+": dropped")
				continue
			}
			droppedAt(w[k], gv, child, out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: %d items stored as %s", orRoot(path), len(w), describe(got)))
			return
		}
		for i := range w {
			droppedAt(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			*out = append(*out, fmt.Sprintf("%s: %s stored as %s", orRoot(path), wj, gj))
		}
	}
}

func describe(v any) string {
	switch g := v.(type) {
	case []any:
		return fmt.Sprintf("%d items", len(g))
	case map[string]any:
		return "an object"
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}
