// Package columns is the one definition of a TestRun's result columns, the presentation step
// of the pipeline: each column's names, unit, which status field it shows and how its cell is
// read from a TestRun. The plugin's sizing table, the CSV and JUnit reports, the HTML report
// and the TestRun's printer columns (kubectl get testruns) all render from it, so a column
// cannot show one name or value in one place and another elsewhere. It makes no client calls.
package columns

import (
	"fmt"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Renderer is a presentation that shows columns; a column's In says which show it.
type Renderer uint8

const (
	// Table is the plugin's sizing table (kubectl fleetbench get cp/NAME): headed by Short.
	Table Renderer = 1 << iota
	// CSV is seed 000's sizing table in long form: headed by Seed, so rows paste into it.
	CSV
	// JUnit are the testsuite's properties: named by ID, as CI tools key them.
	JUnit
	// HTML is the HTML report: headed by Name, with Unit.
	HTML
	// Printer are the TestRun CRD's printer columns: Short and Path, kubebuilder markers in
	// api/v1alpha1 (static strings; a test compares the generated CRD with this package).
	Printer
)

// Column is one result column.
type Column struct {
	// ID is the column's key: JUnit's property name, the HTML cell's data-column.
	ID string
	// Name heads it for a reader of the HTML report.
	Name string
	// Short heads it in a terminal: the plugin's table and the printer column.
	Short string
	// Seed is seed 000's spelling, the CSV header; "" when seed 000 has no such column.
	Seed string
	// Unit of the value; "" when the value carries its own (latencies: "24ms") or has none.
	Unit string
	// Path is the JSONPath of the field the value is, as is; "" when the value is computed.
	Path string
	// Key columns say which run a row is (profile, phase, verdict...); the others are results.
	Key bool
	// Row: a CapacityPlan's table row carries it (FromRow reads it back); the others are
	// left blank in a plan's rows.
	Row bool
	// In says which renderers show it.
	In Renderer
	// Value is the cell of a TestRun: "" when it has none (yet).
	Value func(*v1alpha1.TestRun) string
}

// Header is the column's name as r shows it.
func (c Column) Header(r Renderer) string {
	switch r {
	case Table, Printer:
		return c.Short
	case CSV:
		return c.Seed
	case JUnit:
		return c.ID
	}
	return c.Name
}

// IDs of the columns a renderer treats specially (a plan's key cells, a decorated verdict).
const (
	Profile    = "profile"
	Test       = "test"
	Handlers   = "handlers"
	Repetition = "repetition"
	Verdict    = "verdict"
	TestRun    = "testRun"
	Comparison = "comparison"
)

// All are the columns in the order every renderer shows them (each shows those it is In).
var All = []Column{
	{ID: "type", Name: "Type", Short: "TYPE", Path: ".spec.type", Key: true, In: JUnit | Printer,
		Value: func(r *v1alpha1.TestRun) string { return string(r.Spec.Type) }},
	{ID: Profile, Name: "Profile", Short: "PROFILE", Seed: "Spec", Path: ".spec.profile", Key: true, Row: true, In: Table | CSV | JUnit | HTML | Printer,
		Value: func(r *v1alpha1.TestRun) string { return r.Spec.Profile }},
	// Test and Handlers are seed 000's row keys: the test's name (a plan's rows name it by
	// the plan and its sweep, see PlanRows) and the target's handler count.
	{ID: Test, Name: "Test", Seed: "Test", Key: true, In: CSV,
		Value: func(r *v1alpha1.TestRun) string { return r.Name }},
	{ID: Handlers, Name: "Handlers", Seed: "Handlers", Key: true, In: CSV, Value: handlers},
	{ID: Repetition, Name: "Repetition", Short: "REP", Seed: "Repetition", Key: true, Row: true, In: Table | CSV | HTML,
		Value: func(*v1alpha1.TestRun) string { return "1" }},
	{ID: "phase", Name: "Phase", Short: "PHASE", Path: ".status.phase", Key: true, Row: true, In: Table | JUnit | HTML | Printer,
		Value: func(r *v1alpha1.TestRun) string { return string(r.Status.Phase) }},
	{ID: Verdict, Name: "Verdict", Short: "VERDICT", Path: ".status.verdict", Key: true, Row: true, In: Table | JUnit | HTML | Printer,
		Value: func(r *v1alpha1.TestRun) string { return string(r.Status.Verdict) }},
	// comparison is the decision of the run against its baseline (spec.baseline), "" when it
	// has none: Regressed is what made a verdict REGRESSED.
	{ID: Comparison, Name: "Comparison", Short: "COMPARED", Path: ".status.comparison.decision", In: JUnit | Printer,
		Value: comparisonDecision},
	// outcome is seed 000's Verdict row, which a spreadsheet reads without a phase column.
	{ID: "outcome", Name: "Outcome", Seed: "Verdict", Key: true, Row: true, In: CSV, Value: outcome},
	{ID: "requests", Name: "Requests", Short: "REQUESTS", Unit: "requests", Path: ".status.results.requests.total", In: JUnit | HTML,
		Value: requests(func(q *v1alpha1.RequestCounts) string { return fmt.Sprint(q.Total) })},
	{ID: "accepted", Name: "Accepted", Short: "ACCEPTED", Seed: "Performed Pushes", Unit: "requests", Path: ".status.results.requests.accepted",
		Row: true, In: Table | CSV | HTML, Value: requests(func(q *v1alpha1.RequestCounts) string { return fmt.Sprint(q.Accepted) })},
	{ID: "dropped", Name: "Dropped", Short: "DROPPED", Seed: "Data ERR/retries", Unit: "requests", Path: ".status.results.requests.dropped",
		Row: true, In: Table | CSV | HTML, Value: requests(func(q *v1alpha1.RequestCounts) string { return fmt.Sprint(q.Dropped) })},
	{ID: "droppedPercent", Name: "Dropped %", Short: "DROPPED%", Seed: "push errors (%)", Unit: "%", Path: ".status.results.requests.droppedPercent",
		Row: true, In: Table | CSV | JUnit | HTML | Printer, Value: requests(func(q *v1alpha1.RequestCounts) string { return q.DroppedPercent })},
	{ID: "requestsPerSecond", Name: "Throughput", Short: "RPS", Unit: "req/s", Path: ".status.results.throughput.requestsPerSecond",
		Row: true, In: Table | JUnit | HTML | Printer, Value: throughput(func(t *v1alpha1.Throughput) string { return t.RequestsPerSecond })},
	{ID: "receivedMbps", Name: "Received", Unit: "Mb/s", Path: ".status.results.throughput.receivedMbps", Row: true, In: HTML,
		Value: throughput(func(t *v1alpha1.Throughput) string { return t.ReceivedMbps })},
	{ID: "sentMbps", Name: "Sent", Unit: "Mb/s", Path: ".status.results.throughput.sentMbps", Row: true, In: HTML,
		Value: throughput(func(t *v1alpha1.Throughput) string { return t.SentMbps })},
	// Seed 000's sizing cells are device pushes per second; without a push period each
	// request is taken for one (the plan report's charts do the same).
	{ID: "pushesPerSecond", Name: "Pushes per second", Short: "PUSHES/S", Seed: "Pushes per second", Unit: "pushes/s", Row: true,
		In: Table | CSV | HTML, Value: pushesPerSecond},
	{ID: "avg", Name: "avg", Unit: "", Path: ".status.results.latency.avg", Row: true, In: HTML,
		Value: latency(func(l *v1alpha1.Latency) string { return l.Avg })},
	{ID: "p50", Name: "p50", Path: ".status.results.latency.p50", Row: true, In: HTML,
		Value: latency(func(l *v1alpha1.Latency) string { return l.P50 })},
	{ID: "p95", Name: "p95", Short: "P95", Path: ".status.results.latency.p95", Row: true, In: Table | JUnit | HTML | Printer,
		Value: latency(func(l *v1alpha1.Latency) string { return l.P95 })},
	{ID: "p99", Name: "p99", Path: ".status.results.latency.p99", Row: true, In: HTML,
		Value: latency(func(l *v1alpha1.Latency) string { return l.P99 })},
	{ID: "checks", Name: "Checks", Unit: "passed", In: HTML, Value: checks},
	{ID: "memoryPeakMiB", Name: "Memory peak", Seed: "RSS (MiB)", Unit: "MiB", Path: ".status.target.memory.peakMiB", Row: true, In: CSV | HTML,
		Value: memory(func(m *v1alpha1.MemoryUsage) string { return count(m.PeakMiB) })},
	{ID: "perDeviceMiB", Name: "MiB per device", Seed: "MiB per device", Unit: "MiB", Path: ".status.target.memory.perDeviceMiB", Row: true, In: CSV,
		Value: memory(func(m *v1alpha1.MemoryUsage) string { return m.PerDeviceMiB })},
	{ID: "cpuPerCore", Name: "CPU per core", Seed: "avg load 15 / cpu core", Unit: "cores per core", Path: ".status.target.cpu.averageCoresPerCore",
		Row: true, In: CSV | HTML, Value: cpuPerCore},
	{ID: "restarts", Name: "Restarts", Seed: "Crashes", Path: ".status.target.restarts", In: CSV, Value: restarts},
	{ID: "idealMaxDevices", Name: "Ideal max devices", Short: "IDEAL MAX", Seed: "Ideal max devs", Unit: "devices", Path: ".status.capacity.idealMaxDevices",
		Row: true, In: Table | CSV | HTML, Value: capacity(func(c *v1alpha1.CapacityResult) int64 { return c.IdealMaxDevices })},
	{ID: "safeMaxDevices", Name: "Safe max devices", Short: "SAFE MAX", Seed: "Safe max devs", Unit: "devices", Path: ".status.capacity.safeMaxDevices",
		Row: true, In: Table | CSV | HTML, Value: capacity(func(c *v1alpha1.CapacityResult) int64 { return c.SafeMaxDevices })},
	// Seed 000's devices ÷ RAM utilisation, named for what it is: a CapacityPlan's memory bound
	// (what its answer uses) is another rule (status.summary[].memoryBound).
	{ID: "maxSafeDevicesByMemory", Name: "Devices at full RAM (seed 000)", Short: "DEVS AT FULL RAM", Seed: "Max safe # of devs", Unit: "devices",
		Path: ".status.capacity.maxSafeDevicesByMemory", Row: true, In: Table | CSV | HTML,
		Value: capacity(func(c *v1alpha1.CapacityResult) int64 { return c.MaxSafeDevicesByMemory })},
	{ID: "breakingPointDevices", Name: "Breaking point", Unit: "devices", Path: ".status.capacity.breakingPointDevices", Row: true, In: HTML,
		Value: capacity(func(c *v1alpha1.CapacityResult) int64 { return c.BreakingPointDevices })},
	{ID: TestRun, Name: "TestRun", Short: "TESTRUN", Key: true, Row: true, In: Table | HTML,
		Value: func(r *v1alpha1.TestRun) string { return r.Name }},
}

// For are the columns r shows, in order.
func For(r Renderer) []Column {
	var out []Column
	for _, c := range All {
		if c.In&r != 0 {
			out = append(out, c)
		}
	}
	return out
}

// ByID is the column with that ID.
func ByID(id string) (Column, bool) {
	for _, c := range All {
		if c.ID == id {
			return c, true
		}
	}
	return Column{}, false
}

// Row is one line of a table: a TestRun, or a CapacityPlan's row read back as one (FromRow),
// with the key cells a plan sets for its rows by column ID.
type Row struct {
	Run  *v1alpha1.TestRun
	Keys map[string]string
	// Values are a plan row's sweep values by dimension name (columns of their own in a
	// plan's tables, named by the plan).
	Values map[string]string
	// Plan: the row is a CapacityPlan's, which carries only the columns marked Row.
	Plan bool
}

// RunRow is the row of one TestRun.
func RunRow(run *v1alpha1.TestRun) Row { return Row{Run: run} }

// Cell is the row's value of c: a key the row sets, else c's value of its run; blank when the
// row is a plan's and c is not one a plan's row carries.
func (r Row) Cell(c Column) string {
	if v, ok := r.Keys[c.ID]; ok {
		return v
	}
	if r.Plan && !c.Row {
		return ""
	}
	return c.Value(r.Run)
}

// Cells are the row's values of cols by column ID.
func (r Row) Cells(cols []Column) map[string]string {
	out := make(map[string]string, len(cols))
	for _, c := range cols {
		out[c.ID] = r.Cell(c)
	}
	return out
}

// IsHandlers tells whether a variable is seed 000's handler count.
func IsHandlers(name string) bool {
	n := strings.ToUpper(name)
	return n == "WORKERS" || n == "HANDLERS"
}

// count renders a count, "" for none (0: not measured).
func count(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
