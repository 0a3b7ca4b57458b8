package provision

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// warnBeforeRun says, once the pre-flight passed, where the split fleet will differ from one k6
// process: in the ScriptChecked message it returns (verdict), in status.results.warnings (kept
// through the merge) and in an event per kind. Nothing has started yet (the pre-flight runs
// alongside provisioning, and the start waits for it), so a user can still change the run.
func (r *Stage) warnBeforeRun(ctx context.Context, s *decide.Scope, pods []corev1.Pod, verdict string) string {
	zeroVUs, numbering := r.splitWarnings(ctx, s, pods)
	warnings := slices.Clone(zeroVUs)
	if numbering != "" {
		warnings = append(warnings, numbering)
	}
	if len(warnings) == 0 {
		return verdict
	}
	decide.AddWarnings(s, warnings)
	r.Warn(s.Run, runenv.EventZeroVUSegment, "CheckScript", zeroVUs)
	if numbering != "" {
		r.Warn(s.Run, runenv.EventPerRunnerNumbering, "CheckScript", []string{numbering})
	}
	return fmt.Sprintf("%s; split over %d runners it will differ from one k6 process: %s", verdict, s.Run.RunnerCount(), strings.Join(warnings, "; "))
}

// splitWarnings are what is known before the run of where this fleet will differ from one k6
// process: runners' execution segments that get no VU of a scenario (zeroVUs), and a script
// that reads __VU or __ITER (numbering).
func (r *Stage) splitWarnings(ctx context.Context, s *decide.Scope, pods []corev1.Pod) (zeroVUs []string, numbering string) {
	run := s.Run
	// With zones the segments are the whole fleet's, over every cluster.
	n := run.Spec.FleetRunners(run.RunnerCount())
	if n < 2 {
		return nil, ""
	}
	name := func(i int) string { return naming.RunnerJob(run.Name, i) }
	if n != run.RunnerCount() {
		name = func(i int) string { return fmt.Sprintf("runner %d of the fleet's %d", i, n) }
	}
	if scenarios, ok := r.knownScenarios(ctx, s, pods); ok {
		zeroVUs = runners.ZeroVUWarnings(scenarios, n, name)
	}
	if globals := runners.PerRunnerNumbering(s.Script); len(globals) > 0 {
		numbering = fmt.Sprintf("the script reads %s: "+runenv.PerRunnerNumberingFix, strings.Join(globals, " and "), n)
	}
	return zeroVUs, numbering
}

// knownScenarios are the run's scenarios as k6 resolved them: the options the pre-flight's `k6
// inspect --execution-requirements` printed to its log (the script's own, spec.load's config,
// and the derived default scenario). Without them, spec.load's generated config is used, but
// only where nothing can override it (the script exports no options, spec.args and
// spec.arguments set nothing); otherwise the scenarios are not known and nothing is said.
func (r *Stage) knownScenarios(ctx context.Context, s *decide.Scope, pods []corev1.Pod) ([]runners.ScenarioVUs, bool) {
	for i := range pods {
		pod := &pods[i]
		if exit, _ := decide.ExitOf(pod); !PreflightEnded(pod) || exit != 0 {
			continue
		}
		// The log is the tenant's (its init code can print anything): bounded, and what it can
		// forge is only a warning about its own run.
		if sc, ok := checkScenarios(decide.TerminatedMessage(pod)); ok {
			return sc, true
		}
		tail, err := r.Logs.Tail(ctx, pod, runners.ContainerName, runenv.PreflightLogLines, false)
		if err == nil && len(tail) <= runenv.MaxPreflightLogBytes {
			if sc, ok := checkScenarios(string(tail)); ok {
				return sc, true
			}
			if sc, ok := runners.ScenariosFromOptions(tail); ok {
				return sc, true
			}
		}
	}
	spec := &s.Run.Spec
	if spec.Load == nil || exportsOptions(s.Script) || len(runners.UserArgs(spec)) > 0 {
		return nil, false
	}
	cfg, err := runners.LoadConfig(spec, s.Run.Name)
	if err != nil || cfg == nil {
		return nil, false
	}
	return runners.ScenariosFromOptions(cfg)
}

// checkScenarios are the scenarios of the pre-flight's check report (k6 run's own plan), their
// VUs summed over the segments it printed; false without a report that has them.
func checkScenarios(out string) ([]runners.ScenarioVUs, bool) {
	report, ok := measure.ParseCheckReport(out)
	if !ok {
		return nil, false
	}
	return runners.ScenariosFromCheckReport(report)
}

var optionsExport = regexp.MustCompile(`export\s+(const|let|var)\s+options\b|export\s*\{[^}]*\boptions\b`)

// exportsOptions says whether the script exports k6 options, which override spec.load's config.
func exportsOptions(script string) bool { return optionsExport.MatchString(script) }
