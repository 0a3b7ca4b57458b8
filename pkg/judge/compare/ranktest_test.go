package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// R's own example of wilcox.test (?wilcox.test; Hollander & Wolfe 1973, p. 69f, permeability
// constants of the human chorioamnion):
//
//	x <- c(0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46)
//	y <- c(1.15, 0.88, 0.90, 0.74, 1.21)
//	wilcox.test(x, y, alternative = "g")  # W = 35, p-value = 0.1272
func TestRankTestMatchesRWilcoxExample(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	u, ties, _ := uStatistic(x, y)
	if u != 35 || ties {
		t.Fatalf("U = %v (ties %v), want R's W = 35 without ties", u, ties)
	}
	// "x greater than y" is "y less than x"
	if p := pLess(y, x); math.Abs(p-0.1272) > 0.00005 {
		t.Fatalf("p = %.5f, want R's 0.1272", p)
	}
}

// Mann and Whitney (1947), Table I: P(U ≤ u) for the smaller sample size n1 and n2.
func TestExactDistributionMatchesMannWhitneyTable(t *testing.T) {
	cases := []struct {
		m, n int
		want []float64 // u = 0, 1, 2, ...
	}{
		{3, 3, []float64{0.050, 0.100, 0.200, 0.350, 0.500}},
		{4, 4, []float64{0.014, 0.029, 0.057, 0.100, 0.171, 0.243, 0.343, 0.443}},
		{3, 5, []float64{0.018, 0.036, 0.071, 0.125, 0.196, 0.286, 0.393}},
	}
	for _, c := range cases {
		for u, want := range c.want {
			if got := exactCDF(c.m, c.n, float64(u)); math.Abs(got-want) > 0.0005 {
				t.Errorf("P(U ≤ %d | %d, %d) = %.4f, table %.3f", u, c.m, c.n, got, want)
			}
			if got, swapped := exactCDF(c.m, c.n, float64(u)), exactCDF(c.n, c.m, float64(u)); got != swapped {
				t.Errorf("P(U ≤ %d) depends on the order of the sizes: %v vs %v", u, got, swapped)
			}
		}
	}
}

// With ties R switches to the normal approximation with the tie-corrected variance
// mn/12·((N+1) − Σ(t³−t)/(N(N−1))) and a continuity correction of 0.5. By hand for
// wilcox.test(c(1,2,2), c(2,3,4,5), alternative = "less", exact = FALSE): mid-ranks of x are
// 1, 3, 3, so W = 7 − 6 = 1; one tie of 3 gives Σ = 24; var = 8 − 24/42 = 7.428571;
// z = (1 − 6 + 0.5)/√7.428571 = −1.651067; p = Φ(z) = 0.04936.
func TestRankTestTieCorrection(t *testing.T) {
	x, y := []float64{1, 2, 2}, []float64{2, 3, 4, 5}
	u, ties, tieTerm := uStatistic(x, y)
	if u != 1 || !ties || tieTerm != 24 {
		t.Fatalf("U %v ties %v Σ(t³−t) %v, want 1 true 24", u, ties, tieTerm)
	}
	if p := pLess(x, y); math.Abs(p-0.04936) > 0.00001 {
		t.Fatalf("p = %.5f, want 0.04936", p)
	}
	if p := pLess([]float64{3, 3, 3}, []float64{3, 3, 3, 3}); p != 1 {
		t.Fatalf("all values equal: p = %v, want 1 (nothing is smaller)", p)
	}
}

// Just below R's bound for the exact test the two methods must agree: the normal
// approximation takes over at 50 a side.
func TestNormalApproximationAgreesWithExactNearTheBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20 {
		x, y := make([]float64, 45), make([]float64, 45)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()+0.3
		}
		u, _, _ := uStatistic(x, y)
		exact := exactCDF(45, 45, u)
		normal := normalCDF((u - 45*45/2.0 + 0.5) / math.Sqrt(45*45*91/12.0))
		if math.Abs(exact-normal) > 0.003 {
			t.Fatalf("U %v: exact %.5f, normal %.5f", u, exact, normal)
		}
	}
}

// 3 a side cannot reach p < 0.05 one-sided (the smallest p is 1/C(6,3) = 0.05); 4 can (1/70).
func TestSmallestPAndSamplesNeeded(t *testing.T) {
	if p := smallestP(3, 3); math.Abs(p-0.05) > 1e-9 {
		t.Fatalf("smallest p 3 vs 3 = %v, want 0.05", p)
	}
	if p := smallestP(4, 4); math.Abs(p-1.0/70) > 1e-9 {
		t.Fatalf("smallest p 4 vs 4 = %v, want 1/70", p)
	}
	if k := SamplesNeeded(0.05); k != 4 {
		t.Fatalf("samples needed = %d, want 4", k)
	}
	if p := pLess([]float64{1, 2, 3}, []float64{4, 5, 6}); math.Abs(p-0.05) > 1e-9 {
		t.Fatalf("complete separation 3 vs 3: p = %v, want 0.05", p)
	}
}

// Adjacent block means of an AR(1) series stay correlated; the variance inflation follows
// from the model (by hand for phi 0.5, b 3: cov 1.53125, var 5.5, corr 0.27841,
// vif = 1 + 2·0.27841/(1 − 0.125) = 1.63636).
func TestBlockVIF(t *testing.T) {
	if v := blockVIF(0.5, 3); math.Abs(v-1.63636) > 0.0001 {
		t.Fatalf("vif(0.5, 3) = %v, want 1.63636", v)
	}
	if v := blockVIF(0, 5); v != 1 {
		t.Fatalf("vif without autocorrelation = %v, want 1", v)
	}
	x, y := []float64{1, 2, 3, 4, 5, 6}, []float64{5, 6, 7, 8, 9, 10}
	if plain, inflated := pLess(x, y), pLessInflated(x, y, 1.6); inflated <= plain {
		t.Fatalf("inflated p %v not above independent p %v", inflated, plain)
	}
}
