// Command fleetbench-runner is k6 v2 with fleetbench's result output
// compiled in: `fleetbench-runner run --out fleetbench script.js`. Standard
// k6 scripts run unchanged. `fleetbench-runner wait-for-target host:port...` is the runner
// pod's init step (package preflight).
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
	cmd.Execute()
}
