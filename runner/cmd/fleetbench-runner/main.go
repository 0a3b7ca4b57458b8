// Command fleetbench-runner is k6 v2 with fleetbench's result output
// compiled in: `fleetbench-runner run --out fleetbench script.js`. Standard
// k6 scripts run unchanged. Before k6 starts, it waits until the target is reachable from the
// pod (package preflight, FLEETBENCH_REACH); `fleetbench-runner wait-for-target host:port...`
// does only that.
package main

import (
	"os"

	"go.k6.io/k6/v2/cmd"

	// Registers the "fleetbench" output extension.
	_ "fleetbench.dev/fleetbench/runner/output"
	"fleetbench.dev/fleetbench/runner/preflight"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == preflight.Command {
		os.Exit(preflight.Main(os.Args[2:], os.Stderr))
	}
	if code := preflight.FromEnv(os.Getenv, os.Stderr); code != 0 {
		os.Exit(code)
	}
	cmd.Execute()
}
