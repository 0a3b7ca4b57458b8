package statusshape

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// Functions outside the loaded packages have no body to read. One that is given a pointer may
// write through it, unless it is listed here as only reading; one given a slice or map is taken
// to read it, unless it is listed as writing it.

// readers only read what their pointer arguments point to.
var readers = map[string]bool{
	"k8s.io/apimachinery/pkg/api/meta.FindStatusCondition":              true,
	"k8s.io/apimachinery/pkg/api/meta.IsStatusConditionTrue":            true,
	"k8s.io/apimachinery/pkg/api/meta.IsStatusConditionFalse":           true,
	"k8s.io/apimachinery/pkg/api/meta.IsStatusConditionPresentAndEqual": true,
	"k8s.io/apimachinery/pkg/api/equality.Semantic":                     true,
	"(*k8s.io/apimachinery/pkg/apis/meta/v1.Time).Before":               true,
	"(*k8s.io/apimachinery/pkg/apis/meta/v1.Time).Equal":                true,
}

// readerPkgs only read their arguments: formatting, logging and comparing.
var readerPkgs = []string{"cmp", "fmt", "strings", "strconv", "errors", "github.com/go-logr/logr", "github.com/google/go-cmp/cmp"}

// readerMethods read their receiver, whatever its type (DeepCopyInto writes its argument).
var readerMethods = map[string]bool{"DeepCopy": true, "DeepCopyInto": true, "DeepCopyObject": true, "String": true,
	"IsZero": true, "Equal": true, "Before": true, "Unix": true, "DeepEqual": true}

// writers write through the argument at the index given, a slice or a map as well as a pointer.
var writers = map[string]int{
	"k8s.io/apimachinery/pkg/api/meta.SetStatusCondition":    0,
	"k8s.io/apimachinery/pkg/api/meta.RemoveStatusCondition": 0,
	"slices.Sort": 0, "slices.SortFunc": 0, "slices.SortStableFunc": 0, "slices.Reverse": 0, "slices.Delete": 0,
	"slices.DeleteFunc": 0, "slices.Compact": 0, "slices.CompactFunc": 0, "slices.Replace": 0, "slices.Insert": 0,
	"sort.Slice": 0, "sort.SliceStable": 0, "sort.Sort": 0, "sort.Stable": 0, "sort.Strings": 0, "sort.Ints": 0,
	"sort.Float64s": 0, "maps.Copy": 0, "maps.DeleteFunc": 0,
}

// aliasers return what points into their arguments; the other functions outside the loaded
// packages are taken to return values of their own (target.FromSnapshot copies, for one).
var aliasers = map[string]bool{
	"k8s.io/apimachinery/pkg/api/meta.FindStatusCondition": true,
	"cmp.Or":      true, // the first argument that is not zero
	"slices.Grow": true, "slices.Clip": true, "slices.Insert": true, "slices.Delete": true, "slices.DeleteFunc": true,
	"slices.Compact": true, "slices.CompactFunc": true, "slices.Replace": true,
}

// arg is one argument of a call (the receiver's index is -1), and what it may point into.
type arg struct {
	e     ast.Expr
	index int
	param *types.Var // in the callee's declaration; nil: not known
	o     origins
	ptr   bool // a pointer is passed: the callee can write what it points to
}

// args are call's arguments, its receiver first.
func (c *checker) args(call *ast.CallExpr, fn *types.Func) []arg {
	var out []arg
	var sig *types.Signature
	if fn != nil {
		sig = fn.Origin().Signature()
		if s, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			if sel := c.info.Selections[s]; sel != nil && sel.Kind() == types.MethodVal {
				_, ptr := fn.Signature().Recv().Type().Underlying().(*types.Pointer)
				out = append(out, arg{e: s.X, index: -1, param: sig.Recv(), o: c.recv(s.X, fn), ptr: ptr})
			}
		}
	}
	for i, e := range call.Args {
		a := arg{e: e, index: i, o: c.refs(e)}
		_, a.ptr = c.under(e).(*types.Pointer)
		if sig != nil && sig.Params().Len() > 0 {
			j := min(i, sig.Params().Len()-1)
			if j == i || sig.Variadic() {
				a.param = sig.Params().At(j)
			}
		}
		out = append(out, a)
	}
	return out
}

// callee is the function call calls, the abstract method for an interface's; nil for a func value.
func (c *checker) callee(call *ast.CallExpr) *types.Func {
	if fn := typeutil.StaticCallee(c.info, call); fn != nil {
		return fn
	}
	if s, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if sel := c.info.Selections[s]; sel != nil && sel.Kind() == types.MethodVal {
			return sel.Obj().(*types.Func)
		}
	}
	return nil
}

// call checks what call writes: builtins that write their first argument, loaded functions
// that write through a parameter, and other functions given a pointer.
func (c *checker) call(call *ast.CallExpr) {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		return // a conversion
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := c.info.Uses[id].(*types.Builtin); ok {
			switch b.Name() {
			case "append", "copy", "delete", "clear":
				c.sink(c.refs(call.Args[0]), call.Args[0], "passes to "+b.Name(), false)
			}
			return
		}
	}
	if c.composed[call] {
		return
	}
	fn := c.callee(call)
	for _, a := range c.args(call, fn) {
		switch {
		case fn != nil && c.bodies[fn.Origin()]:
			if a.param != nil && c.mutated[a.param] {
				c.sink(a.o, a.e, "passes to "+fn.Name()+", which writes it,", false)
			}
		case fn != nil && writerArg(fn) == a.index:
			c.sink(a.o, a.e, "passes to "+fn.Name()+", which writes it,", false)
		case a.ptr && !reads(fn, a.index):
			c.sink(a.o, a.e, "passes a pointer to "+name(fn)+", which may write it,", false)
		}
	}
}

func name(fn *types.Func) string {
	if fn == nil {
		return "a func value"
	}
	return fn.Name()
}

func writerArg(fn *types.Func) int {
	if i, ok := writers[fn.Origin().FullName()]; ok {
		return i
	}
	return -2
}

// reads says whether fn only reads its argument at index (-1: the receiver).
func reads(fn *types.Func, index int) bool {
	if fn == nil {
		return false
	}
	full := fn.Origin().FullName()
	if readers[full] || (index == -1 && readerMethods[fn.Name()]) {
		return true
	}
	if fn.Pkg() != nil {
		for _, p := range readerPkgs {
			if fn.Pkg().Path() == p || strings.HasPrefix(fn.Pkg().Path(), p+"/") {
				return true
			}
		}
	}
	return false
}

// callRefs is what call's result may point into.
func (c *checker) callRefs(call *ast.CallExpr) origins {
	var o origins
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		for _, a := range call.Args {
			o.add(c.refs(a))
		}
		return o
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := c.info.Uses[id].(*types.Builtin); ok {
			if b.Name() == "append" { // the first's array; the others' referents, if they are pointers
				o.add(c.refs(call.Args[0]))
				if sl, ok := c.under(call.Args[0]).(*types.Slice); ok && c.refsIn(sl.Elem()) {
					for _, a := range call.Args[1:] {
						o.add(c.refs(a))
					}
				}
			}
			return o
		}
	}
	fn := c.callee(call)
	args := c.args(call, fn)
	if fn == nil || !c.bodies[fn.Origin()] {
		if fn != nil && aliasers[fn.Origin().FullName()] {
			for _, a := range args {
				o.add(a.o)
			}
		}
		return o
	}
	// A loaded function returns what its summary says, its parameters replaced by the arguments.
	ret := c.returns[fn.Origin()]
	o.status = ret.status
	for v := range ret.params {
		bound := false
		for _, a := range args {
			if a.param == v {
				o.add(a.o)
				bound = true
			}
		}
		if !bound {
			o.addParam(v)
		}
	}
	return o
}
