package plugin

import (
	"encoding/xml"
	"fmt"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// JUnit XML as CI systems read it (the Ant/Jenkins schema): testsuites > testsuite > testcase,
// with a failure (the test ran and did not pass) or an error (it could not be judged).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr,omitempty"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

// junitSkipped is a case that was not judged (a compared metric with too few samples).
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// suite counts its cases' failures and errors and wraps it in testsuites. Every string is
// made safe (textsafe): CI systems show names and messages in terminals and web pages, and XML
// 1.0 allows no control character but tab and newline.
func (s junitSuite) wrap() junitSuites {
	s.Tests = len(s.Cases)
	s.Name = textsafe.Line(s.Name)
	for i := range s.Properties {
		s.Properties[i].Value = textsafe.Line(s.Properties[i].Value)
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		c.Name, c.Classname = textsafe.Line(c.Name), textsafe.Line(c.Classname)
		for _, p := range []*junitProblem{c.Failure, c.Error} {
			if p != nil {
				p.Message, p.Type, p.Text = textsafe.Line(p.Message), textsafe.Line(p.Type), textsafe.Text(p.Text)
			}
		}
		if c.Skipped != nil {
			c.Skipped.Message = textsafe.Line(c.Skipped.Message)
		}
	}
	for _, c := range s.Cases {
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	return junitSuites{Name: "fleetbench", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
}

// runCase is the testcase of a whole run: a failure when the verdict is not PASSED, an error
// when the run failed (phase Failed) or has not finished.
func runCase(name, classname string, phase v1alpha1.TestRunPhase, verdict v1alpha1.Verdict, reason, message string) junitCase {
	c := junitCase{Name: name, Classname: classname}
	detail := reasonMessage(reason, oneLine(message))
	switch {
	case phase == v1alpha1.PhaseFailed:
		c.Error = &junitProblem{Message: fmt.Sprintf("phase Failed: %s", orDash(reason)), Type: orDash(reason), Text: detail}
	case phase != v1alpha1.PhaseSucceeded:
		c.Error = &junitProblem{Message: fmt.Sprintf("not finished: phase %s", orDash(string(phase))), Type: "NotFinished", Text: detail}
	case verdict != v1alpha1.VerdictPassed:
		c.Failure = &junitProblem{Message: "verdict " + orDash(string(verdict)), Type: orDash(string(verdict)), Text: detail}
	}
	return c
}

// junitTestRun is a suite with a testcase per threshold (a failure with the value it was judged
// on when it failed) and one for the run itself.
func junitTestRun(run *v1alpha1.TestRun) junitSuites {
	s := junitSuite{Name: run.Namespace + "/" + run.Name}
	if st := run.Status.StartTime; st != nil {
		s.Timestamp = st.UTC().Format("2006-01-02T15:04:05")
		if ct := run.Status.CompletionTime; ct != nil {
			s.Time = fmt.Sprintf("%.3f", ct.Sub(st.Time).Seconds())
		}
	}
	s.Properties = junitProperties(run)
	if r := run.Status.Results; r != nil {
		for _, t := range r.Thresholds {
			c := junitCase{Name: t.Metric + ": " + t.Expression, Classname: "fleetbench.thresholds." + run.Name}
			if !t.Passed {
				c.Failure = &junitProblem{Message: fmt.Sprintf("%s %s failed on value %s", t.Metric, t.Expression, orDash(t.Value)), Type: "ThresholdFailed", Text: "value " + orDash(t.Value)}
			}
			s.Cases = append(s.Cases, c)
		}
	}
	s.Cases = append(s.Cases, comparisonCases(run)...)
	c := runCase(run.Name, "fleetbench.testrun", run.Status.Phase, run.Status.Verdict, run.Status.Reason, run.Status.Message)
	if run.Status.Verdict == v1alpha1.VerdictRegressed && c.Failure != nil {
		for _, w := range []struct {
			label string
			cmp   *v1alpha1.Comparison
		}{{"worst", run.Status.Comparison}, {"worst against the fixed reference", run.Status.ReferenceComparison}} {
			if w.cmp != nil && w.cmp.Decision == v1alpha1.ComparisonRegressed {
				c.Failure.Text = strings.TrimSpace(c.Failure.Text + "\n" + w.label + ": " + orDash(w.cmp.Worst))
			}
		}
	}
	c.Time = s.Time
	s.Cases = append(s.Cases, c)
	return s.wrap()
}

// junitProperties are the run's JUnit columns (pkg/present/columns), named by their IDs: the
// key columns always, the results the run has.
func junitProperties(run *v1alpha1.TestRun) []junitProperty {
	var out []junitProperty
	for _, c := range columns.For(columns.JUnit) {
		if v := c.Value(run); c.Key || v != "" {
			out = append(out, junitProperty{c.Header(columns.JUnit), v})
		}
	}
	return out
}

// junitPlan is a suite with a testcase per sizing-table row.
func junitPlan(p *v1alpha1.CapacityPlan) junitSuites {
	s := junitSuite{Name: p.Namespace + "/" + p.Name}
	names := htmlreport.DimensionNames(p)
	for _, r := range p.Status.Table {
		parts := []string{r.Profile}
		for _, n := range names {
			if v, ok := r.Values[n]; ok {
				parts = append(parts, n+"="+v)
			}
		}
		if p.Spec.Repetitions > 1 {
			parts = append(parts, fmt.Sprintf("repetition %d", r.Repetition))
		}
		name := strings.Join(parts, " ")
		if r.TestRun != "" {
			name += " (" + r.TestRun + ")"
		}
		s.Cases = append(s.Cases, runCase(name, "fleetbench.capacityplan."+p.Name, r.Phase, r.Verdict, r.Reason, ""))
	}
	return s.wrap()
}

// comparisonCases are a testcase per metric of the run's comparison with its baseline, then
// with its fixed reference: a failure when it Regressed, with the row's numbers; skipped when
// no decision was made (too few samples, no data); passed otherwise (Success, OK).
func comparisonCases(run *v1alpha1.TestRun) []junitCase {
	return append(comparisonCasesOf(run.Name, "comparison", run.Status.Comparison),
		comparisonCasesOf(run.Name, "reference", run.Status.ReferenceComparison)...)
}

func comparisonCasesOf(run, what string, cmp *v1alpha1.Comparison) []junitCase {
	cols := columns.ComparisonFor(columns.JUnit)
	var out []junitCase
	for _, r := range columns.TestedRows(cmp) {
		cells := r.Cells(cols)
		c := junitCase{Name: what + ": " + cells[columns.CmpMetric], Classname: "fleetbench." + what + "." + run}
		switch r.Metric.Decision {
		case v1alpha1.ComparisonRegressed:
			c.Failure = &junitProblem{Message: comparisonMessage(cells), Type: string(v1alpha1.ComparisonRegressed), Text: comparisonText(cols, cells)}
		case v1alpha1.ComparisonTooFewSamples, v1alpha1.ComparisonNoData:
			c.Skipped = &junitSkipped{Message: string(r.Metric.Decision) + suffix(": ", r.Metric.Note)}
		}
		out = append(out, c)
	}
	return out
}

// comparisonMessage is a regressed row in one line: "throughput (req/s) Regressed: 71.20 % of
// baseline (100.00 → 71.20), band success ≥ 100 %, ok ≥ 80 %, 95 % CI [65.10, 77.30] %, p 0.0004".
func comparisonMessage(cells map[string]string) string {
	msg := fmt.Sprintf("%s %s: %s %% of baseline (%s → %s), band %s", cells[columns.CmpMetric], cells[columns.CmpDecision],
		orDash(cells[columns.CmpRatio]), orDash(cells[columns.CmpBaseline]), orDash(cells[columns.CmpCurrent]), orDash(cells[columns.CmpBand]))
	if v := cells[columns.CmpCI]; v != "" {
		msg += ", 95 % CI " + v
	}
	if v := cells[columns.CmpPValue]; v != "" {
		msg += ", p " + v
	}
	return msg
}

// comparisonText is every cell of the row, a line each, named as the HTML report names them.
func comparisonText(cols []columns.ComparisonColumn, cells map[string]string) string {
	var lines []string
	for _, c := range cols {
		if v := cells[c.ID]; v != "" {
			lines = append(lines, c.Header(columns.HTML)+": "+v)
		}
	}
	return strings.Join(lines, "\n")
}
