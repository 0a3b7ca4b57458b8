package sizing

import "math"

// StudentTQuantile is the p-quantile of Student's t distribution with df degrees of freedom
// (StudentTQuantile(0.975, 5) = 2.5706). It inverts StudentTCDF by bisection: 200 halvings are far
// more than float64 needs, and the CDF is monotone, so this cannot fail to converge. NaN for
// df <= 0 or p outside (0, 1).
func StudentTQuantile(p, df float64) float64 {
	if !(df > 0) || !(p > 0 && p < 1) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		lo, hi = hi, hi*2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-15*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// StudentTCDF is P(T <= t) for Student's t with df degrees of freedom, through the regularised
// incomplete beta function: P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2).
func StudentTCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	tail := 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), by the continued fraction of
// Numerical Recipes (betacf, modified Lentz), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where
// the fraction converges faster.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step is one term of Lentz's method: the factor it multiplies the fraction by.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
