package plan

import (
	"fmt"
	"strconv"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Rows are the table's rows, one per cell, from the children's status.
func Rows(spec *v1alpha1.CapacityPlanSpec, plan string, cells []Cell, children []Child) []v1alpha1.CapacityRow {
	rows := make([]v1alpha1.CapacityRow, len(cells))
	for i, c := range cells {
		row := v1alpha1.CapacityRow{Profile: c.Profile, Values: c.ValueMap(spec.Sweep), Repetition: c.Repetition, TestRun: c.Name(plan)}
		ch := children[i]
		switch {
		case ch.Run != nil:
			fillRow(&row, &ch.Run.Status)
			row.Limit = RowLimit(ch.Run)
		case ch.ProfileMissing:
			row.TestRun = ""
			row.Phase, row.Verdict, row.Reason = v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonProfileNotFound
		}
		rows[i] = row
	}
	return rows
}

func fillRow(row *v1alpha1.CapacityRow, st *v1alpha1.TestRunStatus) {
	row.Phase, row.Verdict = st.Phase, st.Verdict
	if st.Phase == v1alpha1.PhaseFailed {
		row.Reason = st.Reason
	}
	row.GeneratorBound = st.GeneratorBound
	if r := st.Results; r != nil {
		if r.Requests != nil {
			row.RequestsAccepted, row.RequestsDropped, row.DroppedPercent = r.Requests.Accepted, r.Requests.Dropped, r.Requests.DroppedPercent
		}
		if r.Throughput != nil {
			row.RequestsPerSecond = r.Throughput.RequestsPerSecond
			row.ReceivedMbps, row.SentMbps = r.Throughput.ReceivedMbps, r.Throughput.SentMbps
		}
		if r.Latency != nil {
			row.Latency = r.Latency.DeepCopy()
		}
	}
	if t := st.Target; t != nil {
		if t.Memory != nil {
			row.MemoryPeakMiB, row.MemoryPerDeviceMiB = t.Memory.PeakMiB, t.Memory.PerDeviceMiB
		}
		if t.CPU != nil {
			row.CPUPerCore = t.CPU.AverageCoresPerCore
		}
	}
	if c := st.Capacity; c != nil {
		row.PushesPerSecond = c.PushesPerSecond
		row.IdealMaxDevices, row.TypicalMaxDevices, row.SafeMaxDevices = c.IdealMaxDevices, c.TypicalMaxDevices, c.SafeMaxDevices
		row.MaxSafeDevicesByMemory, row.BreakingPointDevices = c.MaxSafeDevicesByMemory, c.BreakingPointDevices
	}
}

// Summary is one line per profile with the device counts of its weakest passing row: the
// smallest of each column over the rows that PASSED, as seed 000's sizing table takes them.
func Summary(profiles []string, rows []v1alpha1.CapacityRow) []v1alpha1.ProfileSummary {
	out := make([]v1alpha1.ProfileSummary, 0, len(profiles))
	for _, p := range profiles {
		s := v1alpha1.ProfileSummary{Profile: p}
		pushes := -1.0
		for _, r := range rows {
			if r.Profile != p {
				continue
			}
			s.Rows++
			if r.Phase != v1alpha1.PhaseSucceeded || r.Verdict != v1alpha1.VerdictPassed {
				continue
			}
			first := s.Passed == 0
			s.Passed++
			s.IdealMaxDevices = weakest(first, s.IdealMaxDevices, r.IdealMaxDevices)
			s.TypicalMaxDevices = weakest(first, s.TypicalMaxDevices, r.TypicalMaxDevices)
			s.SafeMaxDevices = weakest(first, s.SafeMaxDevices, r.SafeMaxDevices)
			s.MaxSafeDevicesByMemory = weakest(first, s.MaxSafeDevicesByMemory, r.MaxSafeDevicesByMemory)
			s.BreakingPointDevices = weakest(first, s.BreakingPointDevices, r.BreakingPointDevices)
			if v, err := strconv.ParseFloat(r.PushesPerSecond, 64); err == nil && (pushes < 0 || v < pushes) {
				pushes, s.PushesPerSecond = v, r.PushesPerSecond
			}
		}
		out = append(out, s)
	}
	return out
}

// weakest keeps the smaller of two counts, where 0 means "not measured" and never wins.
func weakest(first bool, cur, v int64) int64 {
	switch {
	case v == 0:
		return cur
	case first || cur == 0 || v < cur:
		return v
	}
	return cur
}

// Progress is "done/total".
func Progress(d Decision) string { return fmt.Sprintf("%d/%d", d.Done, d.Total) }
