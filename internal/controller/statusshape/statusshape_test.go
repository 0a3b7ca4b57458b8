// Package statusshape holds the TestRun controller to its status rule, on types (go/types):
// a TestRun's status is composed only in internal/controller/testrun/decide/compose.go, from
// the decisions the stages record; no other code writes it, however it got hold of it.
//
// It is a package of its own so that reading the types does not wait for the controller's
// envtest suite (internal/controller/testrun's TestMain starts an API server).
package statusshape

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const root = "../../.."

const module = "fleetbench.dev/fleetbench"

// checked are the packages that handle a TestRun: the controller's, and the kits it uses.
var checked = []string{"./internal/controller/testrun/...", "./internal/controller/ctrlkit", "./internal/controller/children"}

// read are the module's other packages the controller calls: read from source, so that what
// their functions write and return is known, but not checked (pkg/statusbound cuts a status
// it is given: the composer's to give).
var read = []string{"./api/...", "./pkg/..."}

func isChecked(pkgPath string) bool {
	for _, p := range checked {
		p = module + strings.TrimSuffix(strings.TrimPrefix(p, "."), "/...")
		if pkgPath == p || strings.HasPrefix(pkgPath, p+"/") {
			return true
		}
	}
	return false
}

const composer = "internal/controller/testrun/decide/compose.go"

// load type-checks the packages patterns name, from their source; their imports from export data.
func load(t *testing.T, patterns ...string) (string, []*packages.Package) {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{Dir: abs, Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports |
		packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		t.Fatalf("%d errors loading %v", n, patterns)
	}
	return abs, pkgs
}

// TestOnlyTheComposerWritesStatus: no code of the controller but the composer assigns into a
// TestRun's status, changes it, appends to, copies into, deletes from or clears its lists, or
// hands a pointer into it to code that may write it. The stages record decisions instead
// (decide.Scope.Decided, RecordCondition); whole statuses are set only from the composer's
// functions (run.Status = decide.ComposeStatus(s)).
func TestOnlyTheComposerWritesStatus(t *testing.T) {
	abs, pkgs := load(t, append(slices.Clone(checked), read...)...)
	for _, f := range check(pkgs, isChecked, abs, filepath.Join(abs, composer)) {
		t.Errorf("%s: record a decision and compose it in %s instead", f, composer)
	}
}

// TestCheckerCatchesEvasions runs the checker on testdata/evasions: every package there but
// readonly, helper (which writes only what it is given) and decide (the composer) writes a
// status in a way the checker must see; readonly only reads, copies and composes.
func TestCheckerCatchesEvasions(t *testing.T) {
	const dir = "internal/controller/statusshape/testdata/evasions"
	abs, pkgs := load(t, "./"+dir+"/...")
	found := map[string][]finding{}
	all := func(string) bool { return true }
	for _, f := range check(pkgs, all, abs, filepath.Join(abs, dir, "decide/compose.go")) {
		pkg := strings.Split(strings.TrimPrefix(f.Pos, dir+"/"), "/")[0]
		found[pkg] = append(found[pkg], f)
	}
	cases := []struct {
		pkg  string
		want int // findings; the lines are in the failure
	}{
		{"alias", 1},         // st := &run.Status; st.Phase = …
		{"method", 1},        // a method returns a live *TestRunStatus
		{"subpointer", 1},    // a method returns run.Status.Comparison, written
		{"helpercall", 1},    // a helper in another package writes its argument
		{"appendback", 1},    // append into the status's own array
		{"setcondition", 2},  // meta.SetStatusCondition, by name and through a func value
		{"delete", 1},        // delete from a map in the status
		{"clear", 1},         // clear a status list
		{"copy", 1},          // copy into a status list
		{"findcondition", 1}, // meta.FindStatusCondition's pointer, written
		{"incdec", 1},        // r := run.Status.Runners; r.Ready++
		{"rangeptr", 1},      // &run.Status.Conditions[i], written
		{"stash", 1},         // a field keeps the pointer for another function
		{"whole", 1},         // a whole status not from the composer
		{"readonly", 0},
		{"helper", 0},
		{"decide", 0},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.pkg] = true
		if got := found[c.pkg]; len(got) != c.want {
			t.Errorf("%s: %d findings, want %d: %v", c.pkg, len(got), c.want, got)
		}
	}
	for pkg, fs := range found {
		if !seen[pkg] {
			t.Errorf("%s has findings but no case: %v", pkg, fs)
		}
	}
}
