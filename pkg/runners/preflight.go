package runners

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/results"
)

// PreflightDeadline bounds the pre-flight pod: k6 loads the script once and exits.
const PreflightDeadline = 2 * time.Minute

// PreflightJob checks the script before anything is provisioned: `k6 inspect
// --execution-requirements` in the runner's image, with the runner's script, config, env and
// placement, compiles the script, resolves its imports and parses its options, so a broken
// script fails in seconds instead of after the target and runners are up. Its pod keeps k6's
// error (with the line) in its termination message.
func PreflightJob(tr *v1alpha1.TestRun, opts JobOptions) *batchv1.Job {
	job := Job(tr, 0, 1, opts)
	job.Name = naming.PreflightJob(tr.Name)
	job.Labels = PreflightLabels(tr)
	tmpl := &job.Spec.Template
	delete(tmpl.Labels, naming.LabelRunnerIndex)
	for k, v := range job.Labels {
		tmpl.Labels[k] = v
	}
	spec := &tmpl.Spec
	// Nothing to reach yet (the target comes after), and nothing to spread: one short pod.
	spec.TopologySpreadConstraints = nil
	c := &spec.Containers[0]
	c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == results.ReachEnv || e.Name == results.ReachTimeoutEnv })
	c.Args = preflightArgs(c.Args, UserArgs(&tr.Spec))
	c.Ports, c.ReadinessProbe = nil, nil
	job.Spec.ActiveDeadlineSeconds = ptr.To(int64(PreflightDeadline.Seconds()))
	return job
}

// PreflightLabels select a TestRun's pre-flight Job and pod.
func PreflightLabels(tr *v1alpha1.TestRun) map[string]string {
	return map[string]string{naming.LabelTestRun: tr.Name, naming.LabelRole: naming.RolePreflight}
}

// preflightArgs keeps of a runner's `k6 run` arguments what `k6 inspect` reads: the config
// file, the script's -e variables (a script's init code may read them) and the script.
func preflightArgs(runArgs, userArgs []string) []string {
	args := []string{"inspect", "--execution-requirements"}
	for i, a := range runArgs {
		if a == "--config" && i+1 < len(runArgs) {
			args = append(args, a, runArgs[i+1])
		}
	}
	for i, a := range userArgs {
		switch {
		case (a == "-e" || a == "--env") && i+1 < len(userArgs):
			args = append(args, a, userArgs[i+1])
		case strings.HasPrefix(a, "-e=") || strings.HasPrefix(a, "--env="):
			args = append(args, a)
		}
	}
	return append(args, runArgs[len(runArgs)-1])
}
