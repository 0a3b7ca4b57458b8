package sizing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// BenchmarkUSLPeakError measures how well FitUSL finds the peak on synthetic data with a known
// answer: λ = 100, σ = 0.05, κ = 0.001 (true peak N* = sqrt(0.95/0.001) = 30.82), load levels
// evenly spread over N = 1 .. 2·N*, throughput times (1 + 0.05·z) with z standard normal (5 %
// multiplicative noise), seeded, 1000 trials per point count. It reports the median and 90th
// percentile of |predicted peak N − N*| / N*, and the fraction of trials with no usable peak
// (fit error, or κ ≤ 0); those count as an infinite error in the percentiles.
//
//	go test ./pkg/judge/sizing/ -run '^$' -bench BenchmarkUSLPeakError -benchtime 1x
func BenchmarkUSLPeakError(b *testing.B) {
	const lambda, sigma, kappa, noise, trials = 100.0, 0.05, 0.001, 0.05, 1000
	peak := math.Sqrt((1 - sigma) / kappa)
	for _, k := range []int{5, 7, 10} {
		b.Run(fmt.Sprintf("points=%d", k), func(b *testing.B) {
			var errs []float64
			var untrusted int
			for range b.N {
				rng := rand.New(rand.NewPCG(27, uint64(k)))
				errs, untrusted = errs[:0], 0
				for range trials {
					ps := make([]Point, k)
					for i := range ps {
						n := 1 + float64(i)*(2*peak-1)/float64(k-1)
						x := lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
						ps[i] = Point{n, x * (1 + noise*rng.NormFloat64())}
					}
					f, err := FitUSL(ps)
					if err != nil || f.PeakN == 0 {
						errs = append(errs, math.Inf(1))
						untrusted++
						continue
					}
					if !f.Trusted {
						untrusted++
					}
					errs = append(errs, math.Abs(f.PeakN-peak)/peak)
				}
			}
			sort.Float64s(errs)
			nopeak := 0
			for _, e := range errs {
				if math.IsInf(e, 1) {
					nopeak++
				}
			}
			b.ReportMetric(errs[len(errs)/2]*100, "median-err-%")
			b.ReportMetric(errs[len(errs)*9/10]*100, "p90-err-%")
			b.ReportMetric(float64(nopeak)/trials*100, "no-peak-%")
			b.ReportMetric(float64(untrusted)/trials*100, "untrusted-%")
		})
	}
}
