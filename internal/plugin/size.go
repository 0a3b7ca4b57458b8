package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/plan"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// SizeKind heads `size -o json`.
const SizeKind = "FleetSizing"

// SizeDocument is `kubectl fleetbench size PLAN -o json`: the answer, as status.answer would
// carry it, and every option at the question's period.
type SizeDocument struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Namespace  string               `json:"namespace"`
	Plan       string               `json:"plan"`
	PlanPeriod string               `json:"planPeriod,omitempty"`
	Answer     v1alpha1.FleetAnswer `json:"answer"`
	Options    []SizeOptionRow      `json:"options"`
	Notes      []string             `json:"notes,omitempty"`
}

// SizeOptionRow is one profile the answer weighed.
type SizeOptionRow struct {
	Profile   string  `json:"profile"`
	Cores     float64 `json:"cores,omitempty"`
	MemoryGiB float64 `json:"memoryGiB,omitempty"`
	Predicted bool    `json:"predicted"`
	// SafeAtPlanPeriod is the safe fleet as measured (or predicted); Safe is at the question's
	// period, and Limit what bounds it there: the throughput bound rescaled, or MemoryBound,
	// which no period changes.
	SafeAtPlanPeriod int64  `json:"safeAtPlanPeriod,omitempty"`
	Safe             int64  `json:"safe,omitempty"`
	MemoryBound      int64  `json:"memoryBound,omitempty"`
	Holds            bool   `json:"holds"`
	Limit            string `json:"limit,omitempty"`
	MonthlyCost      string `json:"monthlyCost,omitempty"`
	Currency         string `json:"currency,omitempty"`
}

// none marks a value that is missing (never 0, which reads as a measurement).
const none = "—"

func newSizeCommand(o *options) *cobra.Command {
	var (
		devices int64
		period  string
		output  string
	)
	cmd := &cobra.Command{
		Use:   "size PLAN --devices N [--period 260s] [-o table|json]",
		Short: "Which of a CapacityPlan's profiles holds N devices, with what headroom, and at what cost",
		Long: `Answer a planner's question from a finished CapacityPlan: the smallest profile (fewest
cores, then least memory, a measured one before a predicted one) whose safe fleet holds N
devices each pushing once per --period, the headroom left, what bounds it, and, when the
Profile has a price, the cost per month and per 1,000 devices per month.

The plan's safe fleets were measured at its push period (spec.capacity.pushPeriod, else the
template's load period); their throughput bound is rescaled to --period through Little's law
(rate = devices / period): halving the period halves the devices. The memory bound (devices ×
memory per device against the profile's memory) is not rescaled: at any period the safe fleet
is the smaller of the two. Without --period, the plan's own period.

Profiles of status.model's predictions (spec.predict) are weighed too, marked predicted.
Exit code 1 when no profile holds the fleet.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("-o %q: want table or json", output)
			}
			if devices < 1 || devices > 1_000_000_000 {
				return fmt.Errorf("--devices %d: want 1 to 1,000,000,000", devices)
			}
			doc, err := o.size(cmd.Context(), args[0], devices, period)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(o.streams.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(doc); err != nil {
					return err
				}
			} else {
				writeSize(o.streams.Out, doc)
			}
			if doc.Answer.Profile == "" {
				return &exitError{code: ExitFailed}
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&devices, "devices", 0, "devices in the fleet (required)")
	cmd.Flags().StringVar(&period, "period", "", "how often each device pushes, e.g. 260s or 5m (default: the plan's push period)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	_ = cmd.MarkFlagRequired("devices")
	return cmd
}

// size reads the plan and its Profiles and answers the question with pkg/plan, as the
// CapacityPlan controller answers spec.question.
func (o *options) size(ctx context.Context, arg string, devices int64, period string) (*SizeDocument, error) {
	c, obj, err := o.resolve(ctx, arg, true)
	if err != nil {
		return nil, err
	}
	p := obj.plan
	doc := &SizeDocument{APIVersion: CompareAPIVersion, Kind: SizeKind, Namespace: p.Namespace, Plan: p.Name}
	planPeriod, perr := plan.PlanPeriod(&p.Spec)
	if perr != nil {
		return nil, fmt.Errorf("CapacityPlan %s: %w", p.Name, perr)
	}
	doc.PlanPeriod = plan.FormatPeriod(planPeriod)
	if period == "" {
		period = doc.PlanPeriod
	}
	if d, err := time.ParseDuration(period); err != nil || d <= 0 {
		return nil, fmt.Errorf("--period %q: want a positive duration such as 260s or 5m", period)
	}
	if p.Status.Phase != v1alpha1.PlanSucceeded {
		doc.Notes = append(doc.Notes, fmt.Sprintf("the plan is %s (%s cells done): the answer is from the cells done so far", orDash(p.Status.Phase), orDash(p.Status.Progress)))
	}
	profiles, notes, err := readProfiles(ctx, c, p)
	if err != nil {
		return nil, err
	}
	doc.Notes = append(doc.Notes, notes...)
	options := plan.SizeOptions(p, profiles)
	answer, at := plan.AnswerWithOptions(v1alpha1.FleetQuestion{Devices: devices, Period: v1alpha1.Duration(period)}, planPeriod, options)
	doc.Answer = answer
	doc.Options = make([]SizeOptionRow, 0, len(at))
	for _, a := range at {
		r := SizeOptionRow{Profile: a.Profile, Cores: a.Cores, MemoryGiB: a.MemoryGiB, Predicted: a.Predicted, SafeAtPlanPeriod: a.SafeFleet,
			Safe: a.Safe, MemoryBound: a.MemorySafe, Holds: a.Holds, Limit: a.Limit, MonthlyCost: a.Monthly}
		if a.Monthly != "" {
			r.Currency = a.Price.Currency
		}
		doc.Options = append(doc.Options, r)
	}
	return doc, nil
}

// readProfiles gets the Profiles the plan's summary and model name, by their lower-case
// name as a TestRun's profile is found; one that is gone or may not be read leaves its size
// and price unknown, and is noted.
func readProfiles(ctx context.Context, c client.Client, p *v1alpha1.CapacityPlan) (map[string]v1alpha1.ProfileSpec, []string, error) {
	names := append([]string{}, p.Spec.Profiles...)
	for _, s := range p.Status.Summary {
		names = append(names, s.Profile)
	}
	if m := p.Status.Model; m != nil {
		for _, pr := range m.Predictions {
			names = append(names, pr.Profile)
		}
	}
	out := map[string]v1alpha1.ProfileSpec{}
	var notes []string
	tried := map[string]bool{}
	for _, n := range names {
		key := strings.ToLower(n)
		if tried[key] {
			continue
		}
		tried[key] = true
		prof := &v1alpha1.Profile{}
		switch err := c.Get(ctx, client.ObjectKey{Name: key}, prof); {
		case err == nil:
			out[key] = prof.Spec
		case apierrors.IsNotFound(err):
			notes = append(notes, fmt.Sprintf("Profile %s is gone: its size and price are unknown, so it is weighed last", n))
		case apierrors.IsForbidden(err):
			notes = append(notes, fmt.Sprintf("Profile %s may not be read (%s): its size and price are unknown, so it is weighed last", n, err.Error()))
		default:
			return nil, nil, err
		}
	}
	return out, notes, nil
}

// writeSize prints the answer, then every option at the question's period.
func writeSize(w io.Writer, doc *SizeDocument) {
	a := doc.Answer
	head := [][]string{
		{"CapacityPlan:", doc.Namespace + "/" + doc.Plan},
		{"Question:", fmt.Sprintf("%s devices every %s (%s/s); the plan measured at %s", plan.Grouped(a.Devices), a.Period, orNone(a.Rate), orNone(doc.PlanPeriod))},
		{"Answer:", orNone(a.Profile) + predictedSuffix(a.Predicted)},
		{"Message:", oneLine(a.Message)},
	}
	if a.Profile != "" {
		head = append(head, []string{"Headroom:", a.HeadroomPercent + " %"}, []string{"Bound by:", orNone(a.Limit)})
		if a.MonthlyCost != "" {
			head = append(head, []string{"Cost:", fmt.Sprintf("%s %s a month, %s %s per 1,000 devices a month (price of %s)",
				a.MonthlyCost, a.Currency, a.CostPer1000Devices, a.Currency, a.PriceAsOf)})
		}
	}
	for _, n := range doc.Notes {
		head = append(head, []string{"Note:", oneLine(n)})
	}
	section(w, "", head)
	rows := [][]string{{"PROFILE", "CPU", "MEMORY", "SOURCE", "SAFE AS RUN (" + doc.PlanPeriod + ")", "MEMORY BOUND", "SAFE AT " + a.Period, "HOLDS", "LIMIT", "MONTHLY COST"}}
	for _, r := range doc.Options {
		src := "measured"
		if r.Predicted {
			src = "predicted"
		}
		cost := none
		if r.MonthlyCost != "" {
			cost = r.MonthlyCost + " " + r.Currency
		}
		rows = append(rows, []string{r.Profile, number(r.Cores), gib(r.MemoryGiB), src, devicesOrNone(r.SafeAtPlanPeriod), devicesOrNone(r.MemoryBound),
			devicesOrNone(r.Safe), yesNo(r.Holds), orNone(r.Limit), cost})
	}
	section(w, "Profiles (smallest first; SAFE AT the question's period: the throughput bound rescaled, capped at MEMORY BOUND)", rows)
}

func predictedSuffix(p bool) string {
	if p {
		return " (predicted)"
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return textsafe.Line(s)
}

func devicesOrNone(n int64) string {
	if n <= 0 {
		return none
	}
	return strconv.FormatInt(n, 10)
}

func number(v float64) string {
	if v <= 0 {
		return none
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func gib(v float64) string {
	if v <= 0 {
		return none
	}
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".") + " GiB"
}
