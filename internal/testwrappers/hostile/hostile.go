// Package hostile makes what a hostile tenant's script and runners can report, and the status
// the controller builds from it, for the tests that prove every such status can be written.
// It is its own package because it uses pkg/judge, whose tests use testwrappers.
package hostile

import (
	"fmt"
	"math/rand"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// hostilePieces are what a tenant's script can put in a name: unicode of every width, control
// characters and terminal escapes, quotes, and bytes that are not UTF-8 at all.
var hostilePieces = []string{"a", "Z", "_", "9", " ", "é", "日本", "😀", "\u202e", "\x00", "\x1b[31m", "\n", "\t", "\"", "\\", "{", "}", "\xff", "\xc3", "%s"}

// String is up to max bytes drawn from hostilePieces; most are short, some are huge.
func String(r *rand.Rand, max int) string {
	var n int
	switch r.Intn(4) {
	case 0:
		n = r.Intn(8)
	case 1, 2:
		n = r.Intn(300)
	default:
		n = r.Intn(max + 1)
	}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(hostilePieces[r.Intn(len(hostilePieces))])
	}
	return b.String()
}

// Envelope is one runner's final envelope as a hostile script can make it: many custom
// metrics with long names, checks and scenarios by the hundred, script thresholds (some
// abortOnFail) by the hundred, tags whose values are long.
func Envelope(r *rand.Rand, runner string, start time.Time) measure.Envelope {
	cfg := measure.DefaultCollectorConfig
	cfg.Slowest = measure.MaxSlowest
	c := measure.NewCollector(cfg, start)
	ts := start.Add(time.Second).UnixNano()
	ok := map[string]string{"scenario": "default", "expected_response": "true", "status_class": "2xx"}
	for i := range 1 + r.Intn(50) {
		c.Series("http_reqs", measure.Counter, "", ok).Add(ts, 1)
		c.Series("http_req_duration", measure.Trend, "time", ok).Add(ts, float64(10+i))
		c.Series("http_req_failed", measure.Rate, "", ok).Add(ts, float64(r.Intn(2)))
	}
	types := []measure.MetricType{measure.Counter, measure.Gauge, measure.Rate, measure.Trend}
	for i := range r.Intn(1 << r.Intn(10)) {
		name := fmt.Sprintf("m%d_%s", i, String(r, 10000))
		tags := map[string]string{"scenario": String(r, 2000)}
		c.Series(name, types[r.Intn(len(types))], "", tags).Add(ts, r.Float64()*1e12)
	}
	for range r.Intn(1 << r.Intn(10)) {
		tags := map[string]string{"check": String(r, 10000), "group": String(r, 3000)}
		c.Series("checks", measure.Rate, "", tags).Add(ts, float64(r.Intn(2)))
	}
	for range r.Intn(1 << r.Intn(8)) {
		tags := map[string]string{"scenario": String(r, 5000)}
		c.Series("iterations", measure.Counter, "", tags).Add(ts, 1)
		c.Series("http_req_duration", measure.Trend, "time", tags).Add(ts, r.Float64()*1000)
	}
	// Slow requests of names, URLs and methods as long as a runner keeps (it cuts them).
	for range r.Intn(80) {
		ms := r.Float64() * 1e5
		id := String(r, 40)
		if r.Intn(2) == 0 {
			id = fmt.Sprintf("%032x", r.Uint64())
		}
		c.AddSlow(ts, measure.CutSlow(measure.SlowRequest{DurationMillis: ms, StartUnixNano: ts - int64(ms*1e6),
			Name: String(r, 2000), URL: String(r, 2000), Method: String(r, 100), Status: String(r, 50),
			Scenario: String(r, 500), TraceID: id}))
	}
	e := c.Envelope(start.Add(10 * time.Second))
	e.Runner, e.Final = runner, true
	e.CPU = measure.CPU{UserSeconds: 1, Cores: 1}
	e.Thresholds = map[string][]string{}
	exprs := []string{"p(95)<200", "rate<0.01", "count>5", "avg<1", "value>0", "max<" + strings.Repeat("9", r.Intn(300)+1)}
	for i := range r.Intn(1 << r.Intn(10)) {
		metric := fmt.Sprintf("t%d_%s", i, String(r, 5000))
		for range 1 + r.Intn(4) {
			expr := exprs[r.Intn(len(exprs))]
			if r.Intn(8) == 0 {
				expr = String(r, 2000) // k6 took it; the operator's parser may not
			}
			e.Thresholds[metric] = append(e.Thresholds[metric], expr)
			if r.Intn(3) == 0 {
				e.AbortOnFail = append(e.AbortOnFail, measure.AbortThreshold{Metric: metric, Expression: expr})
			}
		}
	}
	for range r.Intn(40) {
		e.Overflows = append(e.Overflows, measure.Overflow{Metric: String(r, 3000), Tag: String(r, 3000), Series: 200})
	}
	return e
}

// Status builds a TestRun's status the way the controller does, from what hostile
// runners reported: their envelopes merged (measure.Merge) and mapped onto status
// (judge.Build), with the parts the run adds while it runs and ends (progress, abortOnFail,
// log findings, peak steps, the result ConfigMap's warning, the ending's message and the
// ThresholdsPassed condition). Nothing is cut here: that is statusbound's job.
func Status(r *rand.Rand) v1alpha1.TestRunStatus {
	start := time.Unix(1_700_000_000, 0)
	var envs []measure.Envelope
	for i := range 1 + r.Intn(3) {
		envs = append(envs, Envelope(r, fmt.Sprintf("runner-%d-%s", i, String(r, 300)), start))
	}
	st := v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted, TestID: "hostile-0123abcd"}
	summary, err := measure.Merge(envs...)
	if err != nil {
		st.Phase, st.Reason, st.Message = v1alpha1.PhaseFailed, v1alpha1.ReasonNoResults, "merging: "+err.Error()
		return st
	}
	spec := map[string]v1alpha1.ThresholdList{}
	for range r.Intn(33) {
		spec[String(r, 400)] = v1alpha1.ThresholdList{"p(95)<200", "rate<0.01"}
	}
	o := judge.Build(&summary, spec, len(envs))
	st.Results = o.Results
	st.Verdict = verdict.Decide(verdict.Facts{Merged: true, Results: o.Facts()}).Verdict
	st.GeneratorBound, st.GeneratorBoundReason = o.GeneratorBound, o.GeneratorBoundReason
	// As storeResult does for a result too large for its ConfigMap.
	st.Results.Warnings = append(st.Results.Warnings, "the full result (2048 KiB gzipped) is too large for a ConfigMap and was not kept")
	st.Results.FullResult = &v1alpha1.FullResultRef{ConfigMap: "hostile-result", Key: judge.SummaryKey}
	p := judge.Progress(&summary, start, summary.End, 10*time.Second)
	st.Progress = &p
	st.Message = fmt.Sprintf("verdict %s: %d requests; failed: %s", st.Verdict, st.Results.Requests.Total, strings.Join(o.FailedThresholds, "; "))
	now := metav1.NewTime(start)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionThresholdsPassed, Status: metav1.ConditionFalse,
		Reason: "ThresholdsFailed", Message: strings.Join(o.FailedThresholds, "; "), LastTransitionTime: now})
	w := &v1alpha1.AbortWatch{}
	for _, e := range envs {
		for _, t := range e.AbortOnFail {
			w.Thresholds = append(w.Thresholds, t.Metric+" "+t.Expression)
			w.Aborted = fmt.Sprintf("%s %s (was %g)", t.Metric, t.Expression, r.Float64())
		}
	}
	st.AbortOnFail = w
	t := &v1alpha1.TargetUsage{Source: "kubeletSummary", Samples: 3}
	for i := range r.Intn(24) {
		t.LogFindings = append(t.LogFindings, v1alpha1.LogFinding{Pattern: fmt.Sprintf("p%d", i), Count: r.Int63(), Sample: String(r, 20000)})
	}
	st.Target = t
	peak := &v1alpha1.PeakResult{StopRule: String(r, 1000)}
	for i := range r.Intn(260) {
		peak.Steps = append(peak.Steps, v1alpha1.PeakStepResult{Devices: int64(i), RequestsPerSecond: fmt.Sprintf("%.2f", r.Float64()*1e6), Held: true})
	}
	st.Peak = peak
	for i := range r.Intn(30) {
		st.Gaps = append(st.Gaps, v1alpha1.RunnerGap{Runner: int32(i), Replacement: 1, LostPod: String(r, 400), Cause: String(r, 100),
			LostAt: metav1.Unix(1767225600, 0), Job: String(r, 400), Remaining: String(r, 100), EstimatedUnobserved: r.Int63()})
	}
	return st
}
