package statusshape

import (
	"go/ast"
	"go/token"
	"go/types"
)

// mem is what the storage e names lies in: writing e writes there. Any TestRunStatus value
// is a status (a copy being built is one too); a field, element or pointee lies where its
// holder points (through a pointer, slice or map) or lies (a struct or array value).
func (c *checker) mem(e ast.Expr) origins {
	e = ast.Unparen(e)
	var o origins
	if isStatus(c.info.TypeOf(e)) {
		o.status = true
	}
	switch x := e.(type) {
	case *ast.SelectorExpr:
		if sel := c.info.Selections[x]; sel != nil && sel.Kind() == types.FieldVal {
			o.add(c.mem(x.X))
			if sel.Indirect() {
				o.add(c.refs(x.X))
			}
		}
	case *ast.IndexExpr:
		switch c.under(x.X).(type) {
		case *types.Array:
			o.add(c.mem(x.X))
		case *types.Slice, *types.Map, *types.Pointer:
			o.add(c.refs(x.X))
		}
	case *ast.StarExpr:
		o.add(c.refs(x.X))
	}
	return o
}

func (c *checker) under(e ast.Expr) types.Type {
	if t := c.info.TypeOf(e); t != nil {
		return t.Underlying()
	}
	return nil
}

// refs is what the value of e may point into (through any pointer, slice or map it holds).
func (c *checker) refs(e ast.Expr) origins {
	e = ast.Unparen(e)
	t := c.info.TypeOf(e)
	var o origins
	if isStatus(t) || isStatusPtr(t) {
		o.status = true
	}
	if !o.status && !c.refsIn(t) {
		return o
	}
	switch x := e.(type) {
	case *ast.Ident:
		if v, ok := c.info.ObjectOf(x).(*types.Var); ok {
			if local(v) {
				o.add(c.env[v])
			} else {
				o.add(c.taint[v])
			}
			if c.params[v] {
				o.addParam(v)
			}
		}
	case *ast.SelectorExpr:
		sel := c.info.Selections[x]
		switch {
		case sel == nil: // a package's variable
			if v, ok := c.info.ObjectOf(x.Sel).(*types.Var); ok {
				o.add(c.taint[v])
			}
		case sel.Kind() == types.FieldVal:
			o.add(c.mem(x))
			o.add(c.refs(x.X))
			o.add(c.fields[fieldKey(sel.Recv(), sel.Obj().(*types.Var))])
		default: // a method value holds its receiver
			o.add(c.recv(x.X, sel.Obj().(*types.Func)))
		}
	case *ast.IndexExpr:
		o.add(c.mem(x))
		o.add(c.refs(x.X))
		if id, ok := ast.Unparen(x.X).(*ast.Ident); ok {
			if v, ok := c.info.ObjectOf(id).(*types.Var); ok {
				o.add(c.elems[v])
			}
		}
	case *ast.SliceExpr:
		o.add(c.refs(x.X))
		if _, ok := c.under(x.X).(*types.Array); ok {
			o.add(c.mem(x.X))
		}
	case *ast.StarExpr:
		o.add(c.refs(x.X))
	case *ast.UnaryExpr:
		if x.Op == token.AND { // a pointer to x reaches x and all x reaches
			o.add(c.mem(x.X))
			o.add(c.refs(x.X))
		}
	case *ast.TypeAssertExpr:
		o.add(c.refs(x.X))
	case *ast.CompositeLit:
		// A struct's fields are followed each on its own (checker.fields); a list or map holds
		// what its elements point into.
		if _, ok := c.under(x).(*types.Struct); ok {
			break
		}
		for _, el := range x.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			o.add(c.refs(el))
		}
	case *ast.CallExpr:
		o.add(c.callRefs(x))
	}
	return o
}

// recv is what a method's receiver x gives it: x's storage too when the method takes a
// pointer and x is not one (x.M() is (&x).M()).
func (c *checker) recv(x ast.Expr, m *types.Func) origins {
	o := c.refs(x)
	if _, ptr := m.Signature().Recv().Type().Underlying().(*types.Pointer); ptr {
		if _, isPtr := c.under(x).(*types.Pointer); !isPtr {
			o.add(c.mem(x))
		}
	}
	return o
}
