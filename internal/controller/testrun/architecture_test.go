package testrun

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fleetbench.dev/fleetbench/internal/controller/children"
)

const architectureDoc = "../../../docs/architecture.md"

// docTable is the rows of the markdown table between <!-- name:begin --> and <!-- name:end -->
// in docs/architecture.md, each split into its cells; the header and rule rows left out.
func docTable(t *testing.T, name string) [][]string {
	t.Helper()
	doc, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- "+name+":begin -->")
	table, _, ok2 := strings.Cut(rest, "<!-- "+name+":end -->")
	if !ok || !ok2 {
		t.Fatalf("%s has no %s table between its markers", architectureDoc, name)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

var codeName = regexp.MustCompile("`([A-Za-z]+)`")

// names are the backquoted names in a cell.
func names(cell string) []string {
	var out []string
	for _, m := range codeName.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// phasesInCode are the phases runPhases calls, in order: the methods of its []phaseFunc.
func phasesInCode(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "reconcile.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if list, ok := lit.Type.(*ast.ArrayType); !ok || !isIdent(list.Elt, "phaseFunc") {
			return true
		}
		for _, e := range lit.Elts {
			out = append(out, e.(*ast.SelectorExpr).Sel.Name)
		}
		return false
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// methodsOf are the names of the funcs and methods declared in a package's non-test files.
func methodsOf(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				out = append(out, fn.Name.Name)
			}
		}
	}
	return out
}

// TestArchitectureListsThePhases: docs/architecture.md's stages table names every package of the
// controller in stageOrder's order, and its phases are runPhases', in order, each declared in the
// package the table puts it in.
func TestArchitectureListsThePhases(t *testing.T) {
	var pkgs, phases []string
	for _, row := range docTable(t, "stages") {
		pkg := strings.Trim(row[0], "`()")
		pkgs = append(pkgs, pkg)
		dir := pkg
		if pkg == "testrun" {
			dir, pkg = ".", ""
		}
		declared := methodsOf(t, dir)
		for _, phase := range names(row[1]) {
			phases = append(phases, phase)
			if !slices.Contains(declared, phase) {
				t.Errorf("%s lists %s under %s, which does not declare it", architectureDoc, phase, row[0])
			}
		}
		pkgs[len(pkgs)-1] = pkg
	}
	if diff := cmp.Diff(stageOrder, pkgs); diff != "" {
		t.Errorf("%s's stages table is not stageOrder (-code +doc):\n%s", architectureDoc, diff)
	}
	if diff := cmp.Diff(phasesInCode(t), phases); diff != "" {
		t.Errorf("%s's phases are not those reconcile.go calls (-code +doc):\n%s", architectureDoc, diff)
	}
}

// TestArchitectureListsTheChildKinds: docs/architecture.md's kinds table is children.Kinds, each
// kind with the function that creates it.
func TestArchitectureListsTheChildKinds(t *testing.T) {
	var doc, code [][2]string
	for _, row := range docTable(t, "kinds") {
		doc = append(doc, [2]string{row[0], strings.Join(names(row[1]), ",")})
	}
	for _, k := range children.Kinds {
		code = append(code, [2]string{k.Name, k.CreatedBy})
	}
	if diff := cmp.Diff(code, doc); diff != "" {
		t.Errorf("%s's kinds are not children.Kinds (-code +doc):\n%s", architectureDoc, diff)
	}
}
