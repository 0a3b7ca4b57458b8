package testrun

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

// Event reasons of the warnings where a split fleet differs from one k6 process. The events
// API folds events of one reason and action into a series whatever their notes, so each kind
// has its own reason and one event.
const (
	eventZeroVUSegment      = "ZeroVUSegment"
	eventPerRunnerNumbering = "PerRunnerNumbering"
	eventThresholdNoData    = "ThresholdOnNoData"
	// eventRunnerMemoryLeak: a runner's own memory leaks (status.runners.memory.trend).
	eventRunnerMemoryLeak = "RunnerMemoryLeak"
	maxResultWarnings     = 16   // status.results.warnings' MaxItems
	maxWarningLength      = 1024 // and its items' MaxLength
	maxEventNote          = 1000 // events.k8s.io refuses a note of 1 KiB or more
	preflightLogLines     = 2000
	maxPreflightLogBytes  = 1 << 20
	perRunnerNumberingFix = "each k6 process numbers its own VUs from 1 and each VU its iterations from 0, so with %d runners " +
		"these numbers repeat across runners and do not match one k6 process; use exec.vu.idInTest and " +
		"exec.scenario.iterationInTest (import exec from 'k6/execution') for numbers unique in the whole test"
)

// warnBeforeRun says, once the pre-flight passed, where the split fleet will differ from one k6
// process: in the ScriptChecked message it returns (verdict), in status.results.warnings (kept
// through the merge) and in an event per kind. Nothing has started yet (the pre-flight runs
// alongside provisioning, and the start waits for it), so a user can still change the run.
func (r *Reconciler) warnBeforeRun(ctx context.Context, s *scope, pods []corev1.Pod, verdict string) string {
	zeroVUs, numbering := r.splitWarnings(ctx, s, pods)
	warnings := slices.Clone(zeroVUs)
	if numbering != "" {
		warnings = append(warnings, numbering)
	}
	if len(warnings) == 0 {
		return verdict
	}
	addWarnings(s, warnings)
	r.warn(s.run, eventZeroVUSegment, "CheckScript", zeroVUs)
	if numbering != "" {
		r.warn(s.run, eventPerRunnerNumbering, "CheckScript", []string{numbering})
	}
	return fmt.Sprintf("%s; split over %d runners it will differ from one k6 process: %s", verdict, s.run.RunnerCount(), strings.Join(warnings, "; "))
}

// splitWarnings are what is known before the run of where this fleet will differ from one k6
// process: runners' execution segments that get no VU of a scenario (zeroVUs), and a script
// that reads __VU or __ITER (numbering).
func (r *Reconciler) splitWarnings(ctx context.Context, s *scope, pods []corev1.Pod) (zeroVUs []string, numbering string) {
	run := s.run
	n := run.RunnerCount()
	if n < 2 {
		return nil, ""
	}
	if scenarios, ok := r.knownScenarios(ctx, s, pods); ok {
		zeroVUs = runners.ZeroVUWarnings(scenarios, n, func(i int) string { return naming.RunnerJob(run.Name, i) })
	}
	if globals := runners.PerRunnerNumbering(s.script); len(globals) > 0 {
		numbering = fmt.Sprintf("the script reads %s: "+perRunnerNumberingFix, strings.Join(globals, " and "), n)
	}
	return zeroVUs, numbering
}

// knownScenarios are the run's scenarios as k6 resolved them: the options the pre-flight's `k6
// inspect --execution-requirements` printed to its log (the script's own, spec.load's config,
// and the derived default scenario). Without them, spec.load's generated config is used, but
// only where nothing can override it (the script exports no options, spec.args and
// spec.arguments set nothing); otherwise the scenarios are not known and nothing is said.
func (r *Reconciler) knownScenarios(ctx context.Context, s *scope, pods []corev1.Pod) ([]runners.ScenarioVUs, bool) {
	for i := range pods {
		pod := &pods[i]
		if exit, _ := exitOf(pod); !preflightEnded(pod) || exit != 0 {
			continue
		}
		// The log is the tenant's (its init code can print anything): bounded, and what it can
		// forge is only a warning about its own run.
		if sc, ok := checkScenarios(terminatedMessage(pod)); ok {
			return sc, true
		}
		tail, err := r.Logs.Tail(ctx, pod, runners.ContainerName, preflightLogLines, false)
		if err == nil && len(tail) <= maxPreflightLogBytes {
			if sc, ok := checkScenarios(string(tail)); ok {
				return sc, true
			}
			if sc, ok := runners.ScenariosFromOptions(tail); ok {
				return sc, true
			}
		}
	}
	spec := &s.run.Spec
	if spec.Load == nil || exportsOptions(s.script) || len(runners.UserArgs(spec)) > 0 {
		return nil, false
	}
	cfg, err := runners.LoadConfig(spec, s.run.Name)
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

// addWarnings appends warnings to status.results.warnings once each, within the API's bounds.
func addWarnings(s *scope, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	r := s.results().DeepCopy()
	if r == nil {
		r = &v1alpha1.Results{}
	}
	r.Warnings = mergeWarnings(r.Warnings, warnings)
	s.d.results = r
}

// mergeWarnings is kept followed by the new warnings not already in it, at most
// maxResultWarnings, each within maxWarningLength.
func mergeWarnings(kept, more []string) []string {
	out := make([]string, 0, min(len(kept)+len(more), maxResultWarnings))
	seen := map[string]bool{}
	for _, w := range append(append([]string{}, kept...), more...) {
		w = statusbound.Cut(w, maxWarningLength)
		if seen[w] || len(out) == maxResultWarnings {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// warn records warnings of one kind as one Warning event on the TestRun (status has each whole).
func (r *Reconciler) warn(run *v1alpha1.TestRun, reason, action string, warnings []string) {
	if len(warnings) > 0 {
		r.recorder.Eventf(run, nil, corev1.EventTypeWarning, reason, action, "%s", statusbound.Cut(strings.Join(warnings, "; "), maxEventNote))
	}
}
