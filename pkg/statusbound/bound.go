// Package statusbound cuts a TestRun's status to the bounds its CRD declares (the MaxItems and
// MaxLength markers of api/v1alpha1/testrun_status.go), right before it is written. Much of a
// status comes from what a tenant's script and runners reported: metric, check, scenario and
// threshold names, log lines, runner names. One list or string beyond its bound makes the API
// server refuse the whole write, and a run whose status cannot be written never ends. So every
// list and string is cut here, in one place, and one warning says what was cut.
package statusbound

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// The bounds, as the CRD's markers declare them; FuzzTestRunStatus validates cut statuses
// against the generated CRD's schema, so a bound here above the CRD's fails it.
const (
	MaxReason           = 128
	MaxMessage          = 4096
	MaxTestID           = 128
	MaxNamespace        = 63
	MaxGeneratorReason  = 1024
	MaxConditions       = 16
	MaxConditionMessage = 32768
	// MaxNumber bounds every number or duration written as text ("182.4", "12ms").
	MaxNumber          = 64
	MaxProgressSummary = 128
	MaxWarnings        = 16
	MaxWarning         = 1024
	MaxThresholds      = 256
	MaxThresholdMetric = 512
	MaxExpression      = 128
	MaxMetrics         = 64
	MaxMetricName      = 256
	MaxUnit            = 16
	MaxScenarios       = 32
	MaxScenarioName    = 256
	MaxSlowest         = 10
	MaxChecks          = 64
	MaxCheckName       = 512
	MaxObjectName      = 253
	MaxLogFindings     = 16
	MaxLogPattern      = 64
	MaxLogSample       = 512
	MaxLogIncomplete   = 1024
	MaxPeakSteps       = 200
	MaxStopRule        = 256
	MaxAbortThresholds = 64
	MaxAbortThreshold  = 640
	MaxAborted         = 512
	// MaxGaps and MaxGapCause bound status.gaps (one per replacement, spec.runnerLoss).
	MaxGaps     = v1alpha1.MaxReplacementsLimit
	MaxGapCause = 64
	// A zoned run's rows and a zone run's report (api/v1alpha1 testrun_zones.go).
	MaxZoneMessage  = 1024
	MaxZoneProblems = 20
	MaxZoneProblem  = 1024
	// A Profile's snapshot: what Kubernetes accepts in a pod's nodeSelector and tolerations.
	MaxQualifiedName = 317
	MaxLabelValue    = 63
	MaxTolerationOp  = 16
	MaxTaintEffect   = 32
	// Where Kueue's admission puts a pod set (status.admission): flavors, and node labels or
	// tolerations each.
	MaxAdmittedFlavors     = v1alpha1.MaxAdmittedFlavors
	MaxAdmittedLabels      = v1alpha1.MaxAdmittedNodeLabels
	MaxAdmittedTolerations = v1alpha1.MaxAdmittedTolerations
)

// WarningPrefix starts the one warning that says what was cut; the controller carries a
// warning with it over when the results are rebuilt.
const WarningPrefix = "status was cut to the API's limits: "

// metricTypes is the enum of status.results.metrics[].type.
var metricTypes = map[string]bool{"counter": true, "gauge": true, "rate": true, "trend": true}

// cutter cuts in place and remembers what it cut, one phrase per field or list.
type cutter struct{ notes []string }

// str cuts *s to max bytes on a character boundary, with invalid UTF-8 replaced first (the
// API counts characters; a byte bound is the stricter one). what names the field for the note.
func (c *cutter) str(s *string, max int, what string) {
	v := *s
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) > max {
		c.notes = append(c.notes, fmt.Sprintf("%s cut from %d to %d bytes", what, len(v), max))
		v = Cut(v, max)
	}
	*s = v
}

// nums cuts numbers-as-text fields; they are made by the operator, so a cut is a bug, noted all the same.
func (c *cutter) nums(what string, fields ...*string) {
	for _, f := range fields {
		c.str(f, MaxNumber, what)
	}
}

// count notes a list cut from n to max items.
func (c *cutter) count(n, max int, what string) bool {
	if n <= max {
		return false
	}
	c.notes = append(c.notes, fmt.Sprintf("%d of %d %s not listed (at most %d are)", n-max, n, what, max))
	return true
}

// Cut returns s cut to at most max bytes, on a character boundary, ending in "…" when cut.
func Cut(s string, max int) string { return textsafe.Cut(s, max) }

// TestRun makes every string of st printable (Printable) and cuts st to the CRD's bounds in
// place, and returns what it cut, one phrase each. When
// something was cut, one warning in status.results.warnings says what (results are made for
// it if the run has none yet); the warning list leaves room for it.
func TestRun(st *v1alpha1.TestRunStatus) []string {
	Printable(st)
	c := &cutter{}
	c.str(&st.Reason, MaxReason, "status.reason")
	c.str(&st.Message, MaxMessage, "status.message")
	c.str(&st.TestID, MaxTestID, "status.testID")
	c.str(&st.TargetNamespace, MaxNamespace, "status.targetNamespace")
	c.str(&st.GeneratorBoundReason, MaxGeneratorReason, "status.generatorBoundReason")
	if c.count(len(st.Conditions), MaxConditions, "conditions") {
		st.Conditions = st.Conditions[:MaxConditions]
	}
	for i := range st.Conditions {
		c.str(&st.Conditions[i].Message, MaxConditionMessage, "condition "+st.Conditions[i].Type+" message")
	}
	if p := st.Progress; p != nil {
		c.str(&p.Summary, MaxProgressSummary, "status.progress.summary")
		c.nums("status.progress", &p.Elapsed, &p.Expected, &p.RequestsPerSecond, &p.ErrorPercent, &p.P95)
	}
	if r := st.Runners; r != nil {
		c.nums("status.runners.startSkew", &r.StartSkew)
		if m := r.Memory; m != nil {
			c.str(&m.Runner, MaxObjectName, "status.runners.memory.runner")
			if m.Trend != nil {
				memoryTrend(c, m.Trend, "status.runners.memory.trend")
			}
		}
	}
	if p := st.Profile; p != nil {
		profile(c, p)
	}
	if a := st.Admission; a != nil {
		admission(c, a)
	}
	if t := st.Target; t != nil {
		target(c, t)
	}
	if cp := st.Capacity; cp != nil {
		c.nums("status.capacity", &cp.PushesPerSecond)
	}
	if p := st.Peak; p != nil {
		if c.count(len(p.Steps), MaxPeakSteps, "peak steps") {
			p.Steps = p.Steps[:MaxPeakSteps]
		}
		for i := range p.Steps {
			s := &p.Steps[i]
			c.nums("status.peak.steps", &s.RequestsPerSecond, &s.DroppedPercent, &s.ErrorPercent, &s.P95)
		}
		c.str(&p.StopRule, MaxStopRule, "status.peak.stopRule")
	}
	if a := st.AbortOnFail; a != nil {
		if c.count(len(a.Thresholds), MaxAbortThresholds, "abortOnFail thresholds") {
			a.Thresholds = a.Thresholds[:MaxAbortThresholds]
		}
		for i := range a.Thresholds {
			c.str(&a.Thresholds[i], MaxAbortThreshold, "an abortOnFail threshold")
		}
		c.str(&a.Aborted, MaxAborted, "status.abortOnFail.aborted")
	}
	if c.count(len(st.Gaps), MaxGaps, "gaps") {
		st.Gaps = st.Gaps[:MaxGaps]
	}
	for i := range st.Gaps {
		g := &st.Gaps[i]
		c.str(&g.LostPod, MaxObjectName, "a gap's lostPod")
		c.str(&g.Cause, MaxGapCause, "a gap's cause")
		c.str(&g.Job, MaxObjectName, "a gap's job")
		c.nums("a gap's remaining", &g.Remaining)
	}
	for i := range st.Zones {
		z := &st.Zones[i]
		c.str(&z.Message, MaxZoneMessage, "zone "+z.Name+"'s message")
		c.nums("status.zones", &z.StartOffset)
		if l := z.Latency; l != nil {
			c.nums("status.zones latency", &l.Min, &l.Avg, &l.P50, &l.P90, &l.P95, &l.P99, &l.Max)
		}
	}
	if z := st.ZoneRun; z != nil {
		if c.count(len(z.Problems), MaxZoneProblems, "a zone run's problems") {
			z.Problems = z.Problems[:MaxZoneProblems]
		}
		for i := range z.Problems {
			c.str(&z.Problems[i], MaxZoneProblem, "a zone run's problem")
		}
	}
	if st.Results != nil {
		results(c, st.Results)
	}
	warn(c, st)
	return c.notes
}

// profile cuts a Profile's snapshot; the controller refuses to copy a Profile outside these
// bounds (it could not place a pod), so this only keeps the write possible.
func profile(c *cutter, p *v1alpha1.ProfileSnapshot) {
	c.str(&p.Name, MaxObjectName, "status.profile.name")
	placement(c, p.Spec.NodeSelector, p.Spec.Tolerations, "status.profile")
}

// admission cuts where Kueue's admission puts the pods; the controller refuses an admission
// outside these bounds (FlavorUnusable), so this only keeps the write possible.
func admission(c *cutter, a *v1alpha1.QueueAdmission) {
	c.str(&a.ClusterQueue, MaxObjectName, "status.admission.clusterQueue")
	for i := range a.PodSets {
		ps := &a.PodSets[i]
		if c.count(len(ps.Flavors), MaxAdmittedFlavors, "admitted flavors") {
			ps.Flavors = ps.Flavors[:MaxAdmittedFlavors]
		}
		for j := range ps.Flavors {
			c.str(&ps.Flavors[j], MaxObjectName, "an admitted flavor's name")
		}
		if len(ps.NodeSelector) > MaxAdmittedLabels {
			c.notes = append(c.notes, "status.admission node labels beyond the bound not listed")
			ps.NodeSelector = nil
		}
		if c.count(len(ps.Tolerations), MaxAdmittedTolerations, "admitted tolerations") {
			ps.Tolerations = ps.Tolerations[:MaxAdmittedTolerations]
		}
		placement(c, ps.NodeSelector, ps.Tolerations, "status.admission")
	}
}

// placement cuts a nodeSelector and tolerations to what a pod holds; path names them.
func placement(c *cutter, sel map[string]string, tolerations []v1alpha1.SnapshotToleration, path string) {
	for k, v := range sel {
		if len(k) > MaxQualifiedName {
			c.notes = append(c.notes, "a "+path+" nodeSelector key too long not listed")
			delete(sel, k)
			continue
		}
		c.str(&v, MaxLabelValue, "a "+path+" nodeSelector value")
		sel[k] = v
	}
	for i := range tolerations {
		t := &tolerations[i]
		c.str(&t.Key, MaxQualifiedName, "a "+path+" toleration's key")
		c.str(&t.Operator, MaxTolerationOp, "a "+path+" toleration's operator")
		c.str(&t.Value, MaxLabelValue, "a "+path+" toleration's value")
		c.str(&t.Effect, MaxTaintEffect, "a "+path+" toleration's effect")
	}
}

func target(c *cutter, t *v1alpha1.TargetUsage) {
	if m := t.Memory; m != nil {
		c.nums("status.target.memory", &m.IncreasePercent, &m.PerDeviceMiB, &m.UtilizationPercent)
		if tr := m.Trend; tr != nil {
			memoryTrend(c, tr, "status.target.memory.trend")
		}
	}
	if u := t.CPU; u != nil {
		c.nums("status.target.cpu", &u.AverageCoresPerCore, &u.PeakCoresPerCore, &u.UsageCoreSecondsBefore, &u.EstimatedCoreSeconds)
	}
	if c.count(len(t.LogFindings), MaxLogFindings, "log findings") {
		t.LogFindings = t.LogFindings[:MaxLogFindings]
	}
	for i := range t.LogFindings {
		f := &t.LogFindings[i]
		c.str(&f.Pattern, MaxLogPattern, "a log finding's pattern")
		c.str(&f.Sample, MaxLogSample, "a log finding's sample")
		c.str(&f.Incomplete, MaxLogIncomplete, "a log finding's incomplete")
	}
}

func memoryTrend(c *cutter, tr *v1alpha1.MemoryTrend, path string) {
	c.nums(path, &tr.SlopeMiBPerHour, &tr.SlopeLow, &tr.SlopeHigh, &tr.TheilSenMiBPerHour, &tr.FitStartMiB, &tr.FitEndMiB)
	c.str(&tr.ProjectedFullIn, 32, path+".projectedFullIn")
	c.str(&tr.Horizon, 32, path+".horizon")
	c.str(&tr.Message, 1024, path+".message")
}

func results(c *cutter, r *v1alpha1.Results) {
	if q := r.Requests; q != nil {
		c.nums("status.results.requests", &q.DroppedPercent)
	}
	if t := r.Throughput; t != nil {
		c.nums("status.results.throughput", &t.RequestsPerSecond, &t.ReceivedMbps, &t.SentMbps)
	}
	if l := r.Latency; l != nil {
		c.nums("status.results.latency", &l.Min, &l.Avg, &l.P50, &l.P90, &l.P95, &l.P99, &l.Max, &l.AboveAveragePercent, &l.BelowAveragePercent)
	}
	if ch := r.Checks; ch != nil {
		if c.count(len(ch.ByName), MaxChecks, "checks") {
			ch.ByName = ch.ByName[:MaxChecks]
		}
		for i := range ch.ByName {
			c.str(&ch.ByName[i].Name, MaxCheckName, "a check's name")
			c.str(&ch.ByName[i].Group, MaxCheckName, "a check's group")
		}
	}
	r.Thresholds = thresholds(c, r.Thresholds)
	kept := r.Metrics[:0:0]
	for _, m := range r.Metrics {
		if metricTypes[m.Type] {
			kept = append(kept, m)
		}
	}
	if n := len(r.Metrics) - len(kept); n > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d metrics of a type k6 does not have not listed", n))
	}
	r.Metrics = kept
	if c.count(len(r.Metrics), MaxMetrics, "metrics") {
		r.Metrics = r.Metrics[:MaxMetrics]
	}
	for i := range r.Metrics {
		m := &r.Metrics[i]
		c.str(&m.Name, MaxMetricName, "a metric's name")
		c.str(&m.Unit, MaxUnit, "a metric's unit")
		c.nums("status.results.metrics", &m.Count, &m.Rate, &m.Value, &m.Min, &m.Max, &m.Avg, &m.Med, &m.P90, &m.P95, &m.P99)
	}
	if c.count(len(r.Scenarios), MaxScenarios, "scenarios") {
		r.Scenarios = r.Scenarios[:MaxScenarios]
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		c.str(&s.Name, MaxScenarioName, "a scenario's name")
		c.nums("status.results.scenarios", &s.RequestsPerSecond, &s.P95)
	}
	if c.count(len(r.SlowestRequests), MaxSlowest, "slowest requests") {
		r.SlowestRequests = r.SlowestRequests[:MaxSlowest]
	}
	dropped := 0
	for i := range r.SlowestRequests {
		s := &r.SlowestRequests[i]
		c.nums("status.results.slowestRequests", &s.Duration)
		c.str(&s.Name, measure.MaxSlowName, "a slow request's name")
		c.str(&s.URL, measure.MaxSlowURL, "a slow request's URL")
		c.str(&s.Method, measure.MaxSlowMethod, "a slow request's method")
		c.str(&s.Status, measure.MaxSlowStatus, "a slow request's status")
		c.str(&s.Scenario, measure.MaxSlowScenario, "a slow request's scenario")
		c.str(&s.Runner, measure.MaxSlowRunner, "a slow request's runner")
		if s.TraceID != "" && !measure.ValidTraceID(s.TraceID) {
			s.TraceID = ""
			dropped++
		}
	}
	if dropped > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d slow requests' trace ids that are not hex dropped", dropped))
	}
	if f := r.FullResult; f != nil {
		c.str(&f.ConfigMap, MaxObjectName, "status.results.fullResult.configMap")
		c.str(&f.Key, MaxObjectName, "status.results.fullResult.key")
	}
}

// thresholds keeps at most MaxThresholds, the failed ones first, in their order: the ones that
// decided the verdict stay visible.
func thresholds(c *cutter, ts []v1alpha1.ThresholdResult) []v1alpha1.ThresholdResult {
	if len(ts) > MaxThresholds {
		failed := 0
		for _, t := range ts {
			if !t.Passed {
				failed++
			}
		}
		keepPassed := max(MaxThresholds-failed, 0)
		kept := make([]v1alpha1.ThresholdResult, 0, MaxThresholds)
		for _, t := range ts {
			if len(kept) == MaxThresholds {
				break
			}
			if !t.Passed || keepPassed > 0 {
				if t.Passed {
					keepPassed--
				}
				kept = append(kept, t)
			}
		}
		c.count(len(ts), MaxThresholds, fmt.Sprintf("thresholds (%d failed; failed ones are listed first)", failed))
		ts = kept
	}
	for i := range ts {
		c.str(&ts[i].Metric, MaxThresholdMetric, "a threshold's metric")
		c.str(&ts[i].Expression, MaxExpression, "a threshold's expression")
		c.nums("status.results.thresholds", &ts[i].Value)
	}
	return ts
}

// warn cuts the warnings, leaving room for one that says what was cut, and adds it.
func warn(c *cutter, st *v1alpha1.TestRunStatus) {
	var ws []string
	if st.Results != nil {
		ws = st.Results.Warnings
	}
	room := MaxWarnings
	if len(c.notes) > 0 || len(ws) > MaxWarnings {
		room-- // for the warning about the cut
	}
	if len(ws) > room {
		c.notes = append(c.notes, fmt.Sprintf("%d of %d warnings not listed", len(ws)-room, len(ws)))
		ws = ws[:room]
	}
	for i := range ws {
		c.str(&ws[i], MaxWarning, "a warning")
	}
	if len(c.notes) > 0 {
		if st.Results == nil {
			st.Results = &v1alpha1.Results{}
		}
		ws = append(ws, Cut(WarningPrefix+strings.Join(c.notes, "; "), MaxWarning))
	}
	if st.Results != nil {
		st.Results.Warnings = ws
	}
}

// Short is what is left of a status the API server refused even when cut: the run's identity,
// its start and its runner counts. Every list and free text made of tenant data is gone, so it
// cannot be refused for what the refused one held; the caller adds the ending and the conditions.
func Short(st *v1alpha1.TestRunStatus) v1alpha1.TestRunStatus {
	out := v1alpha1.TestRunStatus{ObservedGeneration: st.ObservedGeneration, TestID: st.TestID, TargetNamespace: st.TargetNamespace,
		StartTime: st.StartTime, Runners: st.Runners.DeepCopy(), Profile: st.Profile.DeepCopy()}
	TestRun(&out)
	return out
}

// CarryWarning keeps the warning about an earlier cut when results are rebuilt (from, the
// results before; into, the new ones): what was cut then, such as abortOnFail thresholds while
// the load ran, is not cut again and would go unsaid.
func CarryWarning(from, into *v1alpha1.Results) {
	if from == nil || into == nil {
		return
	}
	for _, w := range from.Warnings {
		if strings.HasPrefix(w, WarningPrefix) && !slices.Contains(into.Warnings, w) {
			into.Warnings = append(into.Warnings, w)
		}
	}
}
