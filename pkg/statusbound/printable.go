package statusbound

import (
	"reflect"

	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// Printable makes every string of v, a pointer to a status, one printable line
// (textsafe.Line: control characters, terminal escapes and newlines shown escaped, invalid
// UTF-8 replaced), in place. Tenants wrote most of a status (check, metric, scenario and
// pattern names, log samples, messages quoting what a pod or runner said), and whoever reads it
// with kubectl reads it on a terminal. Every string is walked, so a field added later is
// covered without a word here; text already printable is left as it is.
func Printable(v any) { printable(reflect.ValueOf(v)) }

func printable(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			printable(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				printable(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, not text
		}
		for i := range v.Len() {
			printable(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(v.MapIndex(k))
			printable(val)
			key := reflect.New(k.Type()).Elem()
			key.Set(k)
			printable(key)
			if !key.Equal(k) {
				v.SetMapIndex(k, reflect.Value{})
			}
			v.SetMapIndex(key, val)
		}
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if clean := textsafe.Line(s); clean != s {
				v.SetString(clean)
			}
		}
	}
}
