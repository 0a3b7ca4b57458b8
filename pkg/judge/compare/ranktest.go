package compare

import (
	"math"
	"sort"
)

// The rank test: one-sided Mann-Whitney U (Wilcoxon rank-sum). It asks whether one sample is
// stochastically smaller than the other without assuming a distribution, which suits
// throughput and latency windows (skewed, with outliers) better than a t-test. It follows R's
// wilcox.test: the exact null distribution when both sides have fewer than exactN samples and
// there are no ties; otherwise the normal approximation with the tie-corrected variance and a
// continuity correction of 0.5.

// exactN bounds the exact distribution (R uses 50). Its polynomial has m·n+1 terms and takes
// O((m+n)·m·n) steps, about 250,000 at the bound.
const exactN = 50

// uStatistic is U of x against y: the number of pairs (x_i, y_j) with x_i > y_j, ties
// counting one half. R's W of wilcox.test(x, y) is the same number. It also returns whether
// any two values of the pooled sample are equal, and the tie term Σ(t³−t) over groups of
// equal values, for the variance.
func uStatistic(x, y []float64) (u float64, ties bool, tieTerm float64) {
	type obs struct {
		v   float64
		isX bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Mid-ranks: a group of equal values shares the mean of the ranks it spans.
	var rankSumX float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		t := float64(j - i)
		if t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].isX {
				rankSumX += mid
			}
		}
		i = j
	}
	m := float64(len(x))
	return rankSumX - m*(m+1)/2, ties, tieTerm
}

// pLess is the one-sided p-value of the alternative "x is stochastically smaller than y":
// P(U ≤ u) under the null hypothesis that both come from one distribution.
func pLess(x, y []float64) float64 { return pLessInflated(x, y, 1) }

// pLessInflated is pLess when the samples of each side are positively correlated with their
// neighbours, which makes U vary more than the independent-sample null says: the normal
// approximation's variance is multiplied by vif (≥ 1), and the p-value is never below the
// one the test gives for independent samples (so a small sample cannot pass for a large one).
func pLessInflated(x, y []float64, vif float64) float64 {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 1
	}
	u, ties, tieTerm := uStatistic(x, y)
	mf, nf := float64(m), float64(n)
	N := mf + nf
	variance := mf * nf / 12 * ((N + 1) - tieTerm/(N*(N-1)))
	if variance <= 0 { // every value equal: nothing says one side is smaller
		return 1
	}
	normal := func(v float64) float64 { return normalCDF((u - mf*nf/2 + 0.5) / math.Sqrt(v)) }
	var p float64
	if m < exactN && n < exactN && !ties {
		p = exactCDF(m, n, u)
	} else {
		p = normal(variance)
	}
	if vif > 1 {
		p = max(p, normal(variance*vif))
	}
	return p
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// exactCDF is P(U ≤ u) for m and n samples without ties. The number of arrangements with
// U = k is the coefficient of q^k of the Gaussian binomial [m+n choose m]_q, built as
// Π_{i=1..m} (1−q^(n+i)) / (1−q^i); every intermediate product is itself a Gaussian
// binomial, so its coefficients stay non-negative integers (exact in float64 up to 2^53,
// and within a relative 1e-16 above).
func exactCDF(m, n int, u float64) float64 {
	if m > n {
		m, n = n, m // U's distribution is symmetric in the two sizes
	}
	deg := m * n
	c := make([]float64, deg+1)
	c[0] = 1
	for i := 1; i <= m; i++ {
		// multiply by (1 − q^(n+i)): from the top down so each term reads the old one
		for k := deg; k >= n+i; k-- {
			c[k] -= c[k-n-i]
		}
		// divide by (1 − q^i): b_k = a_k + b_(k−i)
		for k := i; k <= deg; k++ {
			c[k] += c[k-i]
		}
	}
	var total, below float64
	for k, v := range c {
		total += v
		if float64(k) <= u+1e-9 {
			below += v
		}
	}
	return below / total
}

// smallestP is the smallest one-sided p-value the exact test can give with m and n samples:
// every sample of one side below every sample of the other, 1 / C(m+n, m).
func smallestP(m, n int) float64 {
	if m == 0 || n == 0 {
		return 1
	}
	// C(m+n, m) as a product; rounded while it is an exactly representable integer, so that
	// 1/C(6,3) is 0.05 exactly and 3 a side is correctly too few at alpha 0.05
	k, big := min(m, n), max(m, n)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(big+i) / float64(i)
		if c < 1<<53 {
			c = math.Round(c)
		}
	}
	return 1 / c
}

// SamplesNeeded is the smallest k such that k a side can reach p < alpha: at Alpha, the
// repetitions a side a CapacityPlan's comparison needs to judge a cell at all (4).
func SamplesNeeded(alpha float64) int {
	for k := 1; ; k++ {
		if smallestP(k, k) < alpha {
			return k
		}
	}
}
