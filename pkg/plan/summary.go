package plan

import (
	"fmt"
	"math"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// maxTrustedCV is the variation over repetitions above which a figure is flagged: beyond
// 10 % the median of a few runs can be off by more than a sizing decision tolerates.
const maxTrustedCV = 0.10

// noiseWithin is the precision RepetitionsFor aims at: the median's 95 % interval within ±5 %.
const noiseWithin = 0.05

// SummaryInput is what the profile summaries are built from.
type SummaryInput struct {
	Spec *v1alpha1.CapacityPlanSpec
	Rows []v1alpha1.CapacityRow
	// Children in cell order (as Rows), for peak steps, memory and the profile measured.
	Children []Child
	// Stability are the spec.memoryFrom runs that exist.
	Stability []v1alpha1.TestRun
}

// Summarize is Summary with, per profile, the floor and best sweep settings over their
// repetitions (medians with ranges), the safe fleet with its headroom rule, what bounds it
// (throughput or memory) and the memory bound itself, the repetitions left out of the ranges,
// noise warnings and a USL fit of throughput against load.
func Summarize(in SummaryInput) []v1alpha1.ProfileSummary {
	out := Summary(in.Spec.Profiles, in.Rows)
	safePercent := in.safePercent()
	for i := range out {
		s := &out[i]
		s.Scaling = in.scaling(s.Profile)
		cells := cellsOf(s.Profile, in.Rows)
		if len(cells) > 0 {
			floor, best := floorAndBest(cells)
			ff, bf := figuresOf(floor), figuresOf(best)
			s.Floor = cellFigures(floor, ff, safePercent)
			if best != floor {
				s.Best = cellFigures(best, bf, safePercent)
			}
			s.SafeFleet, s.Limit = s.Floor.SafeMaxDevices, s.Floor.Limit
			if ff.ideal.N > 0 {
				s.SafeRule = safeRule(ff.ideal, safePercent)
			}
			mem := in.memoryOf(s.Profile, safePercent)
			s.MemoryBound = mem.devices
			if mem.devices > 0 && (s.SafeFleet == 0 || mem.devices < s.SafeFleet) {
				s.SafeFleet, s.Limit = mem.devices, v1alpha1.LimitMemory
			}
			s.LimitMessage = limitMessage(s.Limit, mem)
			s.Noise = worseNoise(floor, best)
		}
		s.DroppedRepetitions = droppedRepetitions(s.Profile, in.Rows, cells, s.Floor)
	}
	return out
}

func (in SummaryInput) safePercent() int32 {
	a, _ := childAssumptions(in.Spec)
	if a.SafePercent == 0 {
		return 80 // no push period: the percentages still hold (judge.CapacityAssumptions)
	}
	return a.SafePercent
}

// floorAndBest are the cells with the smallest and largest median capacity.
func floorAndBest(cells []*cell) (floor, best *cell) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cells {
		v := figuresOf(c).capacityOf()
		if math.IsNaN(v) {
			continue
		}
		if v < lo {
			lo, floor = v, c
		}
		if v > hi {
			hi, best = v, c
		}
	}
	if floor == nil {
		return cells[0], cells[0]
	}
	return floor, best
}

// safeRule says which run the low end is: up to 8 repetitions the unluckiest, from 9 the lower
// bound of the median's 95 % interval, which some runs measured less than (sizing.Spread.LowRank).
func safeRule(ideal sizing.Spread, safePercent int32) string {
	u := float64(safePercent) / 100
	var low string
	switch rank := ideal.LowRank(); {
	case ideal.N == 1:
		low = "the floor's ideal devices (its single run)"
	case rank <= 1:
		low = fmt.Sprintf("the lowest of the floor's ideal devices over %d repetitions (the unluckiest run)", ideal.N)
	default:
		low = fmt.Sprintf("the median's lower 95 %% bound of the floor's ideal devices (%s lowest of %d repetitions: %d measured less)",
			ordinal(rank), ideal.N, rank-1)
	}
	return fmt.Sprintf("safe = %s × %d %% (spec.capacity.safePercent): at %d %% utilisation an M/M/1 server answers in %.1f× its service time",
		low, safePercent, safePercent, sizing.MM1Stretch(u))
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// noise warns when a setting's capacity varies more than maxTrustedCV over its repetitions,
// with the repetitions that would pin its median down; "" otherwise. It speaks of that
// setting alone, so a row showing one setting's range never quotes another's.
func noise(f figures) string {
	worst := noisiest(f)
	if worst.N == 0 {
		return ""
	}
	return fmt.Sprintf("capacity varies %.1f %% (CV) over %d repetitions, more than %.0f %%: about %d repetitions would put the median within ±%.0f %%",
		100*worst.CV, worst.N, 100*maxTrustedCV, sizing.RepetitionsFor(worst.CV, noiseWithin), 100*noiseWithin)
}

// noisiest is the figure of f (ideal devices or throughput) that varies most beyond
// maxTrustedCV; Spread{} when none does.
func noisiest(f figures) sizing.Spread {
	worst := sizing.Spread{}
	for _, s := range []sizing.Spread{f.ideal, f.pushes} {
		if s.NoisyAbove(maxTrustedCV) && s.CV > worst.CV {
			worst = s
		}
	}
	return worst
}

// maxNoise is ProfileSummary.noise's MaxLength.
const maxNoise = 256

// worseNoise is the profile's noise warning: the noisier of the floor and the best setting,
// naming which; "" when neither is noisy.
func worseNoise(floor, best *cell) string {
	name, c := "the floor", floor
	if best != floor && noisiest(figuresOf(best)).CV > noisiest(figuresOf(floor)).CV {
		name, c = "the best setting", best
	}
	n := noise(figuresOf(c))
	if n == "" {
		return ""
	}
	if label := strings.TrimSpace(CellLabel("", c.values)); label != "" {
		name += " (" + label + ")"
	}
	return cutTo(name+": "+n, maxNoise)
}

func limitMessage(limit string, mem memoryBound) string {
	switch {
	case limit == v1alpha1.LimitMemory && mem.devices > 0:
		return "memory: " + mem.message
	case mem.devices > 0:
		return joinWords(limitWords[limit], "memory would allow more: "+mem.message)
	case mem.message != "": // a footprint that did not grow bounds nothing
		return joinWords(limitWords[limit], mem.message)
	}
	return limitWords[limit]
}

// joinWords joins two clauses with "; ", leaving out an empty one (a row that named no limit).
func joinWords(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// limitWords say what each limit means for the figure.
var limitWords = map[string]string{
	v1alpha1.LimitCPU:       "cpu: the target's cores were saturated",
	v1alpha1.LimitLatency:   "latency: the peak test's p95 stop rule fired",
	v1alpha1.LimitErrors:    "errors: the peak test's error stop rule fired",
	v1alpha1.LimitGenerator: "generator: the load generators were the limit, so the figure is a lower bound; add runners (spec.parallelism)",
	v1alpha1.LimitTarget:    "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it)",
	v1alpha1.LimitMemory:    "memory: the target was OOM-killed",
	"":                      "",
}

// sameProfile compares profile names as the API does: without case.
func sameProfile(a, b string) bool { return strings.EqualFold(a, b) }
