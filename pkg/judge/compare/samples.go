package compare

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// Kind says what the samples of a side are, which decides whether they are blocked.
type Kind int

const (
	// Windows are adjacent windows over time of one run. Neighbours are correlated (a slow
	// minute is followed by another), so a test that took them as independent would see
	// noise as signal; they are averaged in blocks of adjacent windows first.
	Windows Kind = iota
	// Repetitions are independent runs of one test (CapacityPlan repetitions): tested as
	// they are.
	Repetitions
)

func (k Kind) String() string {
	if k == Repetitions {
		return "repetitions"
	}
	return "windows"
}

const (
	// Alpha is the significance level of the one-sided test.
	Alpha = 0.05
	// maxSamples bounds the samples a side: beyond it adjacent ones are merged (averaged),
	// so a hostile or very long record costs bounded work.
	maxSamples = 4096
	// maxBlocks bounds the blocks a side the test and the bootstrap see; more would only
	// add work, the test is already as sharp as the data allows.
	maxBlocks = 512
	// maxAutocorrelation caps the estimated lag-1 autocorrelation, so a block is at most
	// (1+0.9)/(1−0.9) = 19 windows long.
	maxAutocorrelation = 0.9
	// blockFactor multiplies the integrated autocorrelation time τ = (1+ρ)/(1−ρ) of an AR(1)
	// series to get the block length. Longer blocks leave less correlation between block
	// means but fewer blocks: at 2τ, 30 windows with ρ ≈ 0.5 often left fewer than 4 blocks
	// a side and no decision. One τ keeps the blocks; the correlation left between them is
	// accounted for by blockVIF (see BenchmarkDecisionRates).
	blockFactor = 1
	// minBlocks a side are kept when the windows allow it.
	minBlocks = 8
	// bootstrapResamples of the block means give the 95 % interval of the ratio.
	bootstrapResamples = 1000
)

// TestResult is the outcome of the test of one metric's samples.
type TestResult struct {
	// BaselineN and CurrentN count the usable samples (finite and ≥ 0) before blocking.
	BaselineN, CurrentN int
	// Dropped counts samples that were NaN, infinite or negative.
	Dropped int
	// BlockLen is the number of adjacent samples averaged into one block (1 for repetitions).
	BlockLen int
	// BaselineBlocks and CurrentBlocks are the samples the test saw.
	BaselineBlocks, CurrentBlocks int
	// Autocorrelation is the estimated lag-1 autocorrelation of the windows (0 for repetitions).
	Autocorrelation float64
	// P is the one-sided p-value of "current is worse than the success edge" (the baseline
	// times Edges.Success) in the metric's direction.
	P float64
	// POK is the one-sided p-value of "current is worse than the ok edge" (the baseline times
	// Edges.OK): a regression is a run significantly beyond the ok band, not a run that is
	// significantly worse at all and happens to have its mean beyond the band. Two runs of one
	// release differ by a few % from run to run (CPU frequency, neighbours, cache), which the
	// windows within one run cannot show; tested against the baseline itself, such a drift of a
	// small figure (15 → 18 millicores) read as a regression.
	POK float64
	// CILow and CIHigh bound the ratio mean(current)/mean(baseline) in %, at 95 %, from a
	// seeded bootstrap of the blocks. NaN when the baseline's mean is 0.
	CILow, CIHigh float64
	// MinP is the smallest p-value the test can give with these blocks (every block of one
	// side beyond every block of the other): what a family's correction can ask of it.
	MinP float64
	// TooFew is set when the test cannot reach p < Alpha with this many blocks; Note says
	// how many it needs.
	TooFew bool
	Note   string
}

// Edges are a metric's band edges as fractions of the baseline (1.2 is a 120 % edge).
type Edges struct{ Success, OK float64 }

// BaselineEdges test against the baseline itself at both edges.
var BaselineEdges = Edges{Success: 1, OK: 1}

// Test tests whether current is worse than baseline times each of edges, in direction dir.
// It is deterministic: the bootstrap's seed is a hash of the inputs.
func Test(baseline, current []float64, kind Kind, dir v1alpha1.Direction, edges Edges) TestResult {
	var r TestResult
	b, db := usable(baseline)
	c, dc := usable(current)
	r.Dropped = db + dc
	b, c = capSamples(b, maxSamples), capSamples(c, maxSamples)
	r.BaselineN, r.CurrentN = len(b), len(c)
	r.P, r.POK, r.CILow, r.CIHigh = 1, 1, math.NaN(), math.NaN()

	vif := 1.0
	r.BlockLen = 1
	if kind == Windows {
		r.Autocorrelation = lag1(b, c)
		r.BlockLen = blockLength(r.Autocorrelation, min(len(b), len(c)), max(len(b), len(c)))
		vif = blockVIF(r.Autocorrelation, r.BlockLen)
	}
	bb, cb := blocks(b, r.BlockLen), blocks(c, r.BlockLen)
	r.BaselineBlocks, r.CurrentBlocks = len(bb), len(cb)
	if len(bb) > 0 && len(cb) > 0 {
		r.CILow, r.CIHigh = bootstrapRatio(bb, cb, seed(b, c, kind, dir))
	}

	r.MinP = minP(len(bb), len(cb), vif)
	if r.MinP >= Alpha {
		r.TooFew = true
		r.Note = tooFewNote(r, kind)
		return r
	}
	r.P, r.POK = pWorse(bb, cb, dir, edges.Success, vif), pWorse(bb, cb, dir, edges.OK, vif)
	return r
}

// pWorse is the one-sided p-value of "current is worse than baseline times edge": the rank
// test of the current blocks against the baseline blocks scaled by edge.
func pWorse(baseline, current []float64, dir v1alpha1.Direction, edge float64, vif float64) float64 {
	scaled := baseline
	if edge != 1 {
		scaled = make([]float64, len(baseline))
		for i, x := range baseline {
			scaled[i] = x * edge
		}
	}
	if dir == v1alpha1.HigherIsBetter {
		return pLessInflated(current, scaled, vif) // worse: current smaller
	}
	return pLessInflated(scaled, current, vif) // worse: current larger
}

// minP is the smallest p-value the test can give with m and n blocks whose variance is
// inflated by vif: every block of one side below every block of the other.
func minP(m, n int, vif float64) float64 {
	p := smallestP(m, n)
	if vif > 1 && m > 0 && n > 0 {
		mf, nf := float64(m), float64(n)
		p = max(p, normalCDF((-mf*nf/2+0.5)/math.Sqrt(mf*nf*(mf+nf+1)/12*vif)))
	}
	return p
}

// windowsNeeded is the smallest number of windows a side with which a test at this
// autocorrelation can reach Alpha, or 0 past maxSamples.
func windowsNeeded(rho float64) int {
	for k := 2; k <= maxSamples; k++ {
		b := blockLength(rho, k, k)
		if minP(k/b, k/b, blockVIF(rho, b)) < Alpha {
			return k
		}
	}
	return 0
}

func tooFewNote(r TestResult, kind Kind) string {
	if kind == Repetitions || r.Autocorrelation == 0 {
		return fmt.Sprintf("%d vs %d %s: a one-sided rank test cannot reach p < %.2f (smallest p %.4f); it needs at least %d a side",
			r.BaselineBlocks, r.CurrentBlocks, kind, Alpha, smallestP(r.BaselineBlocks, r.CurrentBlocks), SamplesNeeded(Alpha))
	}
	if atCap(r.Autocorrelation) {
		return fmt.Sprintf("%d vs %d windows in blocks of %d: %s, so no block length makes them independent and no decision is possible; %s",
			r.BaselineN, r.CurrentN, r.BlockLen, capText(), capAdvice)
	}
	need := "more than the record can hold"
	if k := windowsNeeded(r.Autocorrelation); k > 0 {
		need = fmt.Sprintf("at least %d", k)
	}
	return fmt.Sprintf("%d vs %d windows in blocks of %d (autocorrelation %.2f) cannot reach p < %.2f: at this autocorrelation the test needs %s windows a side",
		r.BaselineN, r.CurrentN, r.BlockLen, r.Autocorrelation, Alpha, need)
}

// At the cap the estimate is no measurement: the windows follow a trend (both runs ramp their
// load, or memory grows) more than they vary around one level, and the AR(1) blocks' length,
// and with it the variance the test allows, is a lower bound. More windows of a ramp do not
// help, so the note says what does.
const capAdvice = "compare a constant-load stage (a run of its own), or judge this metric with a threshold"

func capText() string {
	return fmt.Sprintf("autocorrelation at its cap %.2f: the windows follow a trend (a ramping load, a growing memory) rather than vary around one level",
		maxAutocorrelation)
}

// atCap says whether an estimated lag-1 autocorrelation reached maxAutocorrelation.
func atCap(rho float64) bool { return rho >= maxAutocorrelation }

// usable keeps the finite, non-negative samples: every compared metric (a rate, a duration,
// bytes, cores) is ≥ 0, and one NaN would poison every mean and rank after it.
func usable(v []float64) ([]float64, int) {
	out := make([]float64, 0, len(v))
	dropped := 0
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			dropped++
			continue
		}
		out = append(out, x)
	}
	return out, dropped
}

// capSamples merges adjacent samples into at most limit means of (nearly) equal size.
func capSamples(v []float64, limit int) []float64 {
	if len(v) <= limit {
		return v
	}
	return means(v, limit)
}

// means splits v into k runs of adjacent samples whose sizes differ by at most one and
// returns their means.
func means(v []float64, k int) []float64 {
	out := make([]float64, k)
	for i := range k {
		lo, hi := i*len(v)/k, (i+1)*len(v)/k
		var s float64
		for _, x := range v[lo:hi] {
			s += x
		}
		out[i] = s / float64(hi-lo)
	}
	return out
}

// blocks averages v into blocks of about length adjacent samples.
func blocks(v []float64, length int) []float64 {
	k := len(v) / length
	if k == 0 {
		if len(v) == 0 {
			return nil
		}
		k = 1 // fewer samples than a block: one block, which the test will call too few
	}
	return means(v, k)
}

// lag1 estimates the lag-1 autocorrelation pooled over both sides, each centred on its own
// mean (a shift between the runs is what is tested, not correlation). The estimate is biased
// low by about (1+3ρ)/n for an AR(1) series of n samples (Marriott and Pope, 1954); it is
// corrected for that, then clamped to [0, maxAutocorrelation].
func lag1(a, b []float64) float64 {
	var num, den float64
	n := 0
	for _, v := range [][]float64{a, b} {
		if len(v) < 2 {
			continue
		}
		var m float64
		for _, x := range v {
			m += x
		}
		m /= float64(len(v))
		for i, x := range v {
			den += (x - m) * (x - m)
			if i > 0 {
				num += (x - m) * (v[i-1] - m)
			}
		}
		n += len(v)
	}
	if den == 0 || n < 8 {
		return 0
	}
	r := num / den
	per := float64(n) / 2 // samples a side, on average
	r = (r + 1/per) / (1 - 3/per)
	return max(0, min(maxAutocorrelation, r))
}

// blockLength is blockFactor times the integrated autocorrelation time of an AR(1) series
// with lag-1 autocorrelation rho, but short enough to leave minBlocks blocks on the shorter
// side (fewer, longer blocks would leave the rank test too coarse to decide, and blockVIF
// accounts for what the shorter blocks leave correlated), and at least longest/maxBlocks.
func blockLength(rho float64, shortest, longest int) int {
	b := int(math.Ceil(blockFactor*(1+rho)/(1-rho) - 1e-9))
	if rho == 0 {
		b = 1 // independent windows need no blocks
	}
	b = min(b, max(1, shortest/minBlocks))
	if floor := (longest + maxBlocks - 1) / maxBlocks; b < floor {
		b = floor
	}
	return max(1, b)
}

// blockVIF is the variance inflation of the mean of block means of an AR(1) series with
// lag-1 autocorrelation phi in blocks of b: 1 + 2·Σ_k corr(block_i, block_(i+k)), where
// corr at lag 1 is cov/var of adjacent block sums and each further lag multiplies it by
// phi^b. Blocks of τ windows leave adjacent block means correlated by ~0.28 at phi 0.5;
// taken as independent, they would make noise look significant about twice as often as
// alpha says.
func blockVIF(phi float64, b int) float64 {
	if phi <= 0 {
		return 1
	}
	variance := float64(b)
	for k := 1; k < b; k++ {
		variance += 2 * float64(b-k) * math.Pow(phi, float64(k))
	}
	pb := math.Pow(phi, float64(b))
	cov := phi * (1 - pb) * (1 - pb) / ((1 - phi) * (1 - phi))
	return 1 + 2*(cov/variance)/(1-pb)
}

// bootstrapRatio is the 95 % percentile interval of mean(current)/mean(baseline) in %, over
// resamples (with replacement) of each side's blocks.
func bootstrapRatio(b, c []float64, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ratios := make([]float64, 0, bootstrapResamples)
	for range bootstrapResamples {
		mb, mc := resampleMean(rng, b), resampleMean(rng, c)
		if mb > 0 {
			ratios = append(ratios, 100*mc/mb)
		}
	}
	if len(ratios) < bootstrapResamples/2 { // the baseline is mostly 0: no ratio to bound
		return math.NaN(), math.NaN()
	}
	sort.Float64s(ratios)
	return quantile(ratios, 0.025), quantile(ratios, 0.975)
}

func resampleMean(rng *rand.Rand, v []float64) float64 {
	var s float64
	for range v {
		s += v[rng.IntN(len(v))]
	}
	return s / float64(len(v))
}

// quantile of sorted v, linear between order statistics.
func quantile(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (pos-float64(i))*(v[i+1]-v[i])
}

// seed hashes the inputs, so the same comparison always draws the same resamples.
func seed(b, c []float64, kind Kind, dir v1alpha1.Direction) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, side := range [][]float64{b, c} {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(side)))
		h.Write(buf[:])
		for _, x := range side {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
			h.Write(buf[:])
		}
	}
	h.Write([]byte{byte(kind)})
	h.Write([]byte(dir))
	return h.Sum64()
}
