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

// The reconcile's shape, checked on the source of the controller's packages (go/ast): the
// status is composed in decide/compose.go only, and each kind of child (children.Kinds) is
// created from one function.

// composeFile is the one file that may write a TestRun's status.
const composeFile = "decide/compose.go"

// conditionSetters write conditions.
var conditionSetters = []string{"setCondition", "SetCondition", "SetStatusCondition", "SetSummaryConditions", "RemoveStatusCondition"}

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

// throughStatus says whether e is a selector path that goes through a field named Status
// (run.Status, s.run.Status.Results.Partial, …).
func throughStatus(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if x.Sel.Name == "Status" {
				return true
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return false
		}
	}
}

// composedBy says whether the right-hand side is a call of a compose.go function: the one way
// another file may set a whole status (Reconcile, writeStatus).
func composedBy(rhs ast.Expr, composers map[string]bool) bool {
	call, ok := rhs.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return composers[fn.Name]
	case *ast.SelectorExpr:
		pkg, ok := fn.X.(*ast.Ident)
		return ok && pkg.Name == "decide" && composers[fn.Sel.Name]
	}
	return false
}

// statusWrites counts, per file, the assignments through a Status field and the calls of a
// condition setter outside compose.go.
func statusWrites(files map[string]*ast.File) map[string]int {
	composers := map[string]bool{}
	for _, d := range files[composeFile].Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
			composers[fn.Name.Name] = true
		}
	}
	out := map[string]int{}
	for name, f := range files {
		if name == composeFile {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				for i, lhs := range x.Lhs {
					if throughStatus(lhs) && (len(x.Rhs) != len(x.Lhs) || !composedBy(x.Rhs[i], composers)) {
						out[name]++
					}
				}
			case *ast.IncDecStmt:
				if throughStatus(x.X) {
					out[name]++
				}
			case *ast.CallExpr:
				var fn string
				switch f := x.Fun.(type) {
				case *ast.Ident:
					fn = f.Name
				case *ast.SelectorExpr:
					fn = f.Sel.Name
				}
				if slices.Contains(conditionSetters, fn) {
					out[name]++
				}
			}
			return true
		})
	}
	return out
}

// TestOnlyComposeWritesStatus: no file but compose.go assigns a status field or sets a
// condition; the phases record decisions (s.d, s.recordCondition) instead. A pod's status is
// never written here either: the kubelet writes it.
func TestOnlyComposeWritesStatus(t *testing.T) {
	if got := statusWrites(sources(t)); len(got) != 0 {
		t.Errorf("status written outside %s (file: writes): record a decision and compose it in %s instead: %v", composeFile, composeFile, got)
	}
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
