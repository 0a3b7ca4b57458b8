package shift

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// E-Divisive means (Matteson & James 2014, "A nonparametric approach for multiple change point
// analysis of multivariate data", JASA 109(505)), for one series with α = 1: the divergence of
// two segments X (m values) and Y (n values) is
//
//	Ê = 2/(mn) Σ|x−y| − 1/C(m,2) Σ|x−x'| − 1/C(n,2) Σ|y−y'|
//
// and the candidate split of a segment is the τ maximising q̂ = mn/(m+n) · Ê, with Y running to
// the segment's end. Divisive: the segment whose best split has the largest q̂ is tested; if
// significant it is cut there and the search goes on, else it stops.

// split is a segment's best split: tau indexes the segment, q is its q̂.
type split struct {
	tau int
	q   float64
}

// bestSplit is z's split maximising q̂, with at least minSize values each side; tau is 0 when z
// is too short. O(len(z)²): the within-sums move by one row per step of τ.
func bestSplit(z []float64, minSize int) split {
	n := len(z)
	if n < 2*minSize {
		return split{}
	}
	total := 0.0
	for i := range z {
		for k := i + 1; k < n; k++ {
			total += math.Abs(z[i] - z[k])
		}
	}
	best := split{}
	left, right := 0.0, total // within-left and within-right sums for τ = 0
	for tau := 1; tau <= n-minSize; tau++ {
		x := z[tau-1] // moves from right to left
		for i := 0; i < tau-1; i++ {
			left += math.Abs(z[i] - x)
		}
		for k := tau; k < n; k++ {
			right -= math.Abs(x - z[k])
		}
		if tau < minSize {
			continue
		}
		m, r := float64(tau), float64(n-tau)
		cross := total - left - right
		e := 2 * cross / (m * r)
		if tau > 1 {
			e -= left / (m * (m - 1) / 2)
		}
		if n-tau > 1 {
			e -= right / (r * (r - 1) / 2)
		}
		if q := m * r / (m + r) * e; best.tau == 0 || q > best.q {
			best = split{tau: tau, q: q}
		}
	}
	return best
}

// permutationP is the candidate's p-value: the share of R random reorderings of z whose best
// split scores at least q, counting the observed order, (k+1)/(R+1). It stops as soon as the
// p-value cannot come under alpha (the candidate is refused whatever the rest would show), so
// a refused candidate costs a fraction of R.
func permutationP(z []float64, q float64, minSize, permutations int, alpha float64) float64 {
	rng := rand.New(rand.NewPCG(seedOf(z), uint64(minSize)))
	perm := append([]float64(nil), z...)
	atLeast := 0
	limit := alpha * float64(permutations+1) // refused once atLeast+1 > limit
	for r := 1; r <= permutations; r++ {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if bestSplit(perm, minSize).q >= q {
			atLeast++
			if float64(atLeast+1) > limit {
				return float64(atLeast+1) / float64(r+1)
			}
		}
	}
	return float64(atLeast+1) / float64(permutations+1)
}

// tTestP is the two-sided p-value of Student's two-sample t-test (pooled variance) of z[:tau]
// against z[tau:], the significance test Otava uses in place of the paper's permutations.
func tTestP(z []float64, tau int) float64 {
	a, b := z[:tau], z[tau:]
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	df := na + nb - 2
	if df < 1 {
		return 1
	}
	pooled := ((na-1)*va + (nb-1)*vb) / df
	se := math.Sqrt(pooled * (1/na + 1/nb))
	if se == 0 {
		if ma == mb {
			return 1
		}
		return 0
	}
	t := math.Abs(ma-mb) / se
	return 2 * (1 - sizing.StudentTCDF(t, df))
}

func meanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// seedOf hashes the values, so the same series always draws the same permutations.
func seedOf(z []float64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(len(z)))
	_, _ = h.Write(buf[:])
	for _, x := range z {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
		_, _ = h.Write(buf[:])
	}
	return h.Sum64()
}

// divide is E-Divisive over z: the accepted splits (indices into z, ascending) with their
// p-values. At most maxPoints are accepted.
func divide(z []float64, o Options) (cuts []int, ps map[int]float64) {
	ps = map[int]float64{}
	bounds := []int{0, len(z)}
	best := map[int]split{} // by segment start
	for len(cuts) < maxPointsPerWindow {
		var at, from, to int
		var cand split
		for i := 0; i+1 < len(bounds); i++ {
			lo, hi := bounds[i], bounds[i+1]
			s, ok := best[lo]
			if !ok {
				s = bestSplit(z[lo:hi], o.MinSegment)
				best[lo] = s
			}
			if s.tau > 0 && (cand.tau == 0 || s.q > cand.q) {
				cand, at, from, to = s, i, lo, hi
			}
		}
		if cand.tau == 0 {
			break
		}
		seg := z[from:to]
		var p float64
		if o.Test == TTest {
			p = tTestP(seg, cand.tau)
		} else {
			p = permutationP(seg, cand.q, o.MinSegment, o.Permutations, o.PValue)
		}
		if p > o.PValue {
			break
		}
		cut := from + cand.tau
		cuts = append(cuts, cut)
		ps[cut] = p
		bounds = append(bounds[:at+1], append([]int{cut}, bounds[at+1:]...)...)
		delete(best, from)
	}
	return cuts, ps
}
