package runners

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/results"
)

// The pre-flight loads the runner's script with the runner's config and -e variables, in the
// runner's image, and nothing else: no REST API, no wait for the target, one short pod.
func TestPreflightJobInspectsTheRunnersScript(t *testing.T) {
	tr := tw.MakeTestRun("check", "ns").Devices(10, "10s").Duration("1m").Inline("export default function () {}").Obj()
	tr.Spec.Arguments = "-e MODE=fast --tag team=a --env=REGION=eu"
	opts := JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "check-script", HasConfig: true,
		TargetEnv: []corev1.EnvVar{{Name: "TARGET_WEB_HOST", Value: "web.fb"}, {Name: "TARGET_WEB_PORT", Value: "80"}}}
	runner := Job(tr, 0, 1, opts)
	job := PreflightJob(tr, opts)
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"inspect", "--execution-requirements", "--config", configDir + "/" + ConfigKey, "-e", "MODE=fast", "--env=REGION=eu",
		runner.Spec.Template.Spec.Containers[0].Args[len(runner.Spec.Template.Spec.Containers[0].Args)-1]}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
	if job.Name != naming.PreflightJob("check") || job.Labels[naming.LabelRole] != naming.RolePreflight ||
		job.Spec.Template.Labels[naming.LabelRole] != naming.RolePreflight || job.Spec.Template.Labels[naming.LabelRunnerIndex] != "" {
		t.Errorf("name %s labels %v pod labels %v", job.Name, job.Labels, job.Spec.Template.Labels)
	}
	if c.Image != "fleetbench/runner:dev" || c.ReadinessProbe != nil || len(c.Ports) != 0 || len(job.Spec.Template.Spec.InitContainers) != 0 {
		t.Errorf("container %+v", c)
	}
	for _, e := range c.Env {
		if e.Name == results.ReachEnv || e.Name == results.ReachTimeoutEnv {
			t.Errorf("env %s=%s: the pre-flight runs before the target exists and must not wait for it", e.Name, e.Value)
		}
	}
	if *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 120 || c.TerminationMessagePolicy != "FallbackToLogsOnError" {
		t.Errorf("the pre-flight runs once, bounded, and keeps k6's error: %+v", job.Spec)
	}
	if !reflect.DeepEqual(job.Spec.Template.Spec.Volumes, runner.Spec.Template.Spec.Volumes) {
		t.Errorf("volumes differ from the runner's")
	}
}
