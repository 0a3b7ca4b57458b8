package statusshape

import (
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"sort"

	"golang.org/x/tools/go/packages"
)

// The checker reads the type-checked packages and says where a TestRun's status is written
// outside the composer. It follows where each value may point (its origins) rather than how
// the source spells it: a status, or a parameter of the function at hand. Functions are
// summarised (which parameters they write through, what their results may point to) and the
// packages are read again until nothing changes, so helpers in other loaded packages count.

const (
	apiPath    = "fleetbench.dev/fleetbench/api/v1alpha1"
	statusName = "TestRunStatus"
)

// origins are what a value may point into: a TestRun's status, and parameters of functions.
type origins struct {
	status bool
	params map[*types.Var]bool
}

func (o *origins) add(p origins) {
	o.status = o.status || p.status
	for v := range p.params {
		o.addParam(v)
	}
}

func (o *origins) addParam(v *types.Var) {
	if o.params == nil {
		o.params = map[*types.Var]bool{}
	}
	o.params[v] = true
}

func (o origins) empty() bool { return !o.status && len(o.params) == 0 }

// finding is one write outside the composer, at file:line relative to the checked root.
type finding struct {
	Pos, What string
}

func (f finding) String() string { return f.Pos + ": " + f.What }

type checker struct {
	root     string // findings are relative to it
	composer string // the one file that may write status (absolute)
	fset     *token.FileSet
	info     *types.Info // of the package being read

	bodies   map[*types.Func]bool    // loaded functions, read from source
	params   map[*types.Var]bool     // their parameters and receivers
	taint    map[*types.Var]origins  // package variables: what they may point into
	env      map[*types.Var]origins  // the function's variables, at the statement being read
	elems    map[*types.Var]origins  // what the elements of a variable's list or map were set to
	composed map[*ast.CallExpr]bool  // composer calls whose result is the whole status
	fields   map[string]origins      // fields (by owner type and name), whatever their owner
	mutated  map[*types.Var]bool     // parameters written through
	returns  map[*types.Func]origins // what results may point into
	hasRefs  map[types.Type]bool     // memo
	found    map[string]finding      // by position and text
	changed  bool                    // the last pass grew a summary
	funcs    []*types.Func           // the function being read, innermost last (nil: a literal)
	report   bool                    // the last pass: record findings
	curFile  string
	checked  func(pkgPath string) bool
	inCheck  bool // the package being read is checked
}

// check reads pkgs (loaded with syntax and types) and returns the writes outside composer in
// the packages checked says; the others are read for what their functions do.
func check(pkgs []*packages.Package, checked func(pkgPath string) bool, root, composer string) []finding {
	c := &checker{root: root, composer: composer, checked: checked, bodies: map[*types.Func]bool{}, params: map[*types.Var]bool{},
		taint: map[*types.Var]origins{}, fields: map[string]origins{}, mutated: map[*types.Var]bool{},
		returns: map[*types.Func]origins{}, elems: map[*types.Var]origins{}, composed: map[*ast.CallExpr]bool{}, hasRefs: map[types.Type]bool{},
		found: map[string]finding{}}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					fn := p.TypesInfo.Defs[fd.Name].(*types.Func)
					c.bodies[fn] = true
					sig := fn.Signature()
					if sig.Recv() != nil {
						c.params[sig.Recv()] = true
					}
					for v := range sig.Params().Variables() {
						c.params[v] = true
					}
				}
			}
		}
	}
	// Each pass can only grow the summaries; a few passes reach the fixed point.
	for pass := 0; ; pass++ {
		c.changed = false
		c.walk(pkgs)
		if !c.changed || pass > 20 {
			break
		}
	}
	c.report = true
	c.walk(pkgs)
	out := make([]finding, 0, len(c.found))
	for _, f := range c.found {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (c *checker) walk(pkgs []*packages.Package) {
	for _, p := range pkgs {
		c.fset, c.info, c.inCheck = p.Fset, p.TypesInfo, c.checked(p.PkgPath)
		for _, f := range p.Syntax {
			c.curFile = p.Fset.Position(f.Pos()).Filename
			for _, d := range f.Decls {
				c.decl(d)
			}
		}
	}
}

func (c *checker) decl(d ast.Decl) {
	c.env = map[*types.Var]origins{}
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Body == nil {
			return
		}
		c.funcs = append(c.funcs, c.info.Defs[d.Name].(*types.Func))
		c.stmt(d.Body)
		c.funcs = c.funcs[:len(c.funcs)-1]
	case *ast.GenDecl:
		c.funcs = append(c.funcs, nil)
		c.spec(d)
		c.funcs = c.funcs[:len(c.funcs)-1]
	}
}

// stmt reads s in order: a local variable holds what it was last set to (an assignment
// replaces it), joined where branches meet and over a loop's second round.
func (c *checker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.BlockStmt:
		for _, x := range s.List {
			c.stmt(x)
		}
	case *ast.ExprStmt:
		c.exprs(s.X)
	case *ast.AssignStmt:
		for i, lhs := range s.Lhs {
			if len(s.Lhs) == len(s.Rhs) && isStatus(c.info.TypeOf(lhs)) {
				if call, ok := ast.Unparen(s.Rhs[i]).(*ast.CallExpr); ok && c.composerCall(call) {
					c.composed[call] = true // the composer may be given the status it replaces
				}
			}
		}
		c.exprs(append(slices.Clone(s.Rhs), s.Lhs...)...)
		c.assign(s)
	case *ast.IncDecStmt:
		c.exprs(s.X)
		c.write(s.X, "changes", false)
	case *ast.DeclStmt:
		c.spec(s.Decl)
	case *ast.ReturnStmt:
		c.exprs(s.Results...)
		if fn := c.funcs[len(c.funcs)-1]; fn != nil {
			for _, r := range s.Results {
				c.grow(c.returns, fn, c.refs(r))
			}
			if len(s.Results) == 0 { // a bare return gives back the named results
				for v := range fn.Signature().Results().Variables() {
					c.grow(c.returns, fn, c.env[v])
				}
			}
		}
	case *ast.GoStmt:
		c.exprs(s.Call)
	case *ast.DeferStmt:
		c.exprs(s.Call)
	case *ast.SendStmt:
		c.exprs(s.Chan, s.Value)
	case *ast.LabeledStmt:
		c.stmt(s.Stmt)
	case *ast.IfStmt:
		c.opt(s.Init)
		c.exprs(s.Cond)
		entry := c.snap()
		c.stmt(s.Body)
		then := c.env
		c.env = entry
		c.opt(s.Else)
		c.join(then)
	case *ast.ForStmt:
		c.opt(s.Init)
		entry := c.snap()
		for range 2 {
			c.exprs(s.Cond)
			c.stmt(s.Body)
			c.opt(s.Post)
			c.join(entry)
		}
	case *ast.RangeStmt:
		c.exprs(s.X)
		elem := c.refs(s.X)
		elem.add(c.mem(s.X))
		entry := c.snap()
		for range 2 {
			for _, e := range []ast.Expr{s.Key, s.Value} {
				if e == nil {
					continue
				}
				if s.Tok == token.ASSIGN {
					c.write(e, "assigns", false)
				}
				c.store(e, elem)
			}
			c.stmt(s.Body)
			c.join(entry)
		}
	case *ast.SwitchStmt:
		c.opt(s.Init)
		c.exprs(s.Tag)
		c.clauses(s.Body, nil)
	case *ast.TypeSwitchStmt:
		c.opt(s.Init)
		var x ast.Expr
		switch a := s.Assign.(type) {
		case *ast.AssignStmt:
			x = a.Rhs[0].(*ast.TypeAssertExpr).X
		case *ast.ExprStmt:
			x = a.X.(*ast.TypeAssertExpr).X
		}
		c.exprs(x)
		c.clauses(s.Body, x)
	case *ast.SelectStmt:
		c.clauses(s.Body, nil)
	}
}

func (c *checker) opt(s ast.Stmt) {
	if s != nil {
		c.stmt(s)
	}
}

// clauses reads each clause of a switch or select from the state before it, and joins them;
// x is a type switch's operand, which its clauses' variables hold.
func (c *checker) clauses(body *ast.BlockStmt, x ast.Expr) {
	entry := c.snap()
	out := c.snap() // without a default, no clause may run
	for _, cl := range body.List {
		c.env = maps.Clone(entry)
		switch cl := cl.(type) {
		case *ast.CaseClause:
			c.exprs(cl.List...)
			if v, ok := c.info.Implicits[cl].(*types.Var); ok && x != nil {
				c.env[v] = c.refs(x)
			}
			c.stmt(&ast.BlockStmt{List: cl.Body})
		case *ast.CommClause:
			c.opt(cl.Comm)
			c.stmt(&ast.BlockStmt{List: cl.Body})
		}
		c.join(out)
		out = c.env
	}
	c.env = out
}

func (c *checker) snap() map[*types.Var]origins { return maps.Clone(c.env) }

// join makes the state what it or other may hold.
func (c *checker) join(other map[*types.Var]origins) {
	for v, o := range other {
		var j origins
		j.add(c.env[v])
		j.add(o)
		c.env[v] = j
	}
}

// spec reads a declaration's variables.
func (c *checker) spec(d ast.Decl) {
	g, ok := d.(*ast.GenDecl)
	if !ok {
		return
	}
	for _, sp := range g.Specs {
		vs, ok := sp.(*ast.ValueSpec)
		if !ok {
			continue
		}
		c.exprs(vs.Values...)
		for i, name := range vs.Names {
			switch {
			case len(vs.Values) == len(vs.Names):
				c.store(name, c.refs(vs.Values[i]))
			case len(vs.Values) == 1:
				c.store(name, c.refs(vs.Values[0]))
			}
		}
	}
}

// exprs reads the calls and literals in es; a function literal is read where it is made, on
// the state then, and what it sets of the enclosing variables is joined in.
func (c *checker) exprs(es ...ast.Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		ast.Inspect(e, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				entry := c.snap()
				c.funcs = append(c.funcs, nil)
				c.stmt(x.Body)
				c.funcs = c.funcs[:len(c.funcs)-1]
				c.join(entry)
				return false
			case *ast.CompositeLit:
				// A field set in a literal holds what its value points into, as an assigned one does.
				st, ok := c.under(x).(*types.Struct)
				for i, el := range x.Elts {
					if !ok {
						break
					}
					f, v := st.Field(min(i, st.NumFields()-1)), el
					if kv, isKV := el.(*ast.KeyValueExpr); isKV {
						f, _ = c.info.Uses[kv.Key.(*ast.Ident)].(*types.Var)
						v = kv.Value
					}
					if f != nil {
						c.growField(fieldKey(c.info.TypeOf(x), f), c.refs(v))
					}
				}
			case *ast.CallExpr:
				c.call(x)
			}
			return true
		})
	}
}
