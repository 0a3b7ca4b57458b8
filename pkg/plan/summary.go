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
// (throughput or memory), a noise warning and a USL fit of throughput against load.
func Summarize(in SummaryInput) []v1alpha1.ProfileSummary {
	out := Summary(in.Spec.Profiles, in.Rows)
	safePercent := in.safePercent()
	for i := range out {
		s := &out[i]
		s.Scaling = in.scaling(s.Profile)
		cells := cellsOf(s.Profile, in.Rows)
		if len(cells) == 0 {
			continue
		}
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
		if mem.devices > 0 && (s.SafeFleet == 0 || mem.devices < s.SafeFleet) {
			s.SafeFleet, s.Limit = mem.devices, v1alpha1.LimitMemory
		}
		s.LimitMessage = limitMessage(s.Limit, mem)
		s.Noise = noise(ff, bf)
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

func safeRule(ideal sizing.Spread, safePercent int32) string {
	u := float64(safePercent) / 100
	src := "its single run"
	if ideal.N > 1 {
		src = fmt.Sprintf("the %s of %d repetitions", ideal.Interval, ideal.N)
	}
	return fmt.Sprintf("safe = the low end of the floor's ideal devices (%s) × %d %% (spec.capacity.safePercent): "+
		"at %d %% utilisation an M/M/1 server answers in %.1f× its service time", src, safePercent, safePercent, sizing.MM1Stretch(u))
}

// noise warns when the floor's or the best setting's capacity varies more than maxTrustedCV
// over its repetitions, with the repetitions that would pin the median down.
func noise(figs ...figures) string {
	worst := sizing.Spread{}
	for _, f := range figs {
		for _, s := range []sizing.Spread{f.ideal, f.pushes} {
			if s.NoisyAbove(maxTrustedCV) && s.CV > worst.CV {
				worst = s
			}
		}
	}
	if worst.N == 0 {
		return ""
	}
	return fmt.Sprintf("capacity varies %.1f %% (CV) over %d repetitions, more than %.0f %%: about %d repetitions would put the median within ±%.0f %%",
		100*worst.CV, worst.N, 100*maxTrustedCV, sizing.RepetitionsFor(worst.CV, noiseWithin), 100*noiseWithin)
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
