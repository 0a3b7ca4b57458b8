package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
)

// Report formats.
const (
	formatHTML  = "html"
	formatJSON  = "json"
	formatJUnit = "junit"
	formatCSV   = "csv"
)

func newReportCommand(o *options) *cobra.Command {
	var plan bool
	var out, format, traceURL string
	cmd := &cobra.Command{
		Use:   "report NAME [-o FILE] [--format html|json|junit|csv]",
		Short: "Write a TestRun's or a CapacityPlan's report",
		Long: `Write a report of a TestRun or a CapacityPlan:
  html   (default) one self-contained page with the run over time (NAME.html unless -o says otherwise)
  json   the TestRun's spec summary and status, with the full k6 summary and the timeline when kept
  junit  a JUnit XML testsuite: a testcase per threshold, one per metric compared with the
         baseline (failed when Regressed, skipped when too few samples) and one for the run
  csv    seed 000's sizing-table columns: a row per CapacityPlan table row, or one for a TestRun
-o - writes to standard output, the default for json, junit and csv.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format = strings.ToLower(format)
			if !slices.Contains([]string{formatHTML, formatJSON, formatJUnit, formatCSV}, format) {
				return fmt.Errorf("--format %q: want html, json, junit or csv", format)
			}
			if traceURL != "" {
				if err := htmlreport.CheckTraceURL(traceURL); err != nil {
					return fmt.Errorf("--trace-url: %w", err)
				}
			}
			c, obj, err := o.resolve(cmd.Context(), args[0], plan)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := writeReport(cmd.Context(), c, &buf, obj, format, traceURL); err != nil {
				return err
			}
			if out == "" && format == formatHTML {
				out = objectName(obj) + ".html"
			}
			if out == "" || out == "-" {
				_, err := o.streams.Out.Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(o.streams.ErrOut, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&plan, "plan", false, "NAME is a CapacityPlan")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (- for standard output; html defaults to NAME.html)")
	cmd.Flags().StringVar(&format, "format", formatHTML, "html, json, junit or csv")
	cmd.Flags().StringVar(&traceURL, "trace-url", os.Getenv(TraceURLEnv), "link the slowest requests' trace ids through this http(s) URL, "+
		htmlreport.TraceIDPlaceholder+" replaced by the id (e.g. http://jaeger.example/trace/"+htmlreport.TraceIDPlaceholder+
		"); default $"+TraceURLEnv)
	return cmd
}

func objectName(obj object) string {
	if obj.run != nil {
		return obj.run.Name
	}
	return obj.plan.Name
}

// TraceURLEnv is the default of report --trace-url: an admin sets it once for a cluster's
// trace UI (Jaeger, Tempo through Grafana, ...), in a shell profile or a CI job's environment.
const TraceURLEnv = "FLEETBENCH_TRACE_URL"

func writeReport(ctx context.Context, c client.Client, w io.Writer, obj object, format, traceURL string) error {
	switch format {
	case formatHTML:
		if obj.run != nil {
			in := htmlreport.TestRunInput{Run: obj.run, TraceURL: traceURL}
			var err error
			if in.Summary, in.Timeline, err = FullResult(ctx, c, obj.run); err != nil {
				return err
			}
			in.Baseline, in.BaselineMissing = KeptBaseline(ctx, c, obj.run)
			return htmlreport.WriteTestRun(w, in)
		}
		children, err := planChildren(ctx, c, obj.plan)
		if err != nil {
			return err
		}
		return htmlreport.WritePlan(w, htmlreport.PlanInput{Plan: obj.plan, Children: children})
	case formatJSON:
		var doc any
		if obj.run != nil {
			d, err := testRunDocument(ctx, c, obj.run)
			if err != nil {
				return err
			}
			doc = d
		} else {
			children, err := planChildren(ctx, c, obj.plan)
			if err != nil {
				return err
			}
			doc = planDocument(obj.plan, children)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case formatJUnit:
		var suites junitSuites
		if obj.run != nil {
			suites = junitTestRun(obj.run)
		} else {
			suites = junitPlan(obj.plan)
		}
		if _, err := io.WriteString(w, xml.Header); err != nil {
			return err
		}
		enc := xml.NewEncoder(w)
		enc.Indent("", "  ")
		if err := enc.Encode(suites); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	case formatCSV:
		if obj.run != nil {
			return writeCSV(w, []columns.Row{columns.RunRow(obj.run)})
		}
		return writeCSV(w, columns.PlanRows(obj.plan))
	}
	return fmt.Errorf("unknown format %q", format)
}

// FullResult reads the k6 summary and the timeline from the TestRun's results ConfigMap; both
// are nil when the run kept none (or not yet).
func FullResult(ctx context.Context, c client.Reader, run *v1alpha1.TestRun) (*judge.K6Summary, *judge.Timeline, error) {
	if run.Status.Results == nil || run.Status.Results.FullResult == nil || run.Status.Results.FullResult.ConfigMap == "" {
		return nil, nil, nil
	}
	ref := run.Status.Results.FullResult
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.ConfigMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("reading the full result (configmap %s): %w", ref.ConfigMap, err)
	}
	summaryKey := ref.Key
	if summaryKey == "" {
		summaryKey = judge.SummaryKey
	}
	var summary *judge.K6Summary
	if data, ok := cm.BinaryData[summaryKey]; ok {
		summary = &judge.K6Summary{}
		if err := judge.DecodeGzipJSON(data, summary); err != nil {
			return nil, nil, fmt.Errorf("configmap %s key %s: %w", cm.Name, summaryKey, err)
		}
	}
	var timeline *judge.Timeline
	if data, ok := cm.BinaryData[judge.TimelineKey]; ok {
		timeline = &judge.Timeline{}
		if err := judge.DecodeGzipJSON(data, timeline); err != nil {
			return nil, nil, fmt.Errorf("configmap %s key %s: %w", cm.Name, judge.TimelineKey, err)
		}
	}
	return summary, timeline, nil
}

// planChildren are the TestRuns the plan controls (labelled with its name and owned by it),
// sorted by name.
func planChildren(ctx context.Context, c client.Client, p *v1alpha1.CapacityPlan) ([]v1alpha1.TestRun, error) {
	var list v1alpha1.TestRunList
	if err := c.List(ctx, &list, client.InNamespace(p.Namespace), client.MatchingLabels{naming.LabelPlan: p.Name}); err != nil {
		return nil, err
	}
	var out []v1alpha1.TestRun
	for _, r := range list.Items {
		if metav1.IsControlledBy(&r, p) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.TestRun) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ReportAPIVersion versions the JSON report's shape: fields are only ever added under it.
const ReportAPIVersion = "report.fleetbench.dev/v1"

// ReportMeta heads every JSON report: its shape's version and kind, and the object reported.
type ReportMeta struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Name       string      `json:"name"`
	Namespace  string      `json:"namespace"`
	UID        string      `json:"uid"`
	Created    metav1.Time `json:"created"`
}

func reportMeta(kind string, o metav1.Object) ReportMeta {
	return ReportMeta{APIVersion: ReportAPIVersion, Kind: kind, Name: o.GetName(), Namespace: o.GetNamespace(), UID: string(o.GetUID()),
		Created: o.GetCreationTimestamp()}
}

// TestRunDocument is the JSON report of a TestRun.
type TestRunDocument struct {
	ReportMeta
	Spec   SpecSummary            `json:"spec"`
	Status v1alpha1.TestRunStatus `json:"status"`
	// FullResult is the merged result in k6's end-of-test summary shape, when kept.
	FullResult *judge.K6Summary `json:"fullResult,omitempty"`
	// Timeline is the run over time, when kept.
	Timeline *judge.Timeline `json:"timeline,omitempty"`
}

// SpecSummary is what a TestRun asked for, without the script.
type SpecSummary struct {
	Type        v1alpha1.TestType                 `json:"type,omitempty"`
	Profile     string                            `json:"profile,omitempty"`
	Components  []string                          `json:"components,omitempty"`
	ExternalURL string                            `json:"externalURL,omitempty"`
	Load        *v1alpha1.LoadSpec                `json:"load,omitempty"`
	Parallelism *intstr.IntOrString               `json:"parallelism,omitempty"`
	Thresholds  map[string]v1alpha1.ThresholdList `json:"thresholds,omitempty"`
	Capacity    *v1alpha1.CapacitySpec            `json:"capacity,omitempty"`
}

func specSummary(s *v1alpha1.TestRunSpec) SpecSummary {
	out := SpecSummary{Type: s.Type, Profile: s.Profile, Load: s.Load, Parallelism: s.Parallelism, Thresholds: s.Thresholds, Capacity: s.Capacity}
	for _, c := range s.Target.Components {
		d := c.Name + ": " + string(c.Kind)
		if c.Engine != "" {
			d += " (" + c.Engine + ")"
		}
		out.Components = append(out.Components, d)
	}
	if s.Target.External != nil {
		out.ExternalURL = s.Target.External.URL
	}
	return out
}

func testRunDocument(ctx context.Context, c client.Client, run *v1alpha1.TestRun) (*TestRunDocument, error) {
	summary, timeline, err := FullResult(ctx, c, run)
	if err != nil {
		return nil, err
	}
	return &TestRunDocument{ReportMeta: reportMeta("TestRunReport", run), Spec: specSummary(&run.Spec), Status: run.Status,
		FullResult: summary, Timeline: timeline}, nil
}

// PlanDocument is the JSON report of a CapacityPlan.
type PlanDocument struct {
	ReportMeta
	Profiles []string                    `json:"profiles"`
	Sweep    []v1alpha1.SweepDimension   `json:"sweep,omitempty"`
	Template SpecSummary                 `json:"template"`
	Status   v1alpha1.CapacityPlanStatus `json:"status"`
	Children []ChildSummary              `json:"children,omitempty"`
}

// ChildSummary is one child TestRun of a plan.
type ChildSummary struct {
	Name    string                `json:"name"`
	Phase   v1alpha1.TestRunPhase `json:"phase,omitempty"`
	Verdict v1alpha1.Verdict      `json:"verdict,omitempty"`
	Reason  string                `json:"reason,omitempty"`
}

func planDocument(p *v1alpha1.CapacityPlan, children []v1alpha1.TestRun) *PlanDocument {
	d := &PlanDocument{ReportMeta: reportMeta("CapacityPlanReport", p), Profiles: p.Spec.Profiles, Sweep: p.Spec.Sweep,
		Template: specSummary(&p.Spec.Template), Status: p.Status}
	for _, c := range children {
		d.Children = append(d.Children, ChildSummary{Name: c.Name, Phase: c.Status.Phase, Verdict: c.Status.Verdict, Reason: c.Status.Reason})
	}
	return d
}
