package sizing

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// The Universal Scalability Law (Gunther, "Guerrilla Capacity Planning", 2007) in the
// three-parameter form of the R usl package (>= 2.0):
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// λ is the throughput of one unit of load, σ the contention (the serial fraction, Amdahl) and κ
// the coherency delay (the cost of keeping N parties consistent, which makes throughput fall past
// a peak). The R package fits with nls "port" bounded to 0 <= σ, κ <= 1; this fit is unbounded on
// purpose, so that a negative σ or κ shows up and is flagged instead of being pinned to 0. On data
// where R's bounds are not active (the published examples) the two agree.

// Point is one load level and the throughput measured at it.
type Point struct{ N, X float64 }

// Estimate is a fitted parameter with its standard error and 95 % confidence interval, from the t
// distribution with n−3 degrees of freedom. With exactly 3 points there is no error estimate:
// StdErr is +Inf and the interval (−Inf, +Inf).
type Estimate struct{ Value, StdErr, Low, High float64 }

// USLFit is the result of FitUSL.
type USLFit struct {
	Lambda, Sigma, Kappa Estimate
	// ResidualSE is sqrt(RSS/(n−3)), in throughput units; 0 with 3 points.
	ResidualSE float64
	Points     int
	// PeakN is the load of peak throughput, sqrt((1−σ)/κ); 0 when the fit has no peak (κ <= 0 or
	// σ >= 1), with the reason in Untrusted.
	PeakN float64
	// PeakX is the predicted throughput at PeakN; 0 without a peak.
	PeakX float64
	// Trusted is true when Untrusted is empty.
	Trusted bool
	// Untrusted lists each reason not to trust the fit, in words a planner reads.
	Untrusted []string
}

// minLevelsTrusted is 1 low plus 4 higher load levels: with 3 parameters, fewer leaves the fit
// nearly exact and its intervals meaningless.
const minLevelsTrusted = 5

// FitUSL fits the USL to the points by nonlinear least squares (Levenberg–Marquardt with
// Marquardt's diagonal scaling), starting from λ = X/N at the smallest N and σ, κ from the
// linearised model N·λ/X − 1 = σ(N−1) + κN(N−1). Standard errors come from s²·(JᵀJ)⁻¹ at the
// optimum, as R's nls and usl report them. It returns an error only when no fit is possible:
// fewer than 3 points or 3 distinct load levels, a load or throughput that is not positive and
// finite, or no convergence. A fit that is possible but doubtful is returned with Trusted false.
func FitUSL(points []Point) (USLFit, error) {
	if len(points) < 3 {
		return USLFit{}, fmt.Errorf("USL fit needs at least 3 points, got %d", len(points))
	}
	levels := map[float64]bool{}
	for _, p := range points {
		if !(p.N > 0) || !(p.X > 0) || math.IsInf(p.N, 0) || math.IsInf(p.X, 0) {
			return USLFit{}, fmt.Errorf("USL fit needs positive, finite load and throughput, got N=%v X=%v", p.N, p.X)
		}
		levels[p.N] = true
	}
	if len(levels) < 3 {
		return USLFit{}, fmt.Errorf("USL fit needs at least 3 distinct load levels, got %d", len(levels))
	}
	par, rss, err := levenbergMarquardt(points, startUSL(points))
	if err != nil {
		return USLFit{}, err
	}
	f := USLFit{Points: len(points)}
	f.Lambda.Value, f.Sigma.Value, f.Kappa.Value = par[0], par[1], par[2]
	df := len(points) - 3
	if df == 0 {
		for _, e := range []*Estimate{&f.Lambda, &f.Sigma, &f.Kappa} {
			e.StdErr, e.Low, e.High = math.Inf(1), math.Inf(-1), math.Inf(1)
		}
	} else {
		s2 := rss / float64(df)
		f.ResidualSE = math.Sqrt(s2)
		cov, ok := invertScaled(normalMatrix(points, par))
		if !ok {
			return USLFit{}, errors.New("USL fit: the parameters cannot be told apart on these points (singular Jacobian)")
		}
		tq := StudentTQuantile(0.975, float64(df))
		for i, e := range []*Estimate{&f.Lambda, &f.Sigma, &f.Kappa} {
			e.StdErr = math.Sqrt(s2 * cov[i][i])
			e.Low, e.High = e.Value-tq*e.StdErr, e.Value+tq*e.StdErr
		}
	}
	if f.Kappa.Value > 0 && f.Sigma.Value < 1 {
		f.PeakN = math.Sqrt((1 - f.Sigma.Value) / f.Kappa.Value)
		f.PeakX = f.Predict(f.PeakN)
	}
	f.Untrusted = untrustedReasons(f, len(levels), maxN(points))
	f.Trusted = len(f.Untrusted) == 0
	return f, nil
}

func untrustedReasons(f USLFit, levels int, largest float64) []string {
	var r []string
	if levels < minLevelsTrusted {
		r = append(r, fmt.Sprintf("only %d load levels: a fit needs 1 low and at least 4 higher load levels", levels))
	}
	if f.Points == 3 {
		r = append(r, "3 points: no error estimate (no degrees of freedom left)")
	}
	if f.Sigma.Value < 0 {
		r = append(r, "σ < 0: contention cannot be negative; throughput grew faster than linear, often a warm-up or a limit elsewhere at low load")
	}
	if f.Kappa.Value < 0 {
		r = append(r, "κ < 0: coherency cannot be negative; the curve bends upward")
	}
	if f.PeakN == 0 {
		r = append(r, "no peak: with κ ≤ 0 or σ ≥ 1 the model predicts no maximum throughput")
	}
	if f.Points > 3 {
		for _, e := range []struct {
			name string
			est  Estimate
		}{{"λ", f.Lambda}, {"σ", f.Sigma}, {"κ", f.Kappa}} {
			if e.est.Low <= 0 && e.est.High >= 0 {
				r = append(r, e.name+"'s interval spans 0")
			}
		}
	}
	if f.PeakN > 2*largest {
		r = append(r, fmt.Sprintf("the peak (N ≈ %.3g) lies beyond twice the largest load measured (%g): an extrapolation", f.PeakN, largest))
	}
	return r
}

// Predict is the fitted throughput at load n; 0 for n <= 0 or where the model's denominator is
// not positive (a negative σ or κ far outside the data).
func (f USLFit) Predict(n float64) float64 {
	return uslX([3]float64{f.Lambda.Value, f.Sigma.Value, f.Kappa.Value}, n)
}

func uslX(p [3]float64, n float64) float64 {
	d := 1 + p[1]*(n-1) + p[2]*n*(n-1)
	if !(n > 0) || !(d > 0) {
		return 0
	}
	return p[0] * n / d
}

func maxN(points []Point) float64 {
	m := 0.0
	for _, p := range points {
		m = math.Max(m, p.N)
	}
	return m
}

// startUSL is λ from the smallest load (mean X/N there) and σ, κ from the linearised model,
// fitted through the origin by least squares. A start that makes the model undefined at a
// measured point falls back to σ = κ = 0 (linear scaling).
func startUSL(points []Point) [3]float64 {
	ps := append([]Point(nil), points...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].N < ps[j].N })
	var lambda float64
	k := 0
	for _, p := range ps {
		if p.N != ps[0].N {
			break
		}
		lambda += p.X / p.N
		k++
	}
	lambda /= float64(k)
	// y = σ·a + κ·b with a = N−1, b = N(N−1): normal equations of the 2-column regression.
	var saa, sab, sbb, say, sby float64
	for _, p := range ps {
		a, b, y := p.N-1, p.N*(p.N-1), lambda*p.N/p.X-1
		saa, sab, sbb, say, sby = saa+a*a, sab+a*b, sbb+b*b, say+a*y, sby+b*y
	}
	det := saa*sbb - sab*sab
	start := [3]float64{lambda, 0, 0}
	if det != 0 && !math.IsNaN(det) {
		start[1], start[2] = (say*sbb-sby*sab)/det, (saa*sby-sab*say)/det
	}
	if rss(points, start) == math.Inf(1) {
		start[1], start[2] = 0, 0
	}
	return start
}

// rss is the residual sum of squares, +Inf where the model is undefined at a measured point.
func rss(points []Point, p [3]float64) float64 {
	s := 0.0
	for _, q := range points {
		if d := 1 + p[1]*(q.N-1) + p[2]*q.N*(q.N-1); !(d > 0) {
			return math.Inf(1)
		}
		r := q.X - uslX(p, q.N)
		s += r * r
	}
	return s
}

// jacobianRow is ∂X/∂(λ, σ, κ) at load n.
func jacobianRow(p [3]float64, n float64) [3]float64 {
	d := 1 + p[1]*(n-1) + p[2]*n*(n-1)
	g := -p[0] * n / (d * d)
	return [3]float64{n / d, g * (n - 1), g * n * (n - 1)}
}

func normalMatrix(points []Point, p [3]float64) [3][3]float64 {
	var a [3][3]float64
	for _, q := range points {
		j := jacobianRow(p, q.N)
		for r := range 3 {
			for c := range 3 {
				a[r][c] += j[r] * j[c]
			}
		}
	}
	return a
}

const maxIterations = 2000

// levenbergMarquardt minimises rss from start. Each step solves (A + μI)y = D⁻¹Jᵀr with A the
// normal matrix scaled to a unit diagonal (D = sqrt(diag JᵀJ)), so that λ (tens or thousands)
// and κ (around 1e-4) are on one footing; δ = D⁻¹y.
func levenbergMarquardt(points []Point, p [3]float64) ([3]float64, float64, error) {
	cur := rss(points, p)
	scale := 0.0
	for _, q := range points {
		scale += q.X * q.X
	}
	mu := 1e-3
	for range maxIterations {
		if cur <= 1e-28*scale {
			return p, cur, nil // exact data
		}
		a := normalMatrix(points, p)
		var g [3]float64
		for _, q := range points {
			j, r := jacobianRow(p, q.N), q.X-uslX(p, q.N)
			for i := range 3 {
				g[i] += j[i] * r
			}
		}
		var d [3]float64
		for i := range 3 {
			d[i] = math.Sqrt(a[i][i])
			if d[i] == 0 {
				return p, cur, errors.New("USL fit: a parameter has no effect on these points")
			}
		}
		for mu <= 1e20 {
			var m [3][3]float64
			var rhs [3]float64
			for i := range 3 {
				for k := range 3 {
					m[i][k] = a[i][k] / (d[i] * d[k])
				}
				m[i][i] += mu
				rhs[i] = g[i] / d[i]
			}
			y, ok := solve3(m, rhs)
			if !ok {
				mu *= 10
				continue
			}
			next := p
			for i := range 3 {
				next[i] += y[i] / d[i]
			}
			nr := rss(points, next)
			if nr < cur {
				small := true
				for i := range 3 {
					if math.Abs(next[i]-p[i]) > 1e-10*math.Max(math.Abs(p[i]), 1e-12) {
						small = false
					}
				}
				improved := (cur - nr) / cur
				p, cur = next, nr
				mu = math.Max(mu/10, 1e-12)
				if small || improved < 1e-14 {
					return p, cur, nil
				}
				break
			}
			mu *= 10
		}
		if mu > 1e20 {
			// No step in any direction lowers the sum of squares: a minimum, to float precision.
			return p, cur, nil
		}
	}
	return p, cur, fmt.Errorf("USL fit did not converge in %d iterations", maxIterations)
}

// solve3 solves m·x = b by Gaussian elimination with partial pivoting.
func solve3(m [3][3]float64, b [3]float64) ([3]float64, bool) {
	for col := range 3 {
		piv := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		if m[piv][col] == 0 || math.IsNaN(m[piv][col]) {
			return b, false
		}
		m[col], m[piv] = m[piv], m[col]
		b[col], b[piv] = b[piv], b[col]
		for r := col + 1; r < 3; r++ {
			f := m[r][col] / m[col][col]
			for c := col; c < 3; c++ {
				m[r][c] -= f * m[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < 3; c++ {
			s -= m[r][c] * x[c]
		}
		x[r] = s / m[r][r]
	}
	return x, true
}

// invertScaled inverts a symmetric positive definite 3×3 matrix after scaling it to a unit
// diagonal, which keeps the badly scaled USL normal matrix (entries from 1 to 1e10) well
// conditioned enough for float64.
func invertScaled(a [3][3]float64) ([3][3]float64, bool) {
	var d [3]float64
	for i := range 3 {
		if !(a[i][i] > 0) {
			return a, false
		}
		d[i] = math.Sqrt(a[i][i])
	}
	var m, inv [3][3]float64
	for i := range 3 {
		for k := range 3 {
			m[i][k] = a[i][k] / (d[i] * d[k])
		}
	}
	for col := range 3 {
		var e [3]float64
		e[col] = 1
		x, ok := solve3(m, e)
		if !ok {
			return inv, false
		}
		for r := range 3 {
			inv[r][col] = x[r] / (d[r] * d[col])
		}
	}
	return inv, true
}
