// Command fleetbench-runner is k6 v2 with fleetbench's result output
// compiled in: `fleetbench-runner run --out fleetbench script.js`. Standard
// k6 scripts run unchanged. While k6 loads the script, it waits until the target is reachable
// from the pod (package preflight, FLEETBENCH_REACH), and reports ready only then;
// `fleetbench-runner wait-for-target host:port...` does only the wait.
// `fleetbench-runner check run <args> script` is the operator's pre-flight: k6 run with the
// runner's arguments, stopped before anything runs (package check).
package main

import (
	"fmt"
	"os"

	"go.k6.io/k6/v2/cmd"

	// Registers the "fleetbench" output extension.
	"fleetbench.dev/fleetbench/runner/check"
	_ "fleetbench.dev/fleetbench/runner/output"
	"fleetbench.dev/fleetbench/runner/preflight"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == preflight.Command {
		os.Exit(preflight.Main(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == check.Command {
		args, err := check.Args(os.Args[2:])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		// k6 reads its arguments from os.Args; the target is not waited for (it may not exist).
		os.Args = append(os.Args[:1], args...)
		cmd.Execute()
		return
	}
	// The target is waited for beside k6's start, not before it: the runner reports ready
	// (measure.ReadyPath) once both are done.
	preflight.StartFromEnv(os.Getenv, os.Stderr, os.Exit)
	cmd.Execute()
}
