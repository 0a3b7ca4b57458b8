// Command kubectl-fleetbench is the kubectl plugin `kubectl fleetbench`: run a TestRun and follow
// it to its verdict, wait for one, show results and sizing tables, and write reports. Install it
// with `go install ./cmd/kubectl-fleetbench` (or krew: `make plugin`); the logic is in
// internal/plugin.
package main

import (
	"os"

	"fleetbench.dev/fleetbench/internal/plugin"
)

func main() { os.Exit(plugin.Main()) }
