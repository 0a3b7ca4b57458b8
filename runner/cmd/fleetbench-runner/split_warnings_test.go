package main

import (
	"fmt"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// checkSplitWarnings asks the operator's own pure functions what it would warn before the run
// at parallelism 3 (runners.ZeroVUWarnings on the pre-flight's plan, as
// internal/controller/testrun/provision/preflight_warnings.go does, and runners.PerRunnerNumbering on the script),
// and holds the corpus to them: a script marked split-differs must draw a warning that says its
// split differs from one k6; any other script, whose split matches k6 exactly, must draw none.
// A scenario with fewer VUs than runners leaves runners idle without changing what the test
// does (each VU's iterations, a shared total, an arrival rate split by maxVUs are the same):
// that warning is about waste, so it is logged and allowed either way.
func checkSplitWarnings(t *testing.T, fr fidelityRun, plan measure.CheckReport) {
	t.Helper()
	const parallelism = 3
	scenarios, ok := runners.ScenariosFromCheckReport(plan)
	if !ok {
		t.Fatalf("the pre-flight's plan has no scenarios: %+v", plan)
	}
	// A runner with none of a scenario's VUs (none of its maxVUs, for an arrival rate) gets none
	// of its work either: k6 splits an arrival rate by the segments of maxVUs. Only a runner with
	// some maxVUs but no pre-allocated VU does its share differently (it drops iterations while
	// it allocates), so the warnings are told apart by asking again as if every VU were
	// pre-allocated: what remains are the idle runners.
	name := func(i int) string { return fmt.Sprintf("runner-%d", i) }
	idle := map[string]bool{}
	asIfPreallocated := make([]runners.ScenarioVUs, len(scenarios))
	for i, sc := range scenarios {
		if strings.HasSuffix(sc.Executor, "arrival-rate") {
			sc.VUs = sc.MaxVUs
		}
		asIfPreallocated[i] = sc
	}
	for _, w := range runners.ZeroVUWarnings(asIfPreallocated, parallelism, name) {
		idle[w] = true
		t.Logf("warning before the run (idle runners, same work): %s", w)
	}
	var differs []string
	for _, w := range runners.ZeroVUWarnings(scenarios, parallelism, name) {
		if !idle[w] {
			differs = append(differs, w)
		}
	}
	if globals := runners.PerRunnerNumbering(fr.src); len(globals) > 0 {
		differs = append(differs, "the script reads "+strings.Join(globals, " and "))
	}
	switch {
	case fr.splitDiffers && len(differs) == 0:
		t.Errorf("marked split-differs, but the operator would warn of nothing at parallelism %d (scenarios %+v)", parallelism, scenarios)
	case !fr.splitDiffers && len(differs) > 0:
		t.Errorf("the split matches k6, but the operator would warn that it differs: %q", differs)
	}
	for _, w := range differs {
		t.Logf("warning before the run: %s", w)
	}
}

// teardownCheck is the check a corpus script's teardown() makes to show that it ran.
const teardownCheck = "teardown ran"

// checkTeardownOnce: where k6 ran teardown() (its check counted), the fleet ran it exactly as
// often, also when the run ended early (abortOnFail, test.abort()).
func checkTeardownOnce(t *testing.T, ref k6Summary, one, three *measure.Summary) {
	t.Helper()
	var want uint64
	var walk func(g judge.K6Group)
	walk = func(g judge.K6Group) {
		for _, c := range g.Checks {
			if c.Name == teardownCheck {
				want += c.Passes + c.Fails
			}
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	walk(ref.RootGroup)
	if want == 0 {
		return
	}
	for label, s := range map[string]*measure.Summary{"1 segment": one, "3 segments": three} {
		var got uint64
		for _, c := range s.Checks {
			if c.Name == teardownCheck {
				got += c.Passes + c.Fails
			}
		}
		if got != want {
			t.Errorf("%s: teardown() ran %d times, k6 ran it %d times", label, got, want)
		}
	}
}
