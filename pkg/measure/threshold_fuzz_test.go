package measure

import (
	"math"
	"regexp"
	"testing"
)

// FuzzParseThreshold: any text either parses into a threshold that is judged without panicking
// and whose parts are in range, or is refused with a message; the parser and the CRD's pattern
// (ThresholdExpressionPattern, which admission applies) never disagree.
func FuzzParseThreshold(f *testing.F) {
	for _, seed := range []string{"p(95)<200", "rate<0.01", "avg<=150", "count==180", "p(99.9) >= 1e3", "p(100)<1", "max!=-.5",
		"p(101)<1", "p(95)<", "value===0", " med > +3.0e-2 ", "p(9.)<1", "1e999<", "rate<1e999"} {
		f.Add(seed)
	}
	pattern := regexp.MustCompile(ThresholdExpressionPattern)
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := ParseThreshold(expr)
		matches := pattern.MatchString(expr)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			if matches {
				t.Fatalf("%q matches the CRD pattern (admitted) but the parser refuses it: %v", expr, err)
			}
			return
		}
		if !matches {
			t.Fatalf("%q parsed but the CRD pattern refuses it", expr)
		}
		if th.Method == "p" && (th.Percentile < 0 || th.Percentile > 100) {
			t.Fatalf("%q: percentile %v outside 0..100", expr, th.Percentile)
		}
		// Judged like k6's JavaScript: NaN compares false but for !=, and the expression's own
		// value meets exactly the operators that include equality.
		if th.Passes(math.NaN()) != (th.Operator == "!=") {
			t.Fatalf("%q on NaN: passes %v", expr, th.Passes(math.NaN()))
		}
		if equalish := th.Operator == "==" || th.Operator == "===" || th.Operator == "<=" || th.Operator == ">="; equalish != th.Passes(th.Value) && !math.IsInf(th.Value, 0) {
			t.Fatalf("%q on its own value %v: passes %v", expr, th.Value, th.Passes(th.Value))
		}
	})
}
