package k6convert

import (
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// Dropped finds what a server pruned or rewrote, and nothing it only added.
func TestDroppedNamesWhatTheServerLost(t *testing.T) {
	parse := func(s string) map[string]any {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := parse(`{spec: {parallelism: 4, args: [--tag, a=b], runner: {env: [{name: A, value: x}], initContainers: [{image: busybox}]}}}`)
	// What the server stored: defaults added, parallelism an int64, initContainers pruned, an env value changed.
	got := map[string]any{"spec": map[string]any{"parallelism": int64(4), "args": []any{"--tag", "a=b"}, "timeouts": map[string]any{},
		"runner": map[string]any{"env": []any{map[string]any{"name": "A", "value": "y"}}}}}
	if d := Dropped(want, got); !slices.Equal(d, []string{`spec.runner.env[0].value: "x" stored as "y"`, "spec.runner.initContainers: dropped"}) {
		t.Errorf("Dropped = %q", d)
	}
	if d := Dropped(want, want); len(d) != 0 {
		t.Errorf("an object against itself: %q", d)
	}
	if d := Dropped(parse(`{spec: {args: [a, b]}}`), parse(`{spec: {args: [a]}}`)); !slices.Equal(d, []string{"spec.args: 2 items stored as 1 items"}) {
		t.Errorf("a shortened list: %q", d)
	}
	if d := Dropped(parse(`{spec: {cleanup: post}}`), parse(`{spec: {cleanup: {target: DeleteAfterRun}}}`)); !slices.Equal(d, []string{`spec.cleanup: "post" stored as {"target":"DeleteAfterRun"}`}) {
		t.Errorf("a changed type: %q", d)
	}
}
