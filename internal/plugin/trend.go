package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/judge/shift"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
)

// TrendKind heads trend's JSON document.
const TrendKind = "TestRunTrend"

// TrendDocument is `kubectl fleetbench trend --format json`: the runs in order and each
// metric's values and change points (indices into Runs), as pkg/judge/shift found them.
type TrendDocument struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Selector   string `json:"selector"`
	OrderBy    string `json:"orderBy"`
	Method     string `json:"method"`
	// Options are the detector's, defaults filled in; SmallestP is the smallest p-value the
	// test can give.
	Options   shift.Options `json:"options"`
	SmallestP float64       `json:"smallestP"`
	// Notes say which records were left out and why.
	Notes []string `json:"notes,omitempty"`
	shift.Trend
}

type trendFlags struct {
	selector, orderBy, format, out string
	metrics                        []string
	opts                           shift.Options
}

func newTrendCommand(o *options) *cobra.Command {
	f := trendFlags{}
	cmd := &cobra.Command{
		Use:   "trend -l SELECTOR [--order-by completion|label:KEY] [--metrics M,...] [--format table|html|json] [-o FILE]",
		Short: "Where did a metric shift across a test's kept runs, and by how much (change points)",
		Long: `Read the kept records of the namespace's runs that match the label selector (every run that
ended Succeeded keeps one, whatever its verdict: the verdict is shown), put them in order (by
completion time, or by a release label compared as versions: v1.9 < v1.10; records without
the label are left out) and find, per metric, the change points of its whole-run values:
E-Divisive means (Matteson & James 2014, as Apache Otava uses it) with a permutation test.
Each change point names the first run of the new level, the means before and after, the shift
in % and its p-value, and whether it is better or worse (throughput higher is better; latency
and the target's memory and CPU lower).

Defaults: p <= 0.01 with 199 permutations (the smallest reachable p-value is 0.005), windows of
50 runs, at least 2 runs a level; --test ttest --p-value 0.001 is Otava's own. A single run's jump is not a change point: compare that run
with its baseline (spec.baseline). The metrics are the built-ins unless --metrics names series
of the kept records (k6 metrics as in status.results.metrics).
  table  (default) the runs' values and the change points
  html   a page with a chart per metric, change points marked (trend.html unless -o says otherwise)
  json   the runs, values and change points`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc, err := o.trend(cmd, f)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			switch f.format {
			case "json":
				enc := json.NewEncoder(&buf)
				enc.SetIndent("", "  ")
				err = enc.Encode(doc)
			case formatHTML:
				err = htmlreport.WriteShift(&buf, htmlreport.ShiftInput{Namespace: doc.Namespace, Selector: doc.Selector,
					OrderBy: doc.OrderBy, Method: doc.Method, Trend: doc.Trend, RunLabels: runLabels(doc), Notes: doc.Notes})
				if f.out == "" {
					f.out = "trend.html"
				}
			default:
				writeTrend(&buf, doc)
			}
			if err != nil {
				return err
			}
			if f.out == "" || f.out == "-" {
				_, err := o.streams.Out.Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(o.streams.ErrOut, "wrote %s\n", f.out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "label selector of the test's runs (required), e.g. test=ingest")
	cmd.Flags().StringVar(&f.orderBy, "order-by", shift.OrderCompletion, "completion, or label:KEY to order by a release label")
	cmd.Flags().StringSliceVar(&f.metrics, "metrics", nil, "series to analyse (default: "+strings.Join(shift.BuiltinMetrics(), ",")+")")
	cmd.Flags().StringVar(&f.format, "format", "table", "table, html or json")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "file to write (- for standard output; html defaults to trend.html)")
	cmd.Flags().Float64Var(&f.opts.PValue, "p-value", shift.DefaultPValue, "largest p-value of a change point")
	cmd.Flags().IntVar(&f.opts.Permutations, "permutations", shift.DefaultPermutations, "permutations of the test (the smallest p-value is 1/(N+1))")
	cmd.Flags().IntVar(&f.opts.Window, "window", shift.DefaultWindow, "runs analysed together")
	cmd.Flags().StringVar((*string)(&f.opts.Test), "test", string(shift.Permutation), "permutation, or ttest (Otava's: Student's t-test of the two sides)")
	return cmd
}

// trend reads and orders the kept records and analyses them.
func (o *options) trend(cmd *cobra.Command, f trendFlags) (*TrendDocument, error) {
	f.format = strings.ToLower(f.format)
	if !slices.Contains([]string{"table", formatHTML, "json"}, f.format) {
		return nil, fmt.Errorf("--format %q: want table, html or json", f.format)
	}
	if strings.TrimSpace(f.selector) == "" {
		return nil, fmt.Errorf("-l SELECTOR is required: the runs of one test, e.g. -l test=ingest (kept records of different tests do not make a trend)")
	}
	sel, err := labels.Parse(f.selector)
	if err != nil {
		return nil, fmt.Errorf("-l %q: %w", f.selector, err)
	}
	if _, _, err := shift.Sort(nil, f.orderBy); err != nil {
		return nil, fmt.Errorf("--order-by: %w", err)
	}
	if f.opts.Test != shift.Permutation && f.opts.Test != shift.TTest {
		return nil, fmt.Errorf("--test %q: want %s or %s", f.opts.Test, shift.Permutation, shift.TTest)
	}
	if !(f.opts.PValue > 0 && f.opts.PValue < 1) {
		return nil, fmt.Errorf("--p-value %g: want a number between 0 and 1", f.opts.PValue)
	}
	c, ns, err := o.client()
	if err != nil {
		return nil, err
	}
	recs, unread, err := KeptRecords(cmd.Context(), c, ns, sel, shift.MaxRuns)
	if err != nil {
		return nil, err
	}
	opts := f.opts.WithDefaults()
	doc := &TrendDocument{APIVersion: CompareAPIVersion, Kind: TrendKind, Namespace: ns, Selector: sel.String(), OrderBy: f.orderBy,
		Options: opts, SmallestP: opts.SmallestP()}
	for _, u := range unread {
		doc.Notes = append(doc.Notes, "left out, not readable: "+u)
	}
	sorted, skipped, _ := shift.Sort(recs, f.orderBy)
	if len(skipped) > 0 {
		doc.Notes = append(doc.Notes, fmt.Sprintf("left out %d runs without label %s: %s", len(skipped),
			strings.TrimPrefix(f.orderBy, shift.OrderLabelPrefix), strings.Join(runNames(skipped, 5), ", ")))
	}
	doc.Trend = shift.Analyze(sorted, f.metrics, opts)
	test := fmt.Sprintf("permutation test (%d permutations, smallest p %.3g)", opts.Permutations, doc.SmallestP)
	if opts.Test == shift.TTest {
		test = "Student's t-test of the two sides (Otava's)"
	}
	doc.Method = fmt.Sprintf("E-Divisive means over whole-run values, %s, change points at p <= %g, windows of %d runs, at least %d runs a level",
		test, opts.PValue, opts.Window, opts.MinSegment)
	if opts.PValue < doc.SmallestP {
		doc.Notes = append(doc.Notes, fmt.Sprintf("--p-value %g is below the smallest p-value %d permutations can give (%.3g): no change point can be found; raise --permutations",
			opts.PValue, opts.Permutations, doc.SmallestP))
	}
	if len(doc.Runs) == 0 {
		doc.Notes = append(doc.Notes, fmt.Sprintf("no kept record in namespace %s matches %s", ns, sel.String()))
	}
	return doc, nil
}

func runNames(recs []compare.Record, most int) []string {
	var out []string
	for i, r := range recs {
		if i == most {
			return append(out, fmt.Sprintf("and %d more", len(recs)-most))
		}
		out = append(out, r.Run.Name)
	}
	return out
}

// runLabels are the release label's values when the runs are ordered by it, else their names.
func runLabels(doc *TrendDocument) []string {
	key, byLabel := strings.CutPrefix(doc.OrderBy, shift.OrderLabelPrefix)
	out := make([]string, len(doc.Runs))
	for i, r := range doc.Runs {
		out[i] = r.Name
		if byLabel {
			out[i] = r.Labels[key]
		}
	}
	return out
}

// writeTrend prints the runs with a column per metric (a * marks the first run of a new level)
// and the change points.
func writeTrend(w io.Writer, doc *TrendDocument) {
	head := [][]string{{"Runs:", fmt.Sprintf("%d kept runs matching %s in namespace %s, by %s", len(doc.Runs), doc.Selector, doc.Namespace, doc.OrderBy)},
		{"Method:", doc.Method}}
	for _, n := range doc.Notes {
		head = append(head, []string{"Note:", n})
	}
	section(w, "", head)
	if len(doc.Runs) == 0 {
		return
	}
	key, byLabel := strings.CutPrefix(doc.OrderBy, shift.OrderLabelPrefix)
	header := []string{"#", "RUN"}
	if byLabel {
		header = append(header, strings.ToUpper(key))
	}
	header = append(header, "COMPLETED", "VERDICT")
	cells := make([]map[int]string, len(doc.Metrics))
	for i, m := range doc.Metrics {
		header = append(header, strings.ToUpper(htmlreport.MetricTitle(m)))
		cells[i] = map[int]string{}
		format := htmlreport.ShiftFormat(m)
		for _, v := range m.Values {
			cells[i][v.Run] = format(v.Value)
		}
		for _, cp := range m.ChangePoints {
			cells[i][cp.Index] += "*"
		}
	}
	rows := [][]string{header}
	for r, run := range doc.Runs {
		line := []string{strconv.Itoa(r + 1), run.Name}
		if byLabel {
			line = append(line, orDash(run.Labels[key]))
		}
		line = append(line, run.CompletionTime.UTC().Format(time.RFC3339), orDash(run.Verdict))
		for i := range doc.Metrics {
			line = append(line, orDash(cells[i][r]))
		}
		rows = append(rows, line)
	}
	section(w, "Runs (* the first run of a new level)", rows)
	points := [][]string{{"METRIC", "NEW LEVEL FROM", "BEFORE", "AFTER", "SHIFT", "P", ""}}
	for _, m := range doc.Metrics {
		format := htmlreport.ShiftFormat(m)
		for _, cp := range m.ChangePoints {
			points = append(points, []string{htmlreport.MetricTitle(m), doc.Runs[cp.Index].Name, format(cp.Before),
				format(cp.After), htmlreport.ShiftPercent(cp.ShiftPercent), strconv.FormatFloat(cp.PValue, 'g', 3, 64), cp.Direction})
		}
	}
	if len(points) == 1 {
		points = [][]string{{"(none)"}}
	}
	section(w, "Change points", points)
}
