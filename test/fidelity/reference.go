package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"fleetbench.dev/fleetbench/pkg/judge"
)

const (
	// summaryHook is appended to a script for the reference run: k6 hands handleSummary its
	// end-of-test data, with every metric, sub-metric, threshold verdict and check.
	summaryHook = "\nexport function handleSummary(data) {\n" +
		"  return { [__ENV.FIDELITY_SUMMARY]: JSON.stringify(data) };\n}\n"
	// TrendStats makes k6 report every trend statistic fleetbench computes, count included.
	TrendStats = "avg,min,med,max,p(90),p(95),p(99),count"
)

// k6's exit codes a finished reference run may end with: thresholds failed (99), and the script
// called test.abort() (108). Any other means k6 did not run the test.
const (
	exitThresholdsFailed = 99
	exitScriptAborted    = 108
)

// Run is what one plain k6 process made of a script.
type Run struct {
	// Summary is k6's own end-of-test summary.
	Summary judge.K6Summary
	// Output is what k6 printed.
	Output []byte
	// Aborted: the script called test.abort() (exit 108); the test failed, thresholds or not.
	Aborted bool
}

// Failed says whether k6 failed the test: a threshold failed, or the script aborted it.
func (r Run) Failed() bool {
	for _, m := range r.Summary.Metrics {
		for _, th := range m.Thresholds {
			if !th.OK {
				return true
			}
		}
	}
	return r.Aborted
}

// Reference runs the script as one plain k6 process: bin is the runner binary (k6 v2.2.0 with
// fleetbench's output linked, which stays off here), run in dir against target (TARGET) with the
// script's flags, environment and config from corpusDir.
func Reference(ctx context.Context, bin, dir, corpusDir string, s Script, target string) (Run, error) {
	var run Run
	js := filepath.Join(dir, s.Name+".reference.js")
	if err := os.WriteFile(js, []byte(s.Text+summaryHook), 0o644); err != nil {
		return run, err
	}
	// Data files go beside the script, where it open()s them.
	for _, f := range s.Files {
		raw, err := os.ReadFile(filepath.Join(corpusDir, f))
		if err != nil {
			return run, err
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			return run, err
		}
	}
	summaryPath := filepath.Join(dir, s.Name+".k6-summary.json")
	args := append([]string{"run", "--quiet", "--summary-trend-stats", TrendStats}, s.RunArgs(corpusDir)...)
	cmd := exec.CommandContext(ctx, bin, append(args, js)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true", "HOME="+dir, "TARGET="+target, "FIDELITY_SUMMARY="+summaryPath)
	cmd.Env = append(cmd.Env, s.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	run.Output = out.Bytes()
	var exit *exec.ExitError
	if errors.As(err, &exit) && (exit.ExitCode() == exitThresholdsFailed || exit.ExitCode() == exitScriptAborted) {
		run.Aborted, err = exit.ExitCode() == exitScriptAborted, nil
	}
	if err != nil {
		return run, fmt.Errorf("k6 run %s: %w", s.Name, err)
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		return run, fmt.Errorf("k6's summary of %s: %w", s.Name, err)
	}
	return run, json.Unmarshal(raw, &run.Summary)
}
