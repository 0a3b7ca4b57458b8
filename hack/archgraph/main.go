// Command archgraph measures how a tree of Go packages is laid out: files and lines per package,
// the file-to-file references (an identifier used in one file and declared in another), and the
// references that run against the order: across packages, an import of a package ranked later
// by -order; within a package, references inside a cycle of files (a strongly connected
// component of the file graph: no order of those files lets every reference point one way).
// The hub files are the ones most others use. It is what docs/architecture.md's figures come
// from; run it on any commit:
//
//	cd hack/archgraph && go run . -dir ../.. ./internal/controller/testrun/...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	dir := flag.String("dir", ".", "the module's folder")
	order := flag.String("order", "", "comma-separated package names (last path element), earliest stage first; a package not named ranks after all")
	hubs := flag.Int("hubs", 5, "how many of the most used files to list")
	edges := flag.Bool("edges", false, "also list each file's references: the file used and the names")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: archgraph [-dir DIR] [-order a,b,c] PATTERN...")
		os.Exit(2)
	}
	cfg := &packages.Config{Dir: *dir, Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if packages.PrintErrors(pkgs) > 0 {
		os.Exit(1)
	}
	g := build(pkgs)
	g.print(os.Stdout, rank(*order), *hubs)
	if *edges {
		g.printEdges(os.Stdout)
	}
}

// graph is the file graph of the loaded packages, non-test files only.
type graph struct {
	pkgOf map[string]string                     // file → package path
	lines map[string]int                        // file → lines
	edges map[string]map[string]int             // from file → to file → uses
	names map[string]map[string]map[string]bool // from file → to file → names used
	pkgs  []*packages.Package
}

func build(pkgs []*packages.Package) *graph {
	g := &graph{pkgOf: map[string]string{}, lines: map[string]int{}, edges: map[string]map[string]int{}, names: map[string]map[string]map[string]bool{}, pkgs: pkgs}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Pos()).Filename
			g.pkgOf[name] = p.PkgPath
			g.lines[name] = p.Fset.Position(f.End()).Line
		}
	}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			from := p.Fset.Position(f.Pos()).Filename
			ast.Inspect(f, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				obj := p.TypesInfo.Uses[id]
				if obj == nil || !obj.Pos().IsValid() {
					return true
				}
				to := p.Fset.Position(obj.Pos()).Filename
				if _, ours := g.pkgOf[to]; !ours || to == from {
					return true
				}
				if g.edges[from] == nil {
					g.edges[from] = map[string]int{}
				}
				g.edges[from][to]++
				if g.names[from] == nil {
					g.names[from] = map[string]map[string]bool{}
				}
				if g.names[from][to] == nil {
					g.names[from][to] = map[string]bool{}
				}
				g.names[from][to][id.Name] = true
				return true
			})
		}
	}
	return g
}

func rank(order string) func(pkgPath string) int {
	ranks := map[string]int{}
	for i, name := range strings.Split(order, ",") {
		if name = strings.TrimSpace(name); name != "" {
			ranks[name] = i + 1
		}
	}
	return func(pkgPath string) int {
		if r, ok := ranks[filepath.Base(pkgPath)]; ok {
			return r
		}
		return len(ranks) + 1
	}
}

func (g *graph) print(w *os.File, rankOf func(string) int, hubs int) {
	type pkgRow struct {
		path         string
		files, lines int
	}
	rows := map[string]*pkgRow{}
	for f, p := range g.pkgOf {
		if rows[p] == nil {
			rows[p] = &pkgRow{path: p}
		}
		rows[p].files++
		rows[p].lines += g.lines[f]
	}
	var paths []string
	for p := range rows {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fmt.Fprintf(w, "%-60s %6s %7s\n", "package (non-test files)", "files", "lines")
	totalFiles, totalLines := 0, 0
	for _, p := range paths {
		fmt.Fprintf(w, "%-60s %6d %7d\n", p, rows[p].files, rows[p].lines)
		totalFiles += rows[p].files
		totalLines += rows[p].lines
	}
	fmt.Fprintf(w, "%-60s %6d %7d\n", "total", totalFiles, totalLines)

	refs, cross := 0, 0
	for from, tos := range g.edges {
		for to := range tos {
			refs++
			if g.pkgOf[from] != g.pkgOf[to] {
				cross++
			}
		}
	}
	against := 0
	for _, p := range g.pkgs {
		for _, imp := range p.Imports {
			if _, ours := rows[imp.PkgPath]; ours && rankOf(imp.PkgPath) > rankOf(p.PkgPath) {
				against++
				fmt.Fprintf(w, "against the order: %s imports %s\n", p.PkgPath, imp.PkgPath)
			}
		}
	}
	inCycles, largest := g.cycles()
	fmt.Fprintf(w, "file-to-file references: %d (%d across packages)\n", refs, cross)
	fmt.Fprintf(w, "package imports against -order: %d\n", against)
	fmt.Fprintf(w, "references inside file cycles: %d (largest cycle: %d files)\n", inCycles, largest)

	usedBy := map[string]int{}
	for _, tos := range g.edges {
		for to := range tos {
			usedBy[to]++
		}
	}
	var files []string
	for f := range usedBy {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		if usedBy[files[i]] != usedBy[files[j]] {
			return usedBy[files[i]] > usedBy[files[j]]
		}
		return files[i] < files[j]
	})
	for i := 0; i < hubs && i < len(files); i++ {
		fmt.Fprintf(w, "hub: %s used by %d files\n", g.short(files[i]), usedBy[files[i]])
	}
}

// cycles counts the references whose two files lie in one strongly connected component of the
// file graph (Tarjan), and the size of the largest such component.
func (g *graph) cycles() (refs, largest int) {
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	comp := map[string]int{}
	var stack []string
	next, ncomp := 0, 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for w := range g.edges[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			size := 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				size++
				if w == v {
					break
				}
			}
			largest = max(largest, size)
			ncomp++
		}
	}
	var files []string
	for f := range g.pkgOf {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if _, seen := index[f]; !seen {
			strong(f)
		}
	}
	for from, tos := range g.edges {
		for to := range tos {
			if comp[from] == comp[to] {
				refs++
			}
		}
	}
	if largest == 1 {
		largest = 0
	}
	return refs, largest
}

func (g *graph) short(file string) string {
	return filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
}

func (g *graph) printEdges(w *os.File) {
	var froms []string
	for f := range g.names {
		froms = append(froms, f)
	}
	sort.Strings(froms)
	for _, from := range froms {
		var tos []string
		for to := range g.names[from] {
			tos = append(tos, to)
		}
		sort.Strings(tos)
		for _, to := range tos {
			var names []string
			for n := range g.names[from][to] {
				names = append(names, n)
			}
			sort.Strings(names)
			fmt.Fprintf(w, "%s -> %s: %s\n", g.short(from), g.short(to), strings.Join(names, " "))
		}
	}
}
