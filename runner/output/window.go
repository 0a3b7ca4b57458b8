package output

import (
	"time"

	"go.k6.io/k6/v2/lib"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// windowForScript is the window when the operator set none (K6_FLEETBENCH_WINDOW): only the
// script knows the run's length (a script-only TestRun, a k6-operator-style ConfigMap), and k6
// has planned it by the time it builds the output. The length is the last scenario's end
// without its gracefulStop (iterations finish early or the scenario is over); its width is
// measure.WindowFor that length, so a 30 s arrival-rate run gets 1 s windows, not 10 s. A
// scenario that ends when its iterations are done has only a limit (maxDuration): the run
// starts at measure.OpenEndedWindow and the collector doubles the width as it grows. The plan
// is the whole test's (not this runner's execution segment, which may hold no iteration), so
// every runner of a fleet chooses the same width and their windows line up.
func windowForScript(opts lib.Options) time.Duration {
	whole, err := lib.NewExecutionTuple(nil, nil)
	if err != nil {
		return measure.DefaultWindow
	}
	var length time.Duration
	for _, cfg := range opts.Scenarios {
		switch cfg.GetType() {
		case "shared-iterations", "per-vu-iterations":
			return measure.OpenEndedWindow
		}
		steps := cfg.GetExecutionRequirements(whole)
		if len(steps) == 0 {
			continue
		}
		length = max(length, cfg.GetStartTime()+steps[len(steps)-1].TimeOffset-cfg.GetGracefulStop())
	}
	return measure.WindowFor(length)
}
