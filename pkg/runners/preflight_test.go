package runners

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// The pre-flight is runner 0's `k6 run`, in the runner's image, with the runner's arguments and
// environment, and nothing else: no REST API port, no wait for the target, one short pod.
func TestPreflightJobChecksTheRunnersTest(t *testing.T) {
	tr := tw.MakeTestRun("check", "ns").Devices(10, "10s").Duration("1m").Inline("export default function () {}").Obj()
	tr.Spec.Arguments = "-e MODE=fast --tag team=a --env=REGION=eu --vus 3 --iterations 30 --no-teardown"
	tr.Spec.Runner = &v1alpha1.RunnerSpec{
		Env:     []corev1.EnvVar{{Name: "BASE_PATH", Value: "/api"}, {Name: "K6_BATCH", Value: "4"}},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}},
	}
	opts := JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "check-script", HasConfig: true,
		TargetEnv: []corev1.EnvVar{{Name: "TARGET_WEB_URL", Value: "http://web.fb:80"}, {Name: "TARGET_WEB_HOST", Value: "web.fb"}, {Name: "TARGET_WEB_PORT", Value: "80"}}}
	for _, n := range []int32{1, 3} {
		tr.Spec.Parallelism = v1alpha1.FixedParallelism(n)
		runner := Job(tr, 0, int(n), opts).Spec.Template.Spec.Containers[0]
		job := PreflightJob(tr, opts)
		c := job.Spec.Template.Spec.Containers[0]
		// Exactly runner 0's arguments (segments, the user's every flag, the script), less the
		// setup and teardown fleetbench takes over for a fleet.
		want := append([]string{CheckCommand}, slices.DeleteFunc(slices.Clone(runner.Args[:len(runner.Args)-11]),
			func(a string) bool { return n > 1 && (a == "--no-setup" || a == "--no-teardown" || a == "--linger") })...)
		want = append(want, "-e", "MODE=fast", "--tag", "team=a", "--env=REGION=eu", "--vus", "3", "--iterations", "30", "--no-teardown", runner.Args[len(runner.Args)-1])
		if !slices.Equal(c.Args, want) {
			t.Errorf("%d runners: args = %q, want %q", n, c.Args, want)
		}
		// A fleet's sequence is in the config file, as the runners read it (K6Config).
		if slices.Contains(c.Args, "--execution-segment-sequence") == (n > 1) || !slices.Contains(c.Args, "--config") || slices.Contains(c.Args, "--linger") {
			t.Errorf("%d runners: args %q", n, c.Args)
		}
		// The runner's whole environment, the target's variables included, but no wait for it.
		wantEnv := slices.DeleteFunc(slices.Clone(runner.Env), func(e corev1.EnvVar) bool {
			return e.Name == measure.ReachEnv || e.Name == measure.ReachTimeoutEnv
		})
		if !reflect.DeepEqual(c.Env, wantEnv) || !reflect.DeepEqual(c.EnvFrom, runner.EnvFrom) {
			t.Errorf("%d runners: env %v envFrom %v, want the runner's %v %v", n, c.Env, c.EnvFrom, wantEnv, runner.EnvFrom)
		}
		for _, name := range []string{"TARGET_WEB_URL", "BASE_PATH", "K6_BATCH", "K6_AUTO_EXTENSION_RESOLUTION"} {
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
				t.Errorf("%d runners: env lacks %s", n, name)
			}
		}
		if job.Name != naming.PreflightJob("check") || job.Labels[naming.LabelRole] != naming.RolePreflight ||
			job.Spec.Template.Labels[naming.LabelRole] != naming.RolePreflight || job.Spec.Template.Labels[naming.LabelRunnerIndex] != "" {
			t.Errorf("name %s labels %v pod labels %v", job.Name, job.Labels, job.Spec.Template.Labels)
		}
		if c.Image != "fleetbench/runner:dev" || c.ReadinessProbe != nil || len(c.Ports) != 0 || len(job.Spec.Template.Spec.InitContainers) != 0 {
			t.Errorf("container %+v", c)
		}
		if *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 120 || c.TerminationMessagePolicy != "FallbackToLogsOnError" {
			t.Errorf("the pre-flight runs once, bounded, and keeps k6's error: %+v", job.Spec)
		}
		if !reflect.DeepEqual(job.Spec.Template.Spec.Volumes, Job(tr, 0, int(n), opts).Spec.Template.Spec.Volumes) {
			t.Errorf("volumes differ from the runner's")
		}
	}
}

// Whether the fleet skips setup() or teardown(): k6's answer when the pre-flight gave one,
// else the flags and plain env values, flags last.
func TestOnceSteps(t *testing.T) {
	spec := func(args []string, env ...corev1.EnvVar) *v1alpha1.TestRunSpec {
		return &v1alpha1.TestRunSpec{Args: args, Runner: &v1alpha1.RunnerSpec{Env: env}}
	}
	for _, tc := range []struct {
		name                string
		spec                *v1alpha1.TestRunSpec
		report              *measure.CheckReport
		noSetup, noTeardown bool
	}{
		{name: "nothing", spec: spec(nil)},
		{name: "flags", spec: spec([]string{"--no-teardown", "--no-setup"}), noSetup: true, noTeardown: true},
		{name: "flag off again", spec: spec([]string{"--no-teardown", "--no-teardown=false"})},
		{name: "env", spec: spec(nil, corev1.EnvVar{Name: "K6_NO_TEARDOWN", Value: "true"}), noTeardown: true},
		{name: "flag over env", spec: spec([]string{"--no-setup=0"}, corev1.EnvVar{Name: "K6_NO_SETUP", Value: "1"})},
		{name: "arguments", spec: &v1alpha1.TestRunSpec{Arguments: "--vus 2 --no-setup"}, noSetup: true},
		{name: "k6 says (script options)", spec: spec(nil), report: &measure.CheckReport{NoTeardown: true}, noTeardown: true},
		{name: "k6 has the last word", spec: spec([]string{"--no-setup"}), report: &measure.CheckReport{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, td := OnceSteps(tc.spec, tc.report)
			if s != tc.noSetup || td != tc.noTeardown {
				t.Errorf("noSetup %v noTeardown %v, want %v %v", s, td, tc.noSetup, tc.noTeardown)
			}
		})
	}
}

// The pre-flight runs beside the runners: it must not repel them (a separate fleet's required
// anti-affinity on it kept a runner off its node for minutes), while the runners keep theirs.
func TestPreflightRepelsNoRunner(t *testing.T) {
	tr := tw.MakeTestRun("apart", "ns").Parallelism(2).Separate().Inline("export default function () {}").Obj()
	tr.Spec.Runner = &v1alpha1.RunnerSpec{AvoidTarget: v1alpha1.AvoidTargetRequired}
	opts := JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "apart-script"}
	if a := Job(tr, 1, 2, opts).Spec.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil ||
		len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatalf("the runners of a separate fleet want required anti-affinity, got %+v", a)
	}
	if a := PreflightJob(tr, opts).Spec.Template.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		t.Errorf("the pre-flight pod carries pod anti-affinity %+v", a.PodAntiAffinity)
	}
}
