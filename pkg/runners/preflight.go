package runners

import (
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// PreflightDeadline bounds the pre-flight pod: k6 loads the script once and exits.
const PreflightDeadline = 2 * time.Minute

// CheckCommand is the runner binary's pre-flight: `k6 run` with the same arguments and
// environment, stopped before anything runs (runner/check).
const CheckCommand = "check"

// PreflightJob checks the test before anything is provisioned: `fleetbench-runner check` runs
// `k6 run` in the runner's image with runner 0's arguments (every flag of spec.args, the
// segments of the fleet) and environment (spec.runner.env and envFrom, the target's TARGET_*
// variables, which do not depend on the target being up, K6_*), and stops it when k6 creates
// its outputs: by then k6 has parsed the flags, loaded the script and its imports, run its
// init code and derived the execution plan exactly as each runner's `k6 run` will. A broken
// test fails in seconds, before the target and runners are up, with k6's error (and line) in
// the pod's termination message; a passed one leaves k6's plan there (measure.CheckReport).
func PreflightJob(tr *v1alpha1.TestRun, opts JobOptions) *batchv1.Job {
	n := max(tr.RunnerCount(), 1)
	job := Job(tr, 0, n, opts)
	job.Name = naming.PreflightJob(tr.Name)
	job.Labels = PreflightLabels(tr)
	tmpl := &job.Spec.Template
	delete(tmpl.Labels, naming.LabelRunnerIndex)
	for k, v := range job.Labels {
		tmpl.Labels[k] = v
	}
	spec := &tmpl.Spec
	// Nothing to reach yet (the target comes after), and nothing to spread: one short pod. It
	// runs beside the runners now, so it must not repel them either: a `separate` fleet's
	// required anti-affinity on it would keep a runner off its node, and the scheduler retries
	// such a runner only when the pod is deleted, not when it ends (minutes later).
	spec.TopologySpreadConstraints = nil
	if spec.Affinity != nil {
		spec.Affinity.PodAntiAffinity = nil
	}
	c := &spec.Containers[0]
	c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == measure.ReachEnv || e.Name == measure.ReachTimeoutEnv })
	c.Args = preflightArgs(c.Args, len(UserArgs(&tr.Spec)), n)
	c.Ports, c.ReadinessProbe = nil, nil
	job.Spec.ActiveDeadlineSeconds = ptr.To(int64(PreflightDeadline.Seconds()))
	return job
}

// PreflightLabels select a TestRun's pre-flight Job and pod.
func PreflightLabels(tr *v1alpha1.TestRun) map[string]string {
	return map[string]string{naming.LabelTestRun: tr.Name, naming.LabelRole: naming.RolePreflight}
}

// preflightArgs are the check's arguments: runner 0's, without the --no-setup, --no-teardown
// and --linger fleetbench adds to a fleet's runners (they precede the user's flags), so k6's
// answer says whether the user's own flags, env, config or script options skip setup() or
// teardown().
func preflightArgs(runArgs []string, userArgs, runners int) []string {
	args := []string{CheckCommand}
	fleetEnd := len(runArgs) - 1 - userArgs // the user's flags and the script follow
	for i, a := range runArgs {
		if i < fleetEnd && OnceForTheFleet(runners) && (a == "--no-setup" || a == "--no-teardown" || a == "--linger") {
			continue
		}
		args = append(args, a)
	}
	return args
}

// OnceSteps says whether the fleet skips setup() and teardown() as `k6 run` would: from the
// pre-flight's report (k6's consolidated options: flags, K6_* env, --config, script options)
// when there is one, else from spec.args and spec.runner.env alone.
func OnceSteps(spec *v1alpha1.TestRunSpec, report *measure.CheckReport) (noSetup, noTeardown bool) {
	if report != nil {
		return report.NoSetup, report.NoTeardown
	}
	if spec.Runner != nil {
		for _, e := range spec.Runner.Env {
			if e.ValueFrom != nil {
				continue
			}
			switch e.Name {
			case "K6_NO_SETUP":
				noSetup, _ = strconv.ParseBool(e.Value)
			case "K6_NO_TEARDOWN":
				noTeardown, _ = strconv.ParseBool(e.Value)
			}
		}
	}
	// Flags override the environment; the last of a flag wins, as in pflag.
	for _, a := range UserArgs(spec) {
		name, value, hasValue := strings.Cut(a, "=")
		on := true
		if hasValue {
			b, err := strconv.ParseBool(value)
			if err != nil {
				continue // k6 refuses it in the pre-flight
			}
			on = b
		}
		switch name {
		case "--no-setup":
			noSetup = on
		case "--no-teardown":
			noTeardown = on
		}
	}
	return noSetup, noTeardown
}
