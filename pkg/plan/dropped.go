package plan

import (
	"fmt"
	"math"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// maxDropped is ProfileSummary.droppedRepetitions' MaxLength.
const maxDropped = 512

// droppedRepetitions says how many of a profile's finished repetitions its ranges leave out,
// and why: only rows that PASSED size a deployment (passed), so a repetition that FAILED its
// thresholds, ended INCONCLUSIVE or REGRESSED, or failed outright is not in any range. Such a
// run may still have measured capacity; when one measured fewer ideal devices than the floor's
// low end, the low end is better than the runs were, and that is said with the lowest. A
// setting none of whose repetitions passed is in neither floor nor best: named. cells are the
// profile's settings that passed (cellsOf); "" when nothing finished is left out.
func droppedRepetitions(profile string, rows []v1alpha1.CapacityRow, cells []*cell, floor *v1alpha1.CellFigures) string {
	counts := map[string]int{}
	finished, dropped := 0, 0
	var lowest *v1alpha1.CapacityRow
	passedSettings := map[string]bool{}
	for _, c := range cells {
		passedSettings[c.key] = true
	}
	var settingsGone []string
	seenGone := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Profile != profile || (r.Phase != v1alpha1.PhaseSucceeded && r.Phase != v1alpha1.PhaseFailed) {
			continue // not finished: waiting, not left out
		}
		finished++
		if passed(*r) {
			continue
		}
		dropped++
		counts[outcome(r)]++
		if r.IdealMaxDevices > 0 && (lowest == nil || r.IdealMaxDevices < lowest.IdealMaxDevices) {
			lowest = r
		}
		if k := valuesKey(r.Values); !passedSettings[k] && !seenGone[k] {
			seenGone[k] = true
			settingsGone = append(settingsGone, strings.TrimSpace(CellLabel("", r.Values)))
		}
	}
	if dropped == 0 {
		return ""
	}
	names := make([]string, 0, len(counts))
	for o := range counts {
		names = append(names, o)
	}
	sort.Strings(names)
	outcomes := make([]string, len(names))
	for i, o := range names {
		outcomes[i] = fmt.Sprintf("%d %s", counts[o], o)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d finished repetitions left out of the ranges, as only PASSED runs size a deployment: %s",
		dropped, finished, strings.Join(outcomes, ", "))
	if low := floorLow(floor); lowest != nil && low > 0 && float64(lowest.IdealMaxDevices) < low {
		fmt.Fprintf(&b, "; %s measured %d ideal devices, below the floor's low end of %.0f", runName(lowest), lowest.IdealMaxDevices, low)
	}
	if len(settingsGone) > 0 && len(cells) > 0 {
		fmt.Fprintf(&b, "; no repetition passed at %s: not in floor or best", strings.Join(settingsGone, ", "))
	}
	return cutTo(b.String(), maxDropped)
}

// outcome is why a finished row did not pass: its verdict, or the reason it failed.
func outcome(r *v1alpha1.CapacityRow) string {
	if r.Phase == v1alpha1.PhaseFailed {
		if r.Reason != "" {
			return "Failed (" + r.Reason + ")"
		}
		return "Failed"
	}
	if r.Verdict == "" {
		return "without a verdict"
	}
	return string(r.Verdict)
}

// floorLow is the low end of the floor's ideal devices, 0 without one.
func floorLow(floor *v1alpha1.CellFigures) float64 {
	if floor == nil || floor.IdealMaxDevices == nil {
		return 0
	}
	r := floor.IdealMaxDevices
	v := decimal(r.Low)
	if r.Low == "" {
		v = decimal(r.Median) // a single run: its median is its low end
	}
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func runName(r *v1alpha1.CapacityRow) string {
	name := fmt.Sprintf("repetition %d", r.Repetition)
	if label := strings.TrimSpace(CellLabel("", r.Values)); label != "" {
		name = label + " " + name
	}
	if r.TestRun != "" {
		name += " (" + r.TestRun + ", " + outcome(r) + ")"
	}
	return name
}
