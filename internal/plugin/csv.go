package plugin

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// CSVHeader are the CSV report's columns, named as seed 000 (Dwarfguard 0.8.0) names them, so a
// CapacityPlan's rows paste into that spreadsheet. Seed 000 keeps its sizing table pivoted (a
// column per machine, a row per test and handler count); the CSV is the same table in long form,
// one line per cell. Where each column comes from:
//
//	Spec                    the sizing table's "Spec:" row (C1 … H3): row.profile; a TestRun's spec.profile
//	Test                    the sizing table's "Test" column (6-SSL, 12-noSSL): the plan's name, then each
//	                        sweep value except the handlers, a tls sweep as SSL / noSSL (bench-6-SSL);
//	                        a TestRun's name
//	Handlers                the sizing table's "Handlers" (1, 2, 4, 8): the value of the sweep dimension
//	                        named WORKERS or HANDLERS; for a TestRun, that variable of a target component
//	Repetition              not in seed 000 (seed 001's "first run" / "second run"): row.repetition; 1 for a TestRun
//	Verdict                 the stability table's "Verdict": the verdict; "Failed (reason)" for phase
//	                        Failed, the phase while unfinished
//	Performed Pushes        stability table: accepted requests (row.requestsAccepted, results.requests.accepted)
//	Data ERR/retries        stability table: dropped requests (row.requestsDropped, results.requests.dropped)
//	push errors (%)         stability table: dropped percent (row.droppedPercent, results.requests.droppedPercent)
//	Pushes per second       the sizing table's cells ("Results are # of processed device data pushes per
//	                        second"): pushesPerSecond (capacity), else the throughput in req/s
//	RSS (MiB)               stability table's post-test daemon RSS: the target's peak memory
//	                        (row.memoryPeakMiB, target.memory.peakMiB)
//	MiB per device          stability table: target.memory.perDeviceMiB (TestRun only; a plan row has none)
//	avg load 15 / cpu core  stability table: the target's average load per core (row.cpuPerCore,
//	                        target.cpu.averageCoresPerCore)
//	Crashes                 stability table: target container restarts (TestRun only)
//	Ideal max devs          the sizing table's "Ideal max devs": idealMaxDevices
//	Safe max devs           the sizing table's "Safe max devs": safeMaxDevices
//	Max safe # of devs      the stability table's memory-bound count: maxSafeDevicesByMemory
var CSVHeader = []string{
	"Spec", "Test", "Handlers", "Repetition", "Verdict", "Performed Pushes", "Data ERR/retries", "push errors (%)",
	"Pushes per second", "RSS (MiB)", "MiB per device", "avg load 15 / cpu core", "Crashes",
	"Ideal max devs", "Safe max devs", "Max safe # of devs",
}

// csvRow holds a line's cells in CSVHeader's order.
type csvRow [16]string

func writeCSV(w io.Writer, rows []csvRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rows {
		for i := range r {
			r[i] = textsafe.Line(r[i]) // a spreadsheet or a terminal shows them
		}
		if err := cw.Write(r[:]); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// isHandlers tells whether a variable is seed 000's handler count.
func isHandlers(name string) bool {
	n := strings.ToUpper(name)
	return n == "WORKERS" || n == "HANDLERS"
}

func num(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func verdictCell(phase v1alpha1.TestRunPhase, verdict v1alpha1.Verdict, reason string) string {
	switch {
	case phase == v1alpha1.PhaseFailed:
		return "Failed" + reasonSuffix(reason, "")
	case phase != v1alpha1.PhaseSucceeded:
		if phase == "" {
			return string(v1alpha1.PhasePending)
		}
		return string(phase)
	}
	return string(verdict)
}

func planCSVRows(p *v1alpha1.CapacityPlan) []csvRow {
	var out []csvRow
	for _, r := range p.Status.Table {
		test, handlers := []string{p.Name}, ""
		for _, d := range p.Spec.Sweep {
			v, ok := r.Values[d.Name()]
			switch {
			case !ok:
			case d.Field == v1alpha1.SweepFieldTLS:
				if v == "true" {
					test = append(test, "SSL")
				} else {
					test = append(test, "noSSL")
				}
			case isHandlers(d.Env) || isHandlers(d.ScriptEnv):
				handlers = v
			default:
				test = append(test, d.Name()+"="+v)
			}
		}
		rps := r.PushesPerSecond
		if rps == "" {
			rps = r.RequestsPerSecond
		}
		var accepted, dropped string
		if r.Phase == v1alpha1.PhaseSucceeded || r.RequestsAccepted != 0 || r.RequestsDropped != 0 {
			accepted, dropped = fmt.Sprint(r.RequestsAccepted), fmt.Sprint(r.RequestsDropped)
		}
		out = append(out, csvRow{
			r.Profile, strings.Join(test, "-"), handlers, fmt.Sprint(max(r.Repetition, 1)), verdictCell(r.Phase, r.Verdict, r.Reason),
			accepted, dropped, r.DroppedPercent, rps, num(r.MemoryPeakMiB), "", r.CPUPerCore, "",
			num(r.IdealMaxDevices), num(r.SafeMaxDevices), num(r.MaxSafeDevicesByMemory),
		})
	}
	return out
}

func testRunCSVRow(run *v1alpha1.TestRun) csvRow {
	s := run.Status
	row := csvRow{0: run.Spec.Profile, 1: run.Name, 3: "1", 4: verdictCell(s.Phase, s.Verdict, s.Reason)}
	for _, c := range run.Spec.Target.Components {
		for _, e := range c.Env {
			if isHandlers(e.Name) && row[2] == "" {
				row[2] = e.Value
			}
		}
	}
	if r := s.Results; r != nil {
		if q := r.Requests; q != nil {
			row[5], row[6], row[7] = fmt.Sprint(q.Accepted), fmt.Sprint(q.Dropped), q.DroppedPercent
		}
		if r.Throughput != nil {
			row[8] = r.Throughput.RequestsPerSecond
		}
	}
	if c := s.Capacity; c != nil {
		if c.PushesPerSecond != "" {
			row[8] = c.PushesPerSecond
		}
		row[13], row[14], row[15] = num(c.IdealMaxDevices), num(c.SafeMaxDevices), num(c.MaxSafeDevicesByMemory)
	}
	if t := s.Target; t != nil {
		if m := t.Memory; m != nil {
			row[9], row[10] = num(m.PeakMiB), m.PerDeviceMiB
		}
		if t.CPU != nil {
			row[11] = t.CPU.AverageCoresPerCore
		}
		row[12] = fmt.Sprint(t.Restarts)
	}
	return row
}
