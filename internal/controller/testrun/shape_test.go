package testrun

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fleetbench.dev/fleetbench/internal/controller/children"
)

// The reconcile's shape, checked on the source of the controller's packages (go/ast): each kind
// of child (children.Kinds) is created from one function. That the status is composed in
// decide/compose.go only is checked on types, in internal/controller/statusshape.

// composeFile is the one file that may write a TestRun's status.
const composeFile = "decide/compose.go"

// sources parses the non-test files of the controller's packages, by their path below it.
func sources(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		out[path] = f
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// createCalls are the calls that create an object in the API server.
var createCalls = []string{"Create", "CreateOrGet", "CreateOrGetCreated"}

// TestEachChildKindIsCreatedInOneFunction: the functions that call the API server's create
// are exactly those children.Kinds names, and no kind is listed twice.
func TestEachChildKindIsCreatedInOneFunction(t *testing.T) {
	var found []string
	for _, f := range sources(t) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(createCalls, sel.Sel.Name) {
						found = append(found, fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	sort.Strings(found)
	found = slices.Compact(found)
	var want []string
	seen := map[string]bool{}
	for _, k := range children.Kinds {
		if seen[k.Name] {
			t.Errorf("%s is listed twice in children.Kinds", k.Name)
		}
		seen[k.Name] = true
		if k.CreatedBy != "" {
			want = append(want, k.CreatedBy)
		}
	}
	sort.Strings(want)
	want = slices.Compact(want)
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("functions that create children (-children.Kinds +found); create each kind in its one function, named in its row:\n%s", diff)
	}
	if _, err := os.Stat(composeFile); err != nil {
		t.Fatal(err)
	}
}

// verdictDeciders are the only non-test files that may name a verdict constant: the verdict
// itself, and the composer (a status refused by the API server ends FAILED; a verdict other than
// PASSED is announced as a warning).
var verdictDeciders = []string{"pkg/judge/verdict/verdict.go", "internal/controller/testrun/decide/compose.go"}

// TestOnlyTheVerdictNamesAVerdict: no other file of the controller or of pkg/judge names
// v1alpha1.VerdictPassed, …Failed, …Inconclusive or …Regressed; they gather facts for
// verdict.Decide, and read a verdict through its helpers (verdict.Passed, Ending.Regressed).
func TestOnlyTheVerdictNamesAVerdict(t *testing.T) {
	const root = "../../.."
	for _, dir := range []string{"internal/controller/testrun", "pkg/judge"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if ok && isIdent(sel.X, "v1alpha1") && strings.HasPrefix(sel.Sel.Name, "Verdict") && sel.Sel.Name != "Verdict" &&
					!slices.Contains(verdictDeciders, rel) {
					t.Errorf("%s names %s: gather a fact for verdict.Decide instead", rel, sel.Sel.Name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
