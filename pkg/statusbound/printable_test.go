package statusbound

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// hostileText would act on the terminal of whoever reads the status with kubectl: it clears the
// screen, rewrites the line, reverses the text and is not UTF-8.
const hostileText = "\x1b[2J\x1b]0;pwned\x07ok\rFAILED\n\u202eSSAP\xff"

// fill sets every string the value holds (every field, one element of every list and map, and
// the map's key) to hostileText, and returns how many it set.
func fill(v reflect.Value, depth int) int {
	if depth > 16 {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fill(v.Elem(), depth+1)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += fill(v.Field(i), depth+1)
			}
		}
		return n
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return 0
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key := reflect.New(v.Type().Key()).Elem()
		val := reflect.New(v.Type().Elem()).Elem()
		n := fill(key, depth+1) + fill(val, depth+1)
		v.SetMapIndex(key, val)
		return n
	case reflect.String:
		v.SetString(hostileText)
		return 1
	}
	return 0
}

// unprintable lists the strings of v that hold a control character, a bidirectional control
// or invalid UTF-8, by path.
func unprintable(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return unprintable(v.Elem(), path)
		}
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, unprintable(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		var out []string
		for i := range v.Len() {
			out = append(out, unprintable(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Map:
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, unprintable(k, path+"{key}")...)
			out = append(out, unprintable(v.MapIndex(k), path+"{}")...)
		}
		return out
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool {
			return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
		}) {
			return []string{fmt.Sprintf("%s = %q", path, s)}
		}
	}
	return nil
}

// TestEveryStatusStringIsPrintable: whatever path a tenant's text takes into a status (a
// runner's last line, a pod's termination message, a check, metric, scenario or pattern name, a
// log sample), it is written printable: every string field of both statuses, filled with a
// hostile string, comes out of TestRun and Printable with none of it acting on a terminal.
// A field added later is filled and checked too.
func TestEveryStatusStringIsPrintable(t *testing.T) {
	var run v1alpha1.TestRunStatus
	if n := fill(reflect.ValueOf(&run).Elem(), 0); n < 100 {
		t.Fatalf("filled only %d strings of a TestRun status", n)
	}
	TestRun(&run)
	for _, bad := range unprintable(reflect.ValueOf(run), "status") {
		t.Errorf("TestRun: %s", bad)
	}

	var plan v1alpha1.CapacityPlanStatus
	if n := fill(reflect.ValueOf(&plan).Elem(), 0); n < 20 {
		t.Fatalf("filled only %d strings of a CapacityPlan status", n)
	}
	Printable(&plan)
	for _, bad := range unprintable(reflect.ValueOf(plan), "status") {
		t.Errorf("CapacityPlan: %s", bad)
	}
}

// TestPrintableKeepsWhatIsShown: escaping shows what was there, and printable text is left as is.
func TestPrintableKeepsWhatIsShown(t *testing.T) {
	st := v1alpha1.TestRunStatus{Message: hostileText, Results: &v1alpha1.Results{Warnings: []string{"p95 of checkout: 182 ms ✓"}}}
	Printable(&st)
	if want := `\x1b[2J\x1b]0;pwned\x07ok\rFAILED \u202eSSAP` + "\ufffd"; st.Message != want {
		t.Errorf("message = %q, want %q", st.Message, want)
	}
	if st.Results.Warnings[0] != "p95 of checkout: 182 ms ✓" {
		t.Errorf("printable text changed: %q", st.Results.Warnings[0])
	}
}
