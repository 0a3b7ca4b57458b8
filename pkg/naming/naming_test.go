package naming

import (
	"strings"
	"testing"
)

func TestNamesAreDeterministicAndFit(t *testing.T) {
	long := strings.Repeat("a", 80)
	cases := []struct {
		name string
		got  string
		max  int
	}{
		{"short runner", RunnerJob("quick", 3), 63},
		{"long runner", RunnerJob(long, 12), 63},
		{"long target namespace", TargetNamespace("team-a", long), 63},
		{"script", ScriptConfigMap(long), 253},
	}
	for _, tc := range cases {
		if len(tc.got) > tc.max {
			t.Errorf("%s: %q is %d characters, max %d", tc.name, tc.got, len(tc.got), tc.max)
		}
	}
	if RunnerJob("quick", 3) != "quick-runner-3" {
		t.Errorf("short names stay readable, got %q", RunnerJob("quick", 3))
	}
	if RunnerJob(long, 1) == RunnerJob(long, 2) {
		t.Error("shortened names of different runners collide")
	}
	if RunnerJob(long, 1) != RunnerJob(long, 1) {
		t.Error("names are not deterministic")
	}
	if TargetNamespace("a", long+"x") == TargetNamespace("a", long+"y") {
		t.Error("shortened namespaces of different TestRuns collide")
	}
}
