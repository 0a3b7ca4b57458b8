package sizing

import (
	"math"
	"testing"
)

// TestStudentTQuantile checks against the standard table of two-sided critical values (any
// statistics text, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2, "Critical values of the Student's t
// distribution"), to the table's 3 decimals.
func TestStudentTQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706},
		{0.975, 2, 4.303},
		{0.975, 3, 3.182},
		{0.975, 4, 2.776},
		{0.975, 5, 2.571},
		{0.975, 8, 2.306},
		{0.975, 10, 2.228},
		{0.975, 30, 2.042},
		{0.975, 100, 1.984},
		{0.95, 5, 2.015},
		{0.95, 10, 1.812},
		{0.995, 4, 4.604},
		{0.025, 5, -2.571},
	} {
		if got := StudentTQuantile(c.p, c.df); math.Abs(got-c.want) > 0.0005 {
			t.Errorf("t(%v, %v) = %.4f, table %.3f", c.p, c.df, got, c.want)
		}
	}
	if !math.IsNaN(StudentTQuantile(0.975, 0)) || !math.IsNaN(StudentTQuantile(1, 5)) {
		t.Error("no quantile without degrees of freedom or at p = 1")
	}
	// df = 1 is the Cauchy distribution: CDF(t) = 1/2 + atan(t)/π exactly.
	for _, x := range []float64{-3, -0.5, 0, 0.7, 10} {
		if got, want := StudentTCDF(x, 1), 0.5+math.Atan(x)/math.Pi; math.Abs(got-want) > 1e-12 {
			t.Errorf("Cauchy CDF(%v) = %v, want %v", x, got, want)
		}
	}
}
