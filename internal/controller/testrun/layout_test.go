package testrun

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The controller's packages in the order a reconcile goes through them. A package may import
// only those before it, so Go's import rule keeps the order: the pure decisions and the runner
// I/O first, the stages in the order of their phases, the reconciler last ("").
var stageOrder = []string{"decide", "runio", "runenv", "admit", "provision", "drive", "collect", ""}

// maxFiles bounds a package's non-test files: past it, a package is cut by what it decides.
const maxFiles = 15

const modulePath = "fleetbench.dev/fleetbench"

type listed struct {
	ImportPath, Name, Doc     string
	GoFiles, Imports          []string
	TestImports, XTestImports []string
}

// goList lists the packages patterns name, as `go list -json` reads them from this folder.
func goList(t *testing.T, patterns ...string) []listed {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, patterns...)...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v: %s", err, exit.Stderr)
		}
		t.Fatal(err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

// stageOf is a package's place in stageOrder; -1 for a package outside the controller.
func stageOf(importPath string) int {
	const root = modulePath + "/internal/controller/testrun"
	switch {
	case importPath == root:
		return slices.Index(stageOrder, "")
	case strings.HasPrefix(importPath, root+"/"):
		return slices.Index(stageOrder, strings.TrimPrefix(importPath, root+"/"))
	}
	return -1
}

// TestStagesImportOnlyEarlierStages reads the import graph of the controller's packages: every
// package is in stageOrder, imports (its tests' too) only packages before it, and has at most
// maxFiles non-test files; outside the controller only the manager's main imports the reconciler (tests may).
func TestStagesImportOnlyEarlierStages(t *testing.T) {
	for _, p := range goList(t, "./...") {
		rank := stageOf(p.ImportPath)
		if rank < 0 {
			t.Errorf("%s is not in stageOrder: place it there, after every package it imports", p.ImportPath)
			continue
		}
		if len(p.GoFiles) > maxFiles {
			t.Errorf("%s has %d non-test files, more than %d: cut it by what it decides", p.ImportPath, len(p.GoFiles), maxFiles)
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports) {
			if other := stageOf(imp); other >= 0 && other > rank {
				t.Errorf("%s imports %s, a later stage: move what it needs to an earlier package", p.ImportPath, imp)
			}
		}
	}
	for _, p := range goList(t, modulePath+"/...") {
		if stageOf(p.ImportPath) >= 0 || p.ImportPath == modulePath+"/cmd/manager" {
			continue
		}
		if slices.Contains(p.Imports, modulePath+"/internal/controller/testrun") {
			t.Errorf("%s imports the reconciler: only the manager's main does", p.ImportPath)
		}
	}
}

// TestPackageCommentsNameTheirPackage: every package of the module with code says what it is in
// a comment that begins "Package <name>", so a comment left from a rename shows.
func TestPackageCommentsNameTheirPackage(t *testing.T) {
	for _, p := range goList(t, modulePath+"/...") {
		if p.Name == "main" || len(p.GoFiles) == 0 {
			continue
		}
		if !strings.HasPrefix(p.Doc, "Package "+p.Name+" ") {
			t.Errorf("%s: package comment %q does not begin %q", p.ImportPath, p.Doc, "Package "+p.Name+" ")
		}
	}
}
