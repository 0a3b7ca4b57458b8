// Package check is the runner's `check` command, the operator's pre-flight: `fleetbench-runner
// check run <args> script` is `k6 run <args> script` with the same arguments and environment as
// the runner, stopped when k6 creates its outputs. By then k6 has parsed every flag, loaded the
// script and its imports, run its init code once, consolidated the config (defaults, --config
// file, script options, K6_* environment, flags) and derived and validated the execution plan,
// exactly as `k6 run` does (`k6 inspect` skips the flags, the system environment and the 1-VU
// default). No VU is initialised, setup() does not run and nothing is sent.
//
// On success it prints a Report as one JSON line and exits 0; otherwise k6 exits with its own
// code and error, as `k6 run` would.
package check

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync/atomic"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// Command is the first argument that selects the check instead of k6.
const Command = "check"

// OutputName is the output whose creation ends the check (fleetbench's, registered by package
// runner/output): a check must never go on to run the load.
const OutputName = "fleetbench"

// TerminationLog is where Kubernetes reads a container's termination message from: the
// report goes there too, so the operator reads it from pod status without pod logs.
const TerminationLog = "/dev/termination-log"

// maxTerminationMessage is what the kubelet keeps of a termination message.
const maxTerminationMessage = 4096

var active atomic.Bool

// Active says the process is a check: the output's constructor then calls Conclude.
func Active() bool { return active.Load() }

// Args turns the check's arguments (the runner's `run ...`) into k6's: the same, with
// fleetbench's output added if missing, so k6 always stops at it. It also marks the process
// as a check.
func Args(args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "run" {
		return nil, fmt.Errorf("usage: fleetbench-runner %s run [k6 run flags] script", Command)
	}
	active.Store(true)
	if hasOutput(args[1:]) {
		return args, nil
	}
	return append([]string{"run", "--out", OutputName}, args[1:]...), nil
}

// hasOutput says whether the arguments select fleetbench's output. k6's cobra flags: --out x,
// --out=x, -o x, -ox (a user's own --out is refused at admission).
func hasOutput(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case (a == "--out" || a == "-o") && next == OutputName,
			a == "--out="+OutputName, a == "-o"+OutputName, a == "-o="+OutputName:
			return true
		}
	}
	return false
}

// NewReport derives the report from the options and plan k6 gives an output.
func NewReport(opts lib.Options, plan []lib.ExecutionStep) (measure.CheckReport, error) {
	r := measure.CheckReport{Check: measure.CheckPassed, NoSetup: opts.NoSetup.Bool, NoTeardown: opts.NoTeardown.Bool}
	end, _ := lib.GetEndOffset(plan)
	r.TotalDuration = end.String()
	seq := opts.ExecutionSegmentSequence
	segments := []*lib.ExecutionSegment{opts.ExecutionSegment}
	if seq != nil && len(*seq) > 0 {
		segments = *seq
	}
	names := make([]string, 0, len(opts.Scenarios))
	for name := range opts.Scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, seg := range segments {
		et, err := lib.NewExecutionTuple(seg, seq)
		if err != nil {
			return r, err
		}
		s := measure.CheckSegment{Segment: seg.String(), MaxVUs: lib.GetMaxPossibleVUs(opts.Scenarios.GetFullExecutionRequirements(et))}
		for _, name := range names {
			cfg := opts.Scenarios[name]
			steps := cfg.GetExecutionRequirements(et)
			s.Scenarios = append(s.Scenarios, measure.CheckScenario{Name: name, Executor: cfg.GetType(),
				VUs: lib.GetMaxPlannedVUs(steps), MaxVUs: lib.GetMaxPossibleVUs(steps)})
		}
		r.Segments = append(r.Segments, s)
	}
	return r, nil
}

// exit ends the process; a variable for tests.
var exit = os.Exit

// Conclude is called instead of creating fleetbench's output in a check: k6 accepted the test.
// It prints the report and ends the process with 0 (k6 has started nothing that needs
// stopping: no VU, no REST API, no output).
func Conclude(p output.Params) error {
	r, err := NewReport(p.ScriptOptions, p.ExecutionPlan)
	if err != nil {
		return fmt.Errorf("fleetbench check: %w", err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	w := p.StdOut
	if w == nil {
		w = os.Stdout
	}
	_, _ = fmt.Fprintf(w, "%s\n", line)
	if len(line) > maxTerminationMessage {
		r.Segments = nil
		line, _ = json.Marshal(r)
	}
	writeTerminationLog(line)
	exit(0)
	return nil
}

// writeTerminationLog leaves the report where the kubelet reads a termination message, when
// there is one (in a pod); the kubelet keeps at most 4 KiB of it.
func writeTerminationLog(line []byte) {
	f, err := os.OpenFile(TerminationLog, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(line)
}
