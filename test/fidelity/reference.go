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

	"fleetbench.dev/fleetbench/pkg/report"
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

// Reference runs the script as one plain k6 process: bin is the runner binary (k6 v2.2.0 with
// fleetbench's output linked, which stays off here), run in dir against target (TARGET) with the
// script's flags, environment and config from corpusDir. It returns k6's own summary and what
// k6 printed.
func Reference(ctx context.Context, bin, dir, corpusDir string, s Script, target string) (report.K6Summary, []byte, error) {
	var sum report.K6Summary
	js := filepath.Join(dir, s.Name+".reference.js")
	if err := os.WriteFile(js, []byte(s.Text+summaryHook), 0o644); err != nil {
		return sum, nil, err
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
	var exit *exec.ExitError
	if errors.As(err, &exit) && (exit.ExitCode() == exitThresholdsFailed || exit.ExitCode() == exitScriptAborted) {
		err = nil
	}
	if err != nil {
		return sum, out.Bytes(), fmt.Errorf("k6 run %s: %w", s.Name, err)
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		return sum, out.Bytes(), fmt.Errorf("k6's summary of %s: %w", s.Name, err)
	}
	return sum, out.Bytes(), json.Unmarshal(raw, &sum)
}
