package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
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
		{"script copy", ScriptCopyConfigMap(long), 253},
		{"target charge", TargetChargePod(long), 63},
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
		TargetNamespace("team-a", long): "fb-team-a-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-7f99ce27c2be9440",
		ScriptConfigMap("quick"):        "quick-script",
		ScriptCopyConfigMap("quick"):    "quick-script-copy",
		TargetWorkload("stack"):         "target-stack",
		TargetChargePod("quick"):        "quick-target-charge",
	} {
		if got != want {
			t.Errorf("name changed: got %q, want %q", got, want)
		}
	}
	if TargetNamespace("a", long+"x") == TargetNamespace("a", long+"y") {
		t.Error("shortened namespaces of different TestRuns collide")
	}
}

// TestSharedTargetObjects: in a target namespace several TestRuns share, every object's name
// carries its run, fits a Service's DNS label, and differs between runs however they are named.
func TestSharedTargetObjects(t *testing.T) {
	long := strings.Repeat("b", 253)
	cases := []struct {
		name, ns, run, object string
		readable              string // a prefix the name keeps, "" to skip
	}{
		{"short", "team-a", "quick", "web", "fb-quick-web-"},
		{"long run", "team-a", long, "stack", "fb-bbbbbbbbbb"},
		{"long object", "team-a", "quick", "pull-" + long, "fb-quick-pull-bbbb"},
		{"dotted run", "team-a", "v1.2.run", "web", "fb-v1-2-run-web-"},
		{"digit first", "team-a", "1st", "web", "fb-1st-web-"},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		got := SharedTargetObject(tc.ns, tc.run, tc.object)
		if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
			t.Errorf("%s: %q is no DNS label: %v", tc.name, got, errs)
		}
		if !strings.HasPrefix(got, tc.readable) {
			t.Errorf("%s: %q does not start with %q", tc.name, got, tc.readable)
		}
		if got != SharedTargetObject(tc.ns, tc.run, tc.object) {
			t.Errorf("%s: not deterministic", tc.name)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s share the name %q", tc.name, other, got)
		}
		seen[got] = tc.name
	}
	for _, pair := range [][2][3]string{
		{{"team-a", "load", "web"}, {"team-b", "load", "web"}},     // one name in two namespaces
		{{"team", "web-load", "x"}, {"team-web", "load", "x"}},     // namespace and name read alike
		{{"team", "a-b", "c"}, {"team", "a", "b-c"}},               // run and object read alike
		{{"team", long + "x", "web"}, {"team", long + "y", "web"}}, // shortened alike
	} {
		a, b := SharedTargetObject(pair[0][0], pair[0][1], pair[0][2]), SharedTargetObject(pair[1][0], pair[1][1], pair[1][2])
		if a == b {
			t.Errorf("%v and %v collide as %q", pair[0], pair[1], a)
		}
	}
	// Pinned: an operator upgrade must find the objects of runs already provisioned.
	if got, want := SharedTargetObject("team-a", "quick", "web"), "fb-quick-web-59b95f2f80e56525"; got != want {
		t.Errorf("name changed: got %q, want %q", got, want)
	}
}

// TestTargetNamespacesOfTenantsNeverCollide: run prod-x in team-a and run x in team-a-prod read
// alike ("team-a-prod-x") and must still get different namespaces, or one tenant's cleanup
// deletes the other's target. Every name carries 64 bits of a hash of "namespace/name" (16 hex
// characters), short names too, and is a DNS label starting with "fb-".
func TestTargetNamespacesOfTenantsNeverCollide(t *testing.T) {
	a, b := TargetNamespace("team-a", "prod-x"), TargetNamespace("team-a-prod", "x")
	if a == b {
		t.Fatalf("team-a/prod-x and team-a-prod/x share the target namespace %q", a)
	}
	long := strings.Repeat("a", 253)
	for _, name := range []string{a, b, TargetNamespace("team-a", long), TargetNamespace(strings.Repeat("n", 63), "v1.2.run")} {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("%q is no DNS label: %v", name, errs)
		}
		if !strings.HasPrefix(name, "fb-") {
			t.Errorf("%q does not start with fb-", name)
		}
		hash := name[strings.LastIndex(name, "-")+1:]
		if len(hash) != 16 || strings.Trim(hash, "0123456789abcdef") != "" {
			t.Errorf("%q does not end in 16 hex characters of a hash", name)
		}
	}
	if !strings.HasPrefix(a, "fb-team-a-prod-x-") {
		t.Errorf("%q lost its readable prefix", a)
	}
	// The names of operators before this one, found only for the runs they started.
	if got := LegacyTargetNamespace("team-a", "prod-x"); got != "fb-team-a-prod-x" {
		t.Errorf("legacy name changed: %q", got)
	}
}
