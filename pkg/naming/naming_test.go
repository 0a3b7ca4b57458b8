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
	// Pinned: an operator upgrade must find the children of TestRuns already running.
	for got, want := range map[string]string{
		RunnerJob(long, 12):             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0f45e858-runner-12",
		TargetNamespace("team-a", long): "fb-team-a-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-71f1b2a9",
		ScriptConfigMap("quick"):        "quick-script",
		TargetWorkload("stack"):         "target-stack",
	} {
		if got != want {
			t.Errorf("name changed: got %q, want %q", got, want)
		}
	}
	if TargetNamespace("a", long+"x") == TargetNamespace("a", long+"y") {
		t.Error("shortened namespaces of different TestRuns collide")
	}
}
