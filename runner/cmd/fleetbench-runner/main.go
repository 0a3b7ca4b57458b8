// Command fleetbench-runner is k6 v2 with fleetbench's result output
// compiled in: `fleetbench-runner run --out fleetbench script.js`. Standard
// k6 scripts run unchanged.
package main

import (
	"go.k6.io/k6/v2/cmd"

	// Registers the "fleetbench" output extension.
	_ "fleetbench.dev/fleetbench/runner/output"
)

func main() {
	cmd.Execute()
}
