package runners

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func TestJobSplitsTheLoadAndStartsPaused(t *testing.T) {
	tr := tw.MakeTestRun("stab", "team").Devices(1000, "200s").Duration("2h").Parallelism(2).Arguments("--tag team=fleet").Obj()
	opts := JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "stab-script", HasConfig: true, TargetNamespace: "fb-team-stab",
		TargetEnv: []corev1.EnvVar{{Name: "TARGET_WEB_URL", Value: "http://web.fb-team-stab.svc:80"}}}

	var firsts []string
	for i := 0; i < 2; i++ {
		job := Job(tr, i, 2, opts)
		c := job.Spec.Template.Spec.Containers[0]
		args := strings.Join(c.Args, " ")
		for _, want := range []string{
			"--execution-segment " + Segments(2)[i].Segment,
			"--paused", "--address 0.0.0.0:6565", "--out fleetbench", "--config /fleetbench/config/k6-config.json",
			"--tag team=fleet",
		} {
			if !strings.Contains(args, want) {
				t.Errorf("runner %d args %q lack %q", i, args, want)
			}
		}
		if slices.Contains(c.Args, "--execution-segment-sequence") {
			t.Errorf("runner %d has the fleet's sequence as a flag; it is in the config file: %v", i, c.Args)
		}
		if !slices.Contains(c.Args, "--no-thresholds") {
			t.Errorf("runner %d judges thresholds on its own share: %v", i, c.Args)
		}
		if c.Args[len(c.Args)-1] != "/fleetbench/config/test.js" {
			t.Errorf("inline script path = %q", c.Args[len(c.Args)-1])
		}
		env := envOf(c)
		firsts = append(firsts, env["DEVICE_ID_FIRST"])
		if env["DEVICE_COUNT"] != "500" || env["DEVICE_RATE_PER_SECOND"] != "2.500" || env["K6_FLEETBENCH_CHECKPOINT"] != "60s" || env["TARGET_WEB_URL"] == "" || env["FLEETBENCH_RUNNER_INDEX"] == "" {
			t.Errorf("runner %d env = %v", i, env)
		}
		if *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("runner %d may retry: a rerun doubles the load", i)
		}
		if c.LivenessProbe != nil || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != measure.ReadyPath ||
			c.ReadinessProbe.HTTPGet.Port.IntValue() != LivePort {
			t.Errorf("runner %d probes: want readiness on the live port's %s (script loaded, target reached) and no liveness", i, measure.ReadyPath)
		}
		if job.Name != "stab-runner-"+string(rune('0'+i)) {
			t.Errorf("job name %q", job.Name)
		}
	}
	if !slices.Equal(firsts, []string{"0", "500"}) {
		t.Errorf("device ranges start at %v, want [0 500]", firsts)
	}
}

func TestJobScriptSources(t *testing.T) {
	cases := []struct {
		script v1alpha1.ScriptSpec
		path   string
		volume func(corev1.Volume) bool
	}{
		{v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "device-push", File: "push.js"}}, "/fleetbench/script/push.js",
			func(v corev1.Volume) bool { return v.ConfigMap != nil && v.ConfigMap.Name == "device-push" }},
		{v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "device-push"}}, "/fleetbench/script/test.js",
			func(v corev1.Volume) bool { return v.ConfigMap != nil && v.ConfigMap.Name == "device-push" }},
		{v1alpha1.ScriptSpec{VolumeClaim: &v1alpha1.VolumeClaimScript{Name: "scripts", File: "x/y.js", ReadOnly: true}}, "/fleetbench/script/x/y.js",
			func(v corev1.Volume) bool {
				return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "scripts"
			}},
		{v1alpha1.ScriptSpec{LocalFile: "/scripts/t.js"}, "/scripts/t.js", nil},
	}
	for _, tc := range cases {
		tr := tw.MakeTestRun("s", "ns").Script(tc.script).Obj()
		job := Job(tr, 0, 1, JobOptions{ConfigMap: "s-script"})
		c := job.Spec.Template.Spec.Containers[0]
		if got := c.Args[len(c.Args)-1]; got != tc.path {
			t.Errorf("%+v: script path %q, want %q", tc.script, got, tc.path)
		}
		if slices.Contains(c.Args, "--config") {
			t.Errorf("no load block: --config must not be passed")
		}
		if tc.volume != nil && !slices.ContainsFunc(job.Spec.Template.Spec.Volumes, tc.volume) {
			t.Errorf("%+v: script volume missing: %+v", tc.script, job.Spec.Template.Spec.Volumes)
		}
	}
}

func TestJobPlacementAddsToTheUsers(t *testing.T) {
	userTerm := corev1.WeightedPodAffinityTerm{Weight: 7, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "zone"}}
	tr := tw.MakeTestRun("p", "ns").Sysctl("net.ipv4.ip_local_port_range", "1024 65535").Obj()
	tr.Spec.Separate = true
	tr.Spec.Runner.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{userTerm}}}
	tr.Spec.Runner.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}

	pod := Job(tr, 0, 3, JobOptions{TargetNamespace: "fb-ns-p"}).Spec.Template.Spec
	terms := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 2 || terms[0].Weight != 7 || terms[1].PodAffinityTerm.Namespaces[0] != "fb-ns-p" {
		t.Errorf("anti-affinity = %+v, want the user's term and one keeping off the target", terms)
	}
	if len(pod.TopologySpreadConstraints) != 2 || pod.TopologySpreadConstraints[0].WhenUnsatisfiable != corev1.ScheduleAnyway {
		t.Errorf("spread = %+v, want ours (best effort) plus the user's", pod.TopologySpreadConstraints)
	}
	// The API server allows one constraint per topologyKey and whenUnsatisfiable: the user's wins.
	tr.Spec.Runner.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 3, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway}}
	if got := Job(tr, 0, 3, JobOptions{}).Spec.Template.Spec.TopologySpreadConstraints; len(got) != 1 || got[0].MaxSkew != 3 {
		t.Errorf("spread = %+v, want only the user's constraint on fleetbench's pair", got)
	}
	required := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(required) != 1 || required[0].TopologyKey != corev1.LabelHostname || required[0].LabelSelector.MatchLabels[naming.LabelTestRun] != "p" {
		t.Errorf("separate: required anti-affinity = %+v, want no two runners of the run on one node", required)
	}
	if len(pod.SecurityContext.Sysctls) != 1 || pod.SecurityContext.Sysctls[0].Value != "1024 65535" {
		t.Errorf("sysctls = %+v", pod.SecurityContext.Sysctls)
	}
	if tr.Spec.Runner.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight != 7 ||
		len(tr.Spec.Runner.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Error("building a Job changed the TestRun's own affinity")
	}
}

// TestRunnersKeepNoSamplesAndJudgeNoShare: every type of run keeps no per-sample state in k6
// and leaves the threshold verdict to the merged data.
func TestRunnersKeepNoSamplesAndJudgeNoShare(t *testing.T) {
	for _, typ := range []v1alpha1.TestType{v1alpha1.TestTypeLoad, v1alpha1.TestTypeStability} {
		tr := tw.MakeTestRun("stab", "ns").Type(typ).Devices(1000, "200s").Duration("48h").Obj()
		args := Job(tr, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--no-thresholds") || !slices.Contains(args, "--summary-mode=disabled") {
			t.Errorf("a %s runner must keep no per-sample state in k6: %v", typ, args)
		}
	}
}

// Spec thresholds on sub-metrics tell the runners which tags to split series by.
func TestRunnersKeepTheTagsSpecThresholdsName(t *testing.T) {
	tr := tw.MakeTestRun("tags", "ns").Devices(10, "10s").Duration("1m").
		Threshold("http_req_duration{name:home,status:200}", "p(95)<500").
		Threshold("http_reqs{team:a}", "count>0").
		Threshold("http_req_failed", "rate<0.01").Obj()
	env := Job(tr, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Env
	var got string
	for _, e := range env {
		if e.Name == "K6_FLEETBENCH_TAGS" {
			got = e.Value
		}
	}
	if got != "name,status,team" {
		t.Errorf("K6_FLEETBENCH_TAGS = %q, want name,status,team", got)
	}
}

// The sub-metrics spec.baseline.metrics names split series by their tags too, so a run
// keeps them for the comparison; built-ins and bare metric names add no tag.
func TestRunnersKeepTheTagsBaselineMetricsName(t *testing.T) {
	tr := tw.MakeTestRun("tags", "ns").Devices(10, "10s").Duration("1m").
		Threshold("http_req_duration{status:200}", "p(95)<500").Obj()
	tr.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "prev", Metrics: []v1alpha1.ComparedMetric{
		{Name: "http_req_duration{name:push}"}, {Name: "my_trend{ region : \"eu\", status:500}"},
		{Name: "throughput"}, {Name: "my_counter"}}}
	env := Job(tr, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Env
	var got string
	for _, e := range env {
		if e.Name == "K6_FLEETBENCH_TAGS" {
			got = e.Value
		}
	}
	if got != "name,region,status" {
		t.Errorf("K6_FLEETBENCH_TAGS = %q, want name,region,status", got)
	}
}

func TestRunnersWaitUntilTheyReachTheTarget(t *testing.T) {
	tr := tw.MakeTestRun("stab", "team").Obj()
	env := []corev1.EnvVar{
		{Name: "TARGET_WEB_URL", Value: "https://web.ns.svc:443"}, {Name: "TARGET_WEB_HOST", Value: "web.ns.svc"}, {Name: "TARGET_WEB_PORT", Value: "443"},
		{Name: "TARGET_APP_DB_URL", Value: "postgres://app-db.ns.svc:5432"}, {Name: "TARGET_APP_DB_HOST", Value: "app-db.ns.svc"}, {Name: "TARGET_APP_DB_PORT", Value: "5432"},
	}
	reachEnv := func(job *batchv1.Job) (addrs, timeout string) {
		spec := job.Spec.Template.Spec
		if len(spec.InitContainers) != 0 {
			t.Errorf("init containers %+v: the runner waits in k6's own container", spec.InitContainers)
		}
		for _, e := range spec.Containers[0].Env {
			switch e.Name {
			case measure.ReachEnv:
				addrs = e.Value
			case measure.ReachTimeoutEnv:
				timeout = e.Value
			}
		}
		return addrs, timeout
	}
	addrs, timeout := reachEnv(Job(tr, 0, 1, JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "c", TargetEnv: env}))
	if addrs != "web.ns.svc:443,app-db.ns.svc:5432" || timeout != "1m0s" {
		t.Errorf("%s=%q %s=%q, want every component's address within 1m0s", measure.ReachEnv, addrs, measure.ReachTimeoutEnv, timeout)
	}
	// Created while the target starts, a runner waits for it as long as provisioning may take.
	_, timeout = reachEnv(Job(tr, 0, 1, JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "c", TargetEnv: env, TargetStarting: 9*time.Minute + 58400*time.Millisecond}))
	if timeout != "10m58s" {
		t.Errorf("%s=%s while the target has 9m58.4s left to start, want 10m58s", measure.ReachTimeoutEnv, timeout)
	}

	// An external target is only a URL: nothing to wait for.
	external := Job(tr, 0, 1, JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "c",
		TargetEnv: []corev1.EnvVar{{Name: "TARGET_URL", Value: "http://api.example.svc:8080"}}})
	if addrs, _ := reachEnv(external); addrs != "" {
		t.Errorf("external target: %s=%q, want nothing to wait for", measure.ReachEnv, addrs)
	}
}

// With several runners setup() and teardown() are the operator's, once for the fleet, and
// runner 0 lingers for teardown(); one runner runs both itself, as plain k6 does.
func TestSetupAndTeardownOnceForTheFleet(t *testing.T) {
	tr := tw.MakeTestRun("fleet", "ns").Devices(30, "10s").Duration("1m").Obj()
	for _, tc := range []struct {
		i, n         int
		noSetup, lin bool
	}{{0, 1, false, false}, {0, 3, true, true}, {2, 3, true, false}} {
		args := strings.Join(Job(tr, tc.i, tc.n, JobOptions{}).Spec.Template.Spec.Containers[0].Args, " ")
		if strings.Contains(args, "--no-setup --no-teardown") != tc.noSetup || strings.Contains(args, "--linger") != tc.lin {
			t.Errorf("runner %d of %d: args %q", tc.i, tc.n, args)
		}
	}
}

// spec.outputs become k6's own --out flags, configured through k6's environment, next to
// fleetbench's output, with every sample tagged by the run's testid.
func TestRunnersStreamToSpecOutputs(t *testing.T) {
	tr := tw.MakeTestRun("observed", "ns").Outputs(
		v1alpha1.OutputSpec{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: "http://prom:9090/api/v1/write", TrendStats: []string{"p(95)", "avg"}},
		v1alpha1.OutputSpec{Type: v1alpha1.OutputOpenTelemetry, URL: "otel:4317", Insecure: true},
	).Obj()
	tr.UID = "0123456789abcdef"
	c := Job(tr, 0, 2, JobOptions{}).Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--out " + OutputName, "--tag testid=observed-01234567", "--out experimental-prometheus-rw", "--out opentelemetry"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	for k, v := range map[string]string{
		"K6_PROMETHEUS_RW_SERVER_URL": "http://prom:9090/api/v1/write", "K6_PROMETHEUS_RW_TREND_STATS": "p(95),avg",
		"K6_OTEL_EXPORTER_PROTOCOL": "grpc", "K6_OTEL_GRPC_EXPORTER_ENDPOINT": "otel:4317", "K6_OTEL_GRPC_EXPORTER_INSECURE": "true",
	} {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
	plain := Job(tw.MakeTestRun("plain", "ns").Obj(), 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Args
	if strings.Contains(strings.Join(plain, " "), "testid") {
		t.Errorf("a run without outputs is tagged: %v", plain)
	}
}

// Runners keep off the target's nodes: preferred by default, required on request; no rule when
// the target is external.
func TestRunnersAvoidTheTarget(t *testing.T) {
	for _, tc := range []struct {
		avoid               v1alpha1.AvoidTarget
		targetNS            string
		required, preferred int
	}{
		{"", "fb-ns-a", 0, 1},
		{v1alpha1.AvoidTargetPreferred, "fb-ns-a", 0, 1},
		{v1alpha1.AvoidTargetRequired, "fb-ns-a", 1, 0},
		{v1alpha1.AvoidTargetRequired, "", 0, 0},
	} {
		tr := tw.MakeTestRun("a", "ns").Obj()
		tr.Spec.Runner = &v1alpha1.RunnerSpec{AvoidTarget: tc.avoid}
		aff := Job(tr, 0, 2, JobOptions{TargetNamespace: tc.targetNS, TargetNodes: []string{"node-1"}}).Spec.Template.Spec.Affinity
		var required, preferred int
		var preferredNodes []corev1.PreferredSchedulingTerm
		if aff.NodeAffinity != nil {
			preferredNodes = aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if wantNodeTerm := tc.preferred > 0; (len(preferredNodes) == 1) != wantNodeTerm ||
			wantNodeTerm && preferredNodes[0].Preference.MatchExpressions[0].Operator != corev1.NodeSelectorOpNotIn {
			t.Errorf("avoidTarget %q: node affinity %+v; want a preferred NotIn the target's node exactly when avoiding it preferably", tc.avoid, preferredNodes)
		}
		if anti := aff.PodAntiAffinity; anti != nil {
			required, preferred = len(anti.RequiredDuringSchedulingIgnoredDuringExecution), len(anti.PreferredDuringSchedulingIgnoredDuringExecution)
			for _, term := range anti.RequiredDuringSchedulingIgnoredDuringExecution {
				if term.Namespaces[0] != tc.targetNS || term.LabelSelector.MatchLabels[naming.LabelRole] != naming.RoleTarget ||
					term.LabelSelector.MatchLabels[naming.LabelTestRunNS] != tr.Namespace {
					t.Errorf("%q: required term %+v is not the target's", tc.avoid, term)
				}
			}
		}
		if required != tc.required || preferred != tc.preferred {
			t.Errorf("avoidTarget %q, target namespace %q: %d required, %d preferred terms; want %d, %d",
				tc.avoid, tc.targetNS, required, preferred, tc.required, tc.preferred)
		}
	}
}

// Runners never call k6's vendor from the user's cluster unless the user's env says so (it
// comes later, so it wins).
func TestRunnersSendNoUsageReport(t *testing.T) {
	env := Job(tw.MakeTestRun("quiet", "ns").Obj(), 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Env
	if !slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == "K6_NO_USAGE_REPORT" && e.Value == "true" }) {
		t.Errorf("env %v lacks K6_NO_USAGE_REPORT=true", env)
	}
}

// spec.args reach k6 element by element, a value with a space as one argument; spec.arguments
// is split at spaces, as before; the pre-flight sees the same -e variables either way.
func TestUserArgsReachK6AsArgv(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   *v1alpha1.TestRun
		want []string
	}{
		{"args", tw.MakeTestRun("a", "ns").Args("--tag", "team=a b", "-e", "MODE=x y").Obj(), []string{"--tag", "team=a b", "-e", "MODE=x y"}},
		{"arguments", tw.MakeTestRun("a", "ns").Arguments("--tag team=a  -e MODE=x").Obj(), []string{"--tag", "team=a", "-e", "MODE=x"}},
	} {
		args := Job(tc.tr, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0].Args
		script := args[len(args)-1]
		if got := args[len(args)-1-len(tc.want) : len(args)-1]; !slices.Equal(got, tc.want) {
			t.Errorf("%s: k6 args end %q before the script %s, want %q", tc.name, got, script, tc.want)
		}
		pre := PreflightJob(tc.tr, JobOptions{}).Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(pre, tc.want[len(tc.want)-1]) {
			t.Errorf("%s: pre-flight args %q lack the -e variable %q", tc.name, pre, tc.want[len(tc.want)-1])
		}
	}
}

// The pod-template knobs users bring from k6-operator and plain pods reach the runner pod.
func TestRunnerPodTemplateParity(t *testing.T) {
	tr := tw.MakeTestRun("p", "ns").Obj()
	sc := &v1alpha1.RunnerSecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(false)}
	tr.Spec.Runner = &v1alpha1.RunnerSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry-cred"}},
		EnvFrom:          []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-token"}}}},
		Volumes:          []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ca"}}}},
		VolumeMounts:     []corev1.VolumeMount{{Name: "certs", MountPath: "/etc/certs", ReadOnly: true}},
		SecurityContext:  sc,
	}
	pod := Job(tr, 0, 1, JobOptions{ConfigMap: "c"}).Spec.Template.Spec
	c := pod.Containers[0]
	if len(pod.ImagePullSecrets) != 1 || pod.ImagePullSecrets[0].Name != "registry-cred" {
		t.Errorf("imagePullSecrets %v", pod.ImagePullSecrets)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "api-token" {
		t.Errorf("envFrom %v", c.EnvFrom)
	}
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "certs" }) ||
		!slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "config" }) {
		t.Errorf("volumes %v: want the user's beside fleetbench's", pod.Volumes)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "certs" && m.MountPath == "/etc/certs" }) {
		t.Errorf("volumeMounts %v", c.VolumeMounts)
	}
	if got := c.SecurityContext; !ptr.Deref(got.RunAsNonRoot, false) || ptr.Deref(got.ReadOnlyRootFilesystem, true) {
		t.Errorf("securityContext %+v, want the user's keys", got)
	}
}
