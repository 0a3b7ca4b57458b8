package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(loadStart.Add(d)); return &t }

// fixtureGap is runner 1 deleted 120 s into the fixture's 5-minute load: its results kept to
// 110 s, its replacement started at 135 s.
func fixtureGap() v1alpha1.RunnerGap {
	return v1alpha1.RunnerGap{Runner: 1, Replacement: 1, LostPod: "stab-2-2-c1-runner-1-x7k2p", Cause: "Deleted",
		LostAt: *at(120 * time.Second), ObservedUntil: at(110 * time.Second), ReplacedAt: at(135 * time.Second),
		Job: "stab-2-2-c1-runner-1-r1", Remaining: "2m45s", EstimatedUnobserved: 1480}
}

// fixtureGapRun is the fixture run with that one gap.
func fixtureGapRun() *v1alpha1.TestRun {
	run := fixtureTestRun()
	run.Status.Gaps = []v1alpha1.RunnerGap{fixtureGap()}
	return run
}

// TestGapSpans: every gap is one shaded span on each chart over time (none on the latency
// histogram), from what the lost runner's kept results cover to its replacement's start,
// labelled with the runner, the cause, the time to replacement and the requests unobserved.
func TestGapSpans(t *testing.T) {
	sec := func(d time.Duration) float64 { return unixSeconds(loadStart.Add(d)) }
	loadEnd := fixtureWindows * 10 * time.Second
	rows := []struct {
		name     string
		gap      func(g *v1alpha1.RunnerGap)
		from, to float64
		label    string
	}{
		{"replaced", func(*v1alpha1.RunnerGap) {}, sec(110 * time.Second), sec(135 * time.Second),
			"runner 1 lost (Deleted), replaced after 15s; ~1480 requests unobserved"},
		// Nothing kept: its share is missing from the load's start (estimatedUnobserved counts so).
		{"nothing kept", func(g *v1alpha1.RunnerGap) { g.ObservedUntil = nil }, sec(0), sec(135 * time.Second),
			"runner 1 lost (Deleted), replaced after 15s; ~1480 requests unobserved"},
		{"too late to replace", func(g *v1alpha1.RunnerGap) { g.ReplacedAt, g.Job, g.Cause = nil, "", "OOMKilled" },
			sec(110 * time.Second), sec(loadEnd), "runner 1 lost (OOMKilled), not replaced (too late in the load); ~1480 requests unobserved"},
		{"replacement starting", func(g *v1alpha1.RunnerGap) { g.ReplacedAt = nil }, sec(110 * time.Second), sec(loadEnd),
			"runner 1 lost (Deleted), replacement starting; ~1480 requests unobserved"},
		// Times out of order (a clock step): an empty span at the start, never a negative one.
		{"replaced before observed", func(g *v1alpha1.RunnerGap) { g.ReplacedAt = at(100 * time.Second) }, sec(110 * time.Second), sec(110 * time.Second),
			"runner 1 lost (Deleted), replaced after 0s; ~1480 requests unobserved"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			run, g := fixtureTestRun(), fixtureGap()
			row.gap(&g)
			run.Status.Gaps = []v1alpha1.RunnerGap{g}
			charts := withGaps(TestRunCharts(fixtureTimeline()), run, fixtureTimeline())
			for _, c := range charts {
				want := 0
				if c.Kind == KindTime {
					want = 1
				}
				if len(c.Spans) != want {
					t.Fatalf("%s has %d spans, want %d", c.Name, len(c.Spans), want)
				}
				if want == 0 {
					continue
				}
				if s := c.Spans[0]; s.From != row.from || s.To != row.to || s.Label != row.label {
					t.Errorf("%s: span %v–%v %q, want %v–%v %q", c.Name, s.From, s.To, s.Label, row.from, row.to, row.label)
				}
			}
		})
	}
	t.Run("no gaps", func(t *testing.T) {
		for _, c := range withGaps(TestRunCharts(fixtureTimeline()), fixtureTestRun(), fixtureTimeline()) {
			if len(c.Spans) != 0 {
				t.Errorf("%s has spans %+v without gaps", c.Name, c.Spans)
			}
		}
	})
	t.Run("bounded", func(t *testing.T) {
		run := fixtureTestRun()
		for range 3 * v1alpha1.MaxReplacementsLimit {
			run.Status.Gaps = append(run.Status.Gaps, fixtureGap())
		}
		target := chartNamed(t, withGaps(TestRunCharts(fixtureTimeline()), run, fixtureTimeline()), "target")
		if len(target.Spans) != v1alpha1.MaxReplacementsLimit {
			t.Errorf("%d spans, want the CRD's bound %d", len(target.Spans), v1alpha1.MaxReplacementsLimit)
		}
		if v := newGapsView(run); len(v.Rows) != v1alpha1.MaxReplacementsLimit {
			t.Errorf("%d rows, want %d", len(v.Rows), v1alpha1.MaxReplacementsLimit)
		}
	})
}

// TestGapsInTheReport: the written page carries the gap's span in the charts' data and a Gaps
// section saying what the results cover in the verdict's words; a run whose Gapless condition
// says it has none says so; a run that cannot have gaps has no section; the tenant's text in a
// gap stays text.
func TestGapsInTheReport(t *testing.T) {
	gapless := fixtureTestRun()
	gapless.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionGapless, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonNoGaps, Message: "no runner was lost; the results cover the whole load"}}
	hostileRun := fixtureGapRun()
	hostileRun.Status.Gaps[0].LostPod = hostile
	rows := []struct {
		name      string
		run       *v1alpha1.TestRun
		spans     int
		want, not []string
	}{
		{"one gap", fixtureGapRun(), 1, []string{"<h2>Gaps</h2>", judge.GapsSummary(fixtureGapRun().Status.Gaps, namedGaps),
			`data-row="gap-1-1"`, "stab-2-2-c1-runner-1-x7k2p", "2025-03-14 09:01:50 UTC", "2025-03-14 09:02:15 UTC",
			`data-field="after">15s<`, "stab-2-2-c1-runner-1-r1", `data-field="unobserved">1480<`}, nil},
		{"gapless", gapless, 0, []string{"<h2>Gaps</h2>", "no runner was lost; the results cover the whole load"}, []string{"<table><thead><tr><th>Runner</th><th>Lost pod"}},
		{"cannot have gaps", fixtureTestRun(), 0, nil, []string{"<h2>Gaps</h2>"}},
		{"hostile pod name", hostileRun, 1, []string{html.EscapeString(hostile)}, []string{hostile}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTestRun(&buf, TestRunInput{Run: row.run, Timeline: fixtureTimeline(), Generated: loadStart}); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			for _, w := range row.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, n := range row.not {
				if strings.Contains(page, n) {
					t.Errorf("the page has %q", n)
				}
			}
			m := dataBlock.FindStringSubmatch(page)
			if m == nil {
				t.Fatal("no chart data block")
			}
			var data struct{ Charts []Chart }
			if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, c := range data.Charts {
				got[c.Name] = len(c.Spans)
			}
			want := map[string]int{"throughput": row.spans, "latency": row.spans, "errors": row.spans, "target": row.spans, "latency-histogram": 0}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("spans per chart in the page's data %v, want %v", got, want)
			}
		})
	}
}
