package plugin

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

func newGetCommand(o *options, describe bool) *cobra.Command {
	var plan bool
	use, short := "get NAME", "Show a TestRun's results, or a CapacityPlan's sizing table"
	if describe {
		use, short = "describe NAME", "Show a TestRun's or a CapacityPlan's results with conditions, scenarios, checks and runners"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.
NAME is a TestRun or a CapacityPlan: testrun/NAME (tr/NAME) and capacityplan/NAME (cp/NAME) say
which; a plain NAME is looked up as a TestRun first, then as a CapacityPlan.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return o.list(cmd.Context(), plan)
			}
			_, obj, err := o.resolve(cmd.Context(), args[0], plan)
			if err != nil {
				return err
			}
			if obj.run != nil {
				writeTestRun(o.streams.Out, obj.run, describe)
			} else {
				writePlan(o.streams.Out, obj.plan, describe)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&plan, "plan", false, "NAME is a CapacityPlan")
	if !describe {
		// As kubectl get: without a name, the namespace's TestRuns and CapacityPlans.
		cmd.Use = "get [NAME]"
		cmd.Long += "\nWithout NAME, list the namespace's TestRuns and CapacityPlans (--plan: only CapacityPlans)."
		cmd.Args = cobra.MaximumNArgs(1)
	}
	return cmd
}

// section prints a titled block of tab-separated rows, aligned.
func section(w io.Writer, title string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	if title != "" {
		_, _ = fmt.Fprintf(w, "\n%s:\n", title)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		// Every cell may hold a tenant's text (check names, messages): no control character
		// reaches the terminal, and no tab or newline breaks the columns.
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = textsafe.Line(c)
		}
		_, _ = fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

// writeTestRun prints a TestRun's results; describe adds conditions, scenarios, checks and runners.
// workerLine says where a run Kueue's MultiKueue dispatches runs, and what of its results is here.
func workerLine(run *v1alpha1.TestRun) string {
	w := run.Annotations[v1alpha1.AnnotationWorkerCluster]
	if w == "" {
		return "a worker cluster Kueue's MultiKueue has not chosen yet"
	}
	return "worker cluster " + w + " (dispatched by MultiKueue: this status is that cluster's; the full k6 summary and timeline stay there, and go when its copy of the run ends)"
}

func writeTestRun(w io.Writer, run *v1alpha1.TestRun, describe bool) {
	s := run.Status
	head := [][]string{
		{"TestRun:", run.Namespace + "/" + run.Name},
		{"Type:", orDash(string(run.Spec.Type))},
		{"Profile:", orDash(run.Spec.Profile)},
		{"Phase:", orDash(string(s.Phase)) + reasonSuffix(s.Reason, "")},
		{"Verdict:", orDash(string(s.Verdict))},
	}
	if run.Spec.ManagedBy == v1alpha1.ManagedByMultiKueue {
		head = append(head, []string{"Runs in:", workerLine(run)})
	}
	if s.Message != "" {
		head = append(head, []string{"Message:", oneLine(s.Message)})
	}
	if s.StartTime != nil {
		head = append(head, []string{"Started:", s.StartTime.UTC().Format(time.RFC3339)})
	}
	if s.CompletionTime != nil {
		d := ""
		if s.StartTime != nil {
			d = " (" + s.CompletionTime.Sub(s.StartTime.Time).Round(time.Second).String() + " after the start)"
		}
		head = append(head, []string{"Completed:", s.CompletionTime.UTC().Format(time.RFC3339) + d})
	}
	if s.Phase == v1alpha1.PhaseRunning && s.Progress != nil {
		head = append(head, []string{"Progress:", progressLine(run)})
	}
	if s.GeneratorBound {
		head = append(head, []string{"Generator bound:", "yes: " + orDash(s.GeneratorBoundReason)})
	}
	if describe {
		if s.TestID != "" {
			head = append(head, []string{"Test ID:", s.TestID})
		}
		if s.TargetNamespace != "" {
			head = append(head, []string{"Target namespace:", s.TargetNamespace})
		}
	}
	section(w, "", head)

	if r := s.Results; r != nil {
		var rows [][]string
		if r.Partial {
			rows = append(rows, []string{"Partial:", "yes: some runner's results could not be read; the numbers cover the rest"})
		}
		if q := r.Requests; q != nil {
			proto := ""
			if r.Protocol != "" {
				proto = " (" + r.Protocol + ")"
			}
			rows = append(rows, []string{"Requests" + proto + ":", fmt.Sprintf("total %d  accepted %d  dropped %d  dropped %s%%", q.Total, q.Accepted, q.Dropped, orDash(q.DroppedPercent))})
		}
		if it := r.Iterations; it != nil {
			rows = append(rows, []string{"Iterations:", fmt.Sprintf("total %d  dropped %d", it.Total, it.Dropped)})
		}
		if t := r.Throughput; t != nil {
			rows = append(rows, []string{"Throughput:", fmt.Sprintf("%s req/s  received %s Mb/s  sent %s Mb/s", orDash(t.RequestsPerSecond), orDash(t.ReceivedMbps), orDash(t.SentMbps))})
		}
		if l := r.Latency; l != nil {
			rows = append(rows, []string{"Latency:", fmt.Sprintf("avg %s  p50 %s  p95 %s  p99 %s  (min %s  p90 %s  max %s)",
				orDash(l.Avg), orDash(l.P50), orDash(l.P95), orDash(l.P99), orDash(l.Min), orDash(l.P90), orDash(l.Max))})
		}
		if ck := r.Checks; ck != nil {
			rows = append(rows, []string{"Checks:", fmt.Sprintf("passed %d  failed %d", ck.Passed, ck.Failed)})
		}
		section(w, "Results", rows)
		if len(r.Thresholds) > 0 {
			rows = [][]string{{"METRIC", "EXPRESSION", "VALUE", "RESULT"}}
			for _, t := range r.Thresholds {
				rows = append(rows, []string{t.Metric, t.Expression, orDash(t.Value), passFail(t.Passed)})
			}
			section(w, "Thresholds", rows)
		}
	}
	if len(s.Zones) > 0 {
		section(w, "Zones", zoneRows(s.Zones))
	}
	if t := s.Target; t != nil {
		var rows [][]string
		if m := t.Memory; m != nil {
			rows = append(rows, []string{"Memory:", fmt.Sprintf("before %d MiB  after %d MiB  peak %d MiB  increase %d MiB (%s%%)  per device %s MiB  utilization %s%%",
				m.BeforeMiB, m.AfterMiB, m.PeakMiB, m.IncreaseMiB, orDash(m.IncreasePercent), orDash(m.PerDeviceMiB), orDash(m.UtilizationPercent))})
		}
		if c := t.CPU; c != nil {
			rows = append(rows, []string{"CPU:", fmt.Sprintf("average %s  peak %s (cores per core)", orDash(c.AverageCoresPerCore), orDash(c.PeakCoresPerCore))})
		}
		rows = append(rows, []string{"Restarts:", fmt.Sprintf("%d  (OOM kills %d)", t.Restarts, t.OOMKills)})
		for _, f := range t.LogFindings {
			sample := ""
			if f.Sample != "" {
				sample = "  e.g. " + oneLine(f.Sample)
			}
			rows = append(rows, []string{"Log finding:", fmt.Sprintf("%q: %d%s", f.Pattern, f.Count, sample)})
		}
		if describe && t.Source != "" {
			rows = append(rows, []string{"Source:", fmt.Sprintf("%s (%d samples)", t.Source, t.Samples)})
		}
		section(w, "Target", rows)
	}
	if c := s.Capacity; c != nil {
		rows := [][]string{
			{"Pushes per second:", orDash(c.PushesPerSecond)},
			{"Max devices:", fmt.Sprintf("ideal %s  typical %s  safe %s  at full RAM (seed 000) %s", count(c.IdealMaxDevices), count(c.TypicalMaxDevices), count(c.SafeMaxDevices), count(c.MaxSafeDevicesByMemory))},
		}
		if c.BreakingPointDevices > 0 {
			rows = append(rows, []string{"Breaking point:", fmt.Sprintf("%d devices", c.BreakingPointDevices)})
		}
		section(w, "Capacity", rows)
	}
	if pk := s.Peak; pk != nil && (describe || pk.BreakingPoint != "") {
		rows := [][]string{{"Outcome:", fmt.Sprintf("%s  last held %d devices  first failed %d  %s", orDash(pk.BreakingPoint), pk.LastHeldDevices, pk.FirstFailedDevices, pk.StopRule)}}
		section(w, "Peak", rows)
		if describe && len(pk.Steps) > 0 {
			rows = [][]string{{"DEVICES", "REQUESTS", "REQ/S", "DROPPED%", "ERRORS%", "P95", "HELD"}}
			for _, st := range pk.Steps {
				rows = append(rows, []string{fmt.Sprint(st.Devices), fmt.Sprint(st.Requests), orDash(st.RequestsPerSecond), orDash(st.DroppedPercent), orDash(st.ErrorPercent), orDash(st.P95), yesNo(st.Held)})
			}
			section(w, "Peak steps", rows)
		}
	}
	if ab := s.AbortOnFail; ab != nil && ab.Aborted != "" {
		section(w, "Aborted", [][]string{{"Threshold:", ab.Aborted}})
	}
	writeRunComparison(w, "the baseline", "Baseline:", s.Comparison)
	writeRunComparison(w, "the fixed reference", "Reference:", s.ReferenceComparison)
	writeRunTrend(w, s.Trend)
	if s.Results != nil && len(s.Results.Warnings) > 0 {
		var rows [][]string
		for _, wn := range s.Results.Warnings {
			rows = append(rows, []string{"- " + oneLine(wn)})
		}
		section(w, "Warnings", rows)
	}
	if !describe {
		return
	}
	if s.Results != nil && len(s.Results.Scenarios) > 0 {
		rows := [][]string{{"SCENARIO", "REQUESTS", "ITERATIONS", "REQ/S", "P95"}}
		for _, sc := range s.Results.Scenarios {
			rows = append(rows, []string{sc.Name, fmt.Sprint(sc.Requests), fmt.Sprint(sc.Iterations), orDash(sc.RequestsPerSecond), orDash(sc.P95)})
		}
		section(w, "Scenarios", rows)
	}
	if s.Results != nil && s.Results.Checks != nil && len(s.Results.Checks.ByName) > 0 {
		rows := [][]string{{"CHECK", "GROUP", "PASSED", "FAILED"}}
		for _, ck := range s.Results.Checks.ByName {
			rows = append(rows, []string{ck.Name, orDash(ck.Group), fmt.Sprint(ck.Passed), fmt.Sprint(ck.Failed)})
		}
		section(w, "Checks", rows)
	}
	if rc := s.Runners; rc != nil {
		section(w, "Runners", [][]string{{"Desired:", fmt.Sprint(rc.Desired)}, {"Ready:", fmt.Sprint(rc.Ready)}, {"Running:", fmt.Sprint(rc.Running)},
			{"Succeeded:", fmt.Sprint(rc.Succeeded)}, {"Failed:", fmt.Sprint(rc.Failed)}, {"Start skew:", orDash(rc.StartSkew)}})
	}
	writeConditions(w, s.Conditions)
}

func writeConditions(w io.Writer, conds []metav1.Condition) {
	if len(conds) == 0 {
		return
	}
	rows := [][]string{{"TYPE", "STATUS", "REASON", "MESSAGE"}}
	for _, c := range conds {
		rows = append(rows, []string{c.Type, string(c.Status), orDash(c.Reason), oneLine(c.Message)})
	}
	section(w, "Conditions", rows)
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// writePlan prints a CapacityPlan's sizing table and per-profile summary; describe adds its
// spec and conditions.
func writePlan(w io.Writer, p *v1alpha1.CapacityPlan, describe bool) {
	s := p.Status
	head := [][]string{
		{"CapacityPlan:", p.Namespace + "/" + p.Name},
		{"Profiles:", strings.Join(p.Spec.Profiles, ", ")},
		{"Phase:", orDash(s.Phase) + reasonSuffix(s.Reason, "")},
		{"Progress:", orDash(s.Progress)},
	}
	if s.Message != "" {
		head = append(head, []string{"Message:", oneLine(s.Message)})
	}
	if describe {
		var sweep []string
		for _, d := range p.Spec.Sweep {
			sweep = append(sweep, d.Name()+"="+strings.Join(d.Values, ","))
		}
		head = append(head, []string{"Sweep:", orDash(strings.Join(sweep, "; "))},
			[]string{"Repetitions:", fmt.Sprint(max(p.Spec.Repetitions, 1))},
			[]string{"Concurrency:", orDash(p.Spec.Concurrency)},
			[]string{"Failure policy:", orDash(p.Spec.FailurePolicy)})
	}
	section(w, "", head)

	rows := sizingTable(htmlreport.DimensionNames(p), columns.PlanRows(p))
	if len(s.Table) == 0 {
		rows = append(rows, []string{"(no rows yet)"})
	}
	section(w, "Sizing table", rows)

	if len(s.Summary) > 0 {
		rows = [][]string{{"PROFILE", "ROWS", "PASSED", "PUSHES/S", "IDEAL MAX", "TYPICAL MAX", "SAFE MAX", "DEVS AT FULL RAM", "BREAKING POINT"}}
		for _, ps := range s.Summary {
			rows = append(rows, []string{ps.Profile, fmt.Sprint(ps.Rows), fmt.Sprint(ps.Passed), orDash(ps.PushesPerSecond), count(ps.IdealMaxDevices),
				count(ps.TypicalMaxDevices), count(ps.SafeMaxDevices), count(ps.MaxSafeDevicesByMemory), count(ps.BreakingPointDevices)})
		}
		section(w, "Summary per profile (weakest passing row)", rows)
	}
	writePlanCapacity(w, &s)
	if describe {
		writeConditions(w, s.Conditions)
	}
}

// sizingTable is the plugin's table of rows: a header and a line each, in the Table columns of
// pkg/present/columns, with the plan's sweep dimensions after the profile.
func sizingTable(dims []string, rows []columns.Row) [][]string {
	cols := columns.For(columns.Table)
	var header []string
	for _, c := range cols {
		header = append(header, c.Header(columns.Table))
		if c.ID == columns.Profile {
			header = append(header, upper(dims)...)
		}
	}
	out := [][]string{header}
	for _, r := range rows {
		var line []string
		for _, c := range cols {
			v := r.Cell(c)
			if c.ID == columns.Verdict {
				// The terminal has no colour for a failed or generator-bound row: say it.
				if st := r.Run.Status; st.Reason != "" && st.Verdict != v1alpha1.VerdictPassed {
					v = strings.TrimSpace(v + " " + st.Reason)
				}
				if r.Run.Status.GeneratorBound {
					v = strings.TrimSpace(v + " (generator-bound)")
				}
			}
			line = append(line, orDash(v))
			if c.ID == columns.Profile {
				for _, d := range dims {
					line = append(line, orDash(r.Values[d]))
				}
			}
		}
		out = append(out, line)
	}
	return out
}

func upper(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToUpper(s)
	}
	return out
}

// count renders a device count, - for none.
func count(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// zoneRows are a zoned run's zones side by side: where each ran, its state, when it started
// after the first, and its own requests and latency.
func zoneRows(zones []v1alpha1.ZoneStatus) [][]string {
	rows := [][]string{{"ZONE", "CLUSTER", "RUNNERS", "STATE", "START OFFSET", "REQUESTS", "FAILED", "P50", "P95"}}
	for _, z := range zones {
		cluster := z.Cluster
		if cluster == "" {
			cluster = "(home)"
		}
		p50, p95 := "", ""
		if l := z.Latency; l != nil {
			p50, p95 = l.P50, l.P95
		}
		rows = append(rows, []string{z.Name, cluster, fmt.Sprint(z.Runners), string(z.State), orDash(z.StartOffset),
			fmt.Sprint(z.Requests), fmt.Sprint(z.FailedRequests), orDash(p50), orDash(p95)})
		if z.Message != "" && (z.State == v1alpha1.ZoneFailed || z.State == v1alpha1.ZoneLost) {
			rows = append(rows, []string{"", "why: " + oneLine(z.Message)})
		}
	}
	return rows
}
