package statusshape

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"

	"golang.org/x/tools/go/types/typeutil"
)

// Where values go: assignments, stores and the sinks that write a status.

func (c *checker) assign(x *ast.AssignStmt) {
	tuple := len(x.Lhs) != len(x.Rhs)
	rhs := make([]origins, len(x.Lhs))
	for i := range x.Lhs { // all read before any is set: a, b = b, a
		if tuple {
			rhs[i] = c.refs(x.Rhs[0])
		} else {
			rhs[i] = c.refs(x.Rhs[i])
		}
	}
	for i, lhs := range x.Lhs {
		if id, ok := lhs.(*ast.Ident); ok && (id.Name == "_" || c.info.Defs[id] != nil) {
			// A new variable: nothing is written but it.
		} else {
			allowed := false
			if !tuple {
				// The whole status, set to what a composer function made: the one write allowed.
				call, ok := ast.Unparen(x.Rhs[i]).(*ast.CallExpr)
				allowed = ok && c.composed[call]
			}
			c.write(lhs, "assigns", allowed)
		}
		if x.Tok == token.DEFINE || x.Tok == token.ASSIGN {
			c.store(lhs, rhs[i])
		}
	}
}

// composerCall says whether call's function is declared in the composer's file.
func (c *checker) composerCall(call *ast.CallExpr) bool {
	fn := typeutil.StaticCallee(c.info, call)
	return fn != nil && c.fset.Position(fn.Pos()).Filename == c.composer
}

// store records what o points into is held by lhs: a variable (set whole, it holds only that
// from here on), a field (of whichever value: fields), or an element of a variable's list
// or map (elems). A store through a pointer (*p = v) is not followed: p points where it did.
func (c *checker) store(lhs ast.Expr, o origins) {
	switch e := ast.Unparen(lhs).(type) {
	case *ast.Ident:
		v, ok := c.info.ObjectOf(e).(*types.Var)
		switch {
		case !ok:
		case local(v):
			c.env[v] = o
		case !o.empty():
			c.grow(c.taint, v, o)
		}
	case *ast.SelectorExpr:
		// A status's own field needs no following: it is read through the status.
		if sel := c.info.Selections[e]; sel != nil && sel.Kind() == types.FieldVal && !c.mem(e).status {
			c.growField(fieldKey(sel.Recv(), sel.Obj().(*types.Var)), o)
		}
	case *ast.IndexExpr:
		if id, ok := ast.Unparen(e.X).(*ast.Ident); ok && !o.empty() {
			if v, ok := c.info.ObjectOf(id).(*types.Var); ok {
				c.grow(c.elems, v, o)
			}
		}
	}
}

// local says whether v is a function's variable (a parameter too), not a package's or a field.
func local(v *types.Var) bool {
	return !v.IsField() && v.Pkg() != nil && v.Parent() != nil && v.Parent() != v.Pkg().Scope()
}

// write checks an assignment, change or address-taking write to e.
func (c *checker) write(e ast.Expr, verb string, allowed bool) {
	c.sink(c.mem(e), e, verb, allowed)
}

// sink: o is written. Parameters among o make their functions writers; a status is a finding.
func (c *checker) sink(o origins, e ast.Expr, verb string, allowed bool) {
	for v := range o.params {
		if !c.mutated[v] {
			c.mutated[v] = true
			c.changed = true
		}
	}
	if !o.status || allowed || !c.report || !c.inCheck || c.curFile == c.composer {
		return
	}
	pos := c.fset.Position(e.Pos())
	rel, err := filepath.Rel(c.root, pos.Filename)
	if err != nil {
		rel = pos.Filename
	}
	f := finding{Pos: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line), What: verb + " " + types.ExprString(e) + ", which may be a TestRun's status"}
	c.found[f.String()] = f
}

func (c *checker) grow(m any, k any, o origins) {
	switch m := m.(type) {
	case map[*types.Var]origins:
		v := k.(*types.Var)
		m[v] = c.merged(m[v], o)
	case map[*types.Func]origins:
		f := k.(*types.Func)
		m[f] = c.merged(m[f], o)
	}
}

// growField: field k holds a status. Only a status is followed into fields: a parameter
// followed there would reach every value of the field's type.
func (c *checker) growField(k string, o origins) {
	if o.status {
		c.fields[k] = c.merged(c.fields[k], origins{status: true})
	}
}

// merged is a ∪ b, noting whether it grew.
func (c *checker) merged(a, b origins) origins {
	if (b.status && !a.status) || slices.ContainsFunc(keys(b.params), func(v *types.Var) bool { return !a.params[v] }) {
		c.changed = true
		out := origins{status: a.status}
		out.add(a)
		out.add(b)
		return out
	}
	return a
}

func keys(m map[*types.Var]bool) []*types.Var {
	out := make([]*types.Var, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	return out
}

// fieldKey names a field by the struct type that holds it, wherever its value lives.
func fieldKey(owner types.Type, f *types.Var) string {
	if p, ok := owner.Underlying().(*types.Pointer); ok {
		owner = p.Elem()
	}
	return types.TypeString(owner, nil) + "." + f.Name()
}

// isStatus says whether t is v1alpha1.TestRunStatus.
func isStatus(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == statusName && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == apiPath
}

// isStatusPtr says whether t is *v1alpha1.TestRunStatus.
func isStatusPtr(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isStatus(p.Elem())
}

// refsIn says whether a value of type t can point anywhere: a string or a number cannot.
func (c *checker) refsIn(t types.Type) bool {
	if t == nil {
		return false
	}
	if v, ok := c.hasRefs[t]; ok {
		return v
	}
	c.hasRefs[t] = false // a cycle goes through a pointer, which answers
	var v bool
	switch u := t.Underlying().(type) {
	case *types.Basic:
		v = false
	case *types.Struct:
		for f := range u.Fields() {
			v = v || c.refsIn(f.Type())
		}
	case *types.Array:
		v = c.refsIn(u.Elem())
	case *types.Tuple:
		for x := range u.Variables() {
			v = v || c.refsIn(x.Type())
		}
	default: // pointers, slices, maps, channels, functions, interfaces, type parameters
		v = true
	}
	c.hasRefs[t] = v
	return v
}
