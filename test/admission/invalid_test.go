package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

const ns = "default"

type invalidCase struct {
	name string
	obj  client.Object
	// edit changes the object as JSON, for values the Go types cannot hold (a bad quantity,
	// a zero that omitempty would drop).
	edit func(u map[string]any)
	// want are substrings the refusal must contain: the field's path and the fix.
	want []string
}

func component(name string, kind v1alpha1.ComponentKind) v1alpha1.Component {
	return v1alpha1.Component{Name: name, Kind: kind}
}

func set(path []string, value any) func(map[string]any) {
	return func(u map[string]any) {
		if err := unstructured.SetNestedField(u, value, path...); err != nil {
			panic(err)
		}
	}
}

func invalidCases() []invalidCase {
	run := func() *tw.TestRunWrapper { return tw.MakeTestRun("bad", ns) }
	custom := component("app", v1alpha1.ComponentCustom)
	custom.Image = "fleet-sut:dev"
	share := func(c v1alpha1.Component, p int32) v1alpha1.Component { c.Share = ptr.To(p); return c }
	stopRule := v1alpha1.PeakStopRules{DroppedPercentAbove: ptr.To(v1alpha1.Percent(1))}
	template := tw.MakeTestRun("tpl", ns).Type(v1alpha1.TestTypeBenchmark).Devices(100, "60s").Iterations(5).Obj()

	return []invalidCase{
		// --- runners and script
		{name: "parallelism zero", obj: run().Obj(), edit: set([]string{"spec", "parallelism"}, int64(0)),
			want: []string{"spec.parallelism", "a number from 1 to 5000, or auto"}},
		{name: "parallelism above 5000", obj: run().Parallelism(5001).Obj(),
			want: []string{"spec.parallelism", "a number from 1 to 5000, or auto"}},
		{name: "runnerLoss knobs without replacement", obj: func() client.Object {
			o := run().Parallelism(2).Duration("1m").Obj()
			o.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{MaxGaps: ptr.To[int32](0)}
			return o
		}(), want: []string{"spec.runnerLoss.maxReplacements and maxGaps apply only when lost runners are replaced"}},
		{name: "runnerLoss Replace without a time-bounded load", obj: func() client.Object {
			o := run().Parallelism(2).Obj()
			o.Spec.RunnerLoss = &v1alpha1.RunnerLossSpec{Policy: v1alpha1.RunnerLossReplace}
			return o
		}(), want: []string{"spec.runnerLoss.policy Replace needs a load bounded by time"}},
		{name: "no script source", obj: run().Script(v1alpha1.ScriptSpec{}).Obj(),
			want: []string{"spec.script", "exactly one of inline, configMap, volumeClaim or localFile"}},
		{name: "two script sources", obj: run().Script(v1alpha1.ScriptSpec{Inline: tw.DefaultScript, LocalFile: "/test.js"}).Obj(),
			want: []string{"spec.script", "exactly one of inline, configMap, volumeClaim or localFile"}},
		{name: "configMap script without name", obj: run().Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{File: "x.js"}}).Obj(),
			want: []string{"spec.script.configMap.name", "at least 1 chars long"}},
		{name: "relative localFile", obj: run().Script(v1alpha1.ScriptSpec{LocalFile: "scripts/test.js"}).Obj(),
			want: []string{"spec.script.localFile", "absolute path inside the runner image"}},
		{name: "volumeClaim file escapes volume", obj: run().Script(v1alpha1.ScriptSpec{VolumeClaim: &v1alpha1.VolumeClaimScript{Name: "scripts", File: "../etc/passwd"}}).Obj(),
			want: []string{"spec.script.volumeClaim.file", "relative to the volume's root"}},
		{name: "arguments set execution segment", obj: run().Arguments("--tag a=b --execution-segment 0:1/2").Obj(),
			want: []string{"spec.arguments", "must not set --execution-segment"}},
		{name: "arguments set output", obj: run().Arguments("--out json=/tmp/x.json").Obj(),
			want: []string{"spec.arguments", "spec.outputs"}},
		{name: "arguments set output with =", obj: run().Arguments("--tag a=b --out=csv=/tmp/x.csv").Obj(),
			want: []string{"spec.arguments", "spec.outputs"}},
		{name: "arguments set output short", obj: run().Arguments("-o json=/tmp/x.json").Obj(),
			want: []string{"spec.arguments", "must not set --out, -o", "spec.outputs"}},
		{name: "arguments set output short glued", obj: run().Arguments("--tag a=b -ojson=/tmp/x.json").Obj(),
			want: []string{"spec.arguments", "spec.outputs"}},
		{name: "arguments with a quoted value", obj: run().Arguments(`--tag "team=a b"`).Obj(),
			want: []string{"spec.arguments", "must not contain quotes", "spec.args"}},
		{name: "arguments with a single-quoted value", obj: run().Arguments(`--tag 'team=a b'`).Obj(),
			want: []string{"spec.arguments", "must not contain quotes"}},
		{name: "args and arguments", obj: run().Arguments("--tag a=b").Args("--tag", "c=d").Obj(),
			want: []string{"spec.args or spec.arguments, not both"}},
		{name: "args set output", obj: run().Args("--tag", "a=b", "--out", "json=/tmp/x.json").Obj(),
			want: []string{"spec.args", "spec.outputs"}},
		{name: "args set output short glued", obj: run().Args("-ojson=/tmp/x.json").Obj(),
			want: []string{"spec.args", "must not set --out, -o"}},
		{name: "args set the REST address", obj: run().Args("--address=0.0.0.0:1").Obj(),
			want: []string{"spec.args", "--address"}},
		{name: "runner volume named like fleetbench's", obj: run().Runner(&v1alpha1.RunnerSpec{
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}).Obj(),
			want: []string{"spec.runner.volumes", "config, script and tmp are fleetbench's own"}},
		{name: "runner mount over fleetbench's script", obj: run().Runner(&v1alpha1.RunnerSpec{
			Volumes:      []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/fleetbench/script"}}}).Obj(),
			want: []string{"spec.runner.volumeMounts", "must not use /fleetbench"}},
		{name: "args set paused", obj: run().Args("--paused").Obj(),
			want: []string{"spec.args", "must not set --execution-segment, --execution-segment-sequence or --paused"}},
		// -p is k6's --paused, also grouped after boolean flags.
		{name: "args set paused by its short flag", obj: run().Args("-qp").Obj(),
			want: []string{"spec.args", "--paused (-p)"}},
		{name: "arguments set paused by its short flag", obj: run().Arguments("--vus 10 -p").Obj(),
			want: []string{"spec.arguments", "--paused (-p)"}},
		{name: "arguments set address short", obj: run().Arguments("-a 0.0.0.0:7000").Obj(),
			want: []string{"spec.arguments", "-a", "spec.outputs"}},
		{name: "arguments set address with =", obj: run().Arguments("--address=0.0.0.0:7000").Obj(),
			want: []string{"spec.arguments", "--address", "spec.outputs"}},
		// Grouped short flags: k6 reads -qo as -q -o, so o or a after boolean flags is still -o or -a.
		{name: "arguments set output in a short group", obj: run().Arguments("-qo json=/tmp/x.json").Obj(),
			want: []string{"spec.arguments", "grouped with other short flags", "spec.outputs"}},
		{name: "arguments set output in a short group later", obj: run().Arguments("--tag a=b -vo json=x").Obj(),
			want: []string{"spec.arguments", "grouped with other short flags", "spec.outputs"}},
		{name: "arguments set output in a glued short group", obj: run().Arguments("-qvojson=/tmp/x.json").Obj(),
			want: []string{"spec.arguments", "spec.outputs"}},
		{name: "arguments set address in a short group", obj: run().Arguments("-la 0.0.0.0:7000").Obj(),
			want: []string{"spec.arguments", "-a", "spec.outputs"}},
		{name: "args set output in a short group", obj: run().Args("-qo", "json=/tmp/x.json").Obj(),
			want: []string{"spec.args", "grouped with other short flags", "spec.outputs"}},
		{name: "args set address in a glued short group", obj: run().Args("-wva0.0.0.0:7000").Obj(),
			want: []string{"spec.args", "--address or -a", "spec.outputs"}},
		// k6 run flags fleetbench cannot honour across a fleet are refused naming why (docs/k6-flags.md).
		{name: "args export the summary", obj: run().Args("--summary-export", "/tmp/summary.json").Obj(),
			want: []string{"spec.args", "--summary-export", "results ConfigMap", "kubectl fleetbench report"}},
		{name: "arguments export the summary with =", obj: run().Arguments("--vus 2 --summary-export=/tmp/s.json").Obj(),
			want: []string{"spec.arguments", "--summary-mode=disabled"}},
		{name: "args set the summary mode", obj: run().Args("--summary-mode=full").Obj(), want: []string{"spec.args", "--summary-mode"}},
		{name: "args turn thresholds off", obj: run().Args("--no-thresholds").Obj(), want: []string{"spec.args", "judges the script's thresholds"}},
		{name: "args linger", obj: run().Args("-ql").Obj(), want: []string{"spec.args", "--linger (-l)"}},
		{name: "arguments ask for help", obj: run().Arguments("--help").Obj(), want: []string{"spec.arguments", "--help runs no test"}},
		{name: "args limit rps on a fleet", obj: run().Parallelism(3).Args("--rps", "100").Obj(),
			want: []string{"--rps limits each k6 process", "constant-arrival-rate"}},
		{name: "arguments limit rps on a fleet", obj: run().Parallelism(2).Arguments("--rps=100").Obj(),
			want: []string{"--rps limits each k6 process"}},
		{name: "args replace spec.load's config", obj: run().Devices(100, "10s").Args("--config", "/data/k6.json").Obj(),
			want: []string{"spec.load gives the runners fleetbench's k6 config"}},
		{name: "two outputs of one type", obj: run().Outputs(
			v1alpha1.OutputSpec{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: "http://a:9090/api/v1/write"},
			v1alpha1.OutputSpec{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: "http://b:9090/api/v1/write"}).Obj(),
			want: []string{"spec.outputs", "at most one output of each type"}},
		{name: "output protocol on remote write", obj: run().Outputs(
			v1alpha1.OutputSpec{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: "http://a:9090/api/v1/write", Protocol: "http"}).Obj(),
			want: []string{"spec.outputs[0]", "protocol is only for type openTelemetry"}},
		{name: "output trend stat unknown", obj: run().Outputs(
			v1alpha1.OutputSpec{Type: v1alpha1.OutputPrometheusRemoteWrite, URL: "http://a:9090/api/v1/write", TrendStats: []string{"p95"}}).Obj(),
			want: []string{"spec.outputs[0].trendStats[0]", "should match"}},
		{name: "output without url", obj: run().Outputs(v1alpha1.OutputSpec{Type: v1alpha1.OutputOpenTelemetry}).Obj(),
			want: []string{"spec.outputs[0].url"}},
		{name: "separate above its bound", obj: run().Parallelism(101).Separate().Obj(),
			want: []string{"spec", "spec.separate puts every runner on its own node: at most 100 runners"}},
		{name: "avoidTarget unknown", obj: run().Obj(), edit: set([]string{"spec", "runner", "avoidTarget"}, "always"),
			want: []string{"spec.runner.avoidTarget", "preferred", "required"}},
		{name: "ttl negative", obj: run().TTL(-1).Obj(),
			want: []string{"spec.ttlSecondsAfterFinished", "greater than or equal to 0"}},

		// --- load model and durations
		{name: "devices without period", obj: run().Load(&v1alpha1.LoadSpec{Devices: ptr.To[int32](1000)}).Obj(),
			want: []string{"spec.load", "spec.load.devices and spec.load.period go together"}},
		{name: "period without unit", obj: run().Devices(1000, "200").Duration("1h").Obj(),
			want: []string{"spec.load.period", "positive duration such as 250ms, 30s"}},
		{name: "zero duration", obj: run().Duration("0s").Obj(),
			want: []string{"spec.load.duration", "positive duration"}},
		{name: "duration in words", obj: run().Duration("2 hours").Obj(),
			want: []string{"spec.load.duration", "positive duration"}},
		{name: "iterations and duration", obj: run().Devices(10, "1s").Iterations(3).Duration("1m").Obj(),
			want: []string{"spec.load", "either spec.load.iterations or spec.load.duration"}},
		{name: "devices without a bound", obj: run().Devices(1000, "200s").Obj(),
			want: []string{"spec", "spec.load with devices needs duration or iterations"}},
		{name: "devices zero", obj: run().Devices(0, "1s").Duration("1m").Obj(),
			want: []string{"spec.load.devices", "greater than or equal to 1"}},

		{name: "thresholdsOnNoData unknown", obj: run().Obj(), edit: set([]string{"spec", "thresholdsOnNoData"}, "Ignore"),
			want: []string{"spec.thresholdsOnNoData", `supported values: "Pass", "Fail"`}},

		// --- test types and their knobs
		{name: "unknown type", obj: run().Type("soak").Obj(),
			want: []string{"spec.type", "Unsupported value: \"soak\""}},
		{name: "stability without duration", obj: run().Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Obj(),
			want: []string{"spec", "spec.load.duration is required when spec.type is stability"}},
		{name: "stability bounded by iterations", obj: run().Type(v1alpha1.TestTypeStability).Load(&v1alpha1.LoadSpec{Devices: ptr.To[int32](10), Period: "1s", Duration: "1h", Iterations: ptr.To[int32](3)}).Obj(),
			want: []string{"spec.load.iterations cannot be used when spec.type is stability"}},
		{name: "benchmark without iterations", obj: run().Type(v1alpha1.TestTypeBenchmark).Devices(1200, "200s").Duration("10m").Obj(),
			want: []string{"spec", "spec.load.devices and spec.load.iterations are required when spec.type is benchmark"}},
		{name: "peak without peak block", obj: run().Type(v1alpha1.TestTypePeak).Devices(5000, "60s").Obj(),
			want: []string{"spec", "spec.peak is required when spec.type is peak"}},
		{name: "peak block on a load test", obj: run().Devices(10, "1s").Duration("1m").Peak(&v1alpha1.PeakSpec{StepDevices: 10, StepDuration: "1m", StopWhen: stopRule}).Obj(),
			want: []string{"spec", "spec.peak is required when spec.type is peak, and only allowed then"}},
		{name: "peak without stop rule", obj: run().Type(v1alpha1.TestTypePeak).Devices(5000, "60s").Peak(&v1alpha1.PeakSpec{StepDevices: 10, StepDuration: "1m"}).Obj(),
			want: []string{"spec.peak", "spec.peak.stopWhen needs at least one rule"}},
		{name: "peak max below start", obj: run().Type(v1alpha1.TestTypePeak).Devices(5000, "60s").Peak(&v1alpha1.PeakSpec{StepDevices: 10, StepDuration: "1m", MaxDevices: ptr.To[int32](4000), StopWhen: stopRule}).Obj(),
			want: []string{"spec.peak.maxDevices must be greater than spec.load.devices"}},
		{name: "stability block on a load test", obj: run().Stability(&v1alpha1.StabilitySpec{MaxMemoryGrowthPercent: ptr.To[int32](50)}).Obj(),
			want: []string{"spec", "spec.stability is only allowed when spec.type is stability"}},
		{name: "log pattern not a regular expression", obj: run().Type(v1alpha1.TestTypeStability).Duration("1h").Stability(&v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{{Name: "warning", Regex: "(?i)warn("}}}).Obj(),
			want: []string{"spec.stability.logPatterns[0].regex", "error parsing regexp"}},
		{name: "benchmark block on a load test", obj: run().Benchmark(&v1alpha1.BenchmarkSpec{Repetitions: 2}).Obj(),
			want: []string{"spec", "spec.benchmark is only allowed when spec.type is benchmark"}},

		// --- thresholds in k6's grammar
		{name: "threshold without parentheses", obj: run().Threshold("http_req_duration", "p95<200").Obj(),
			want: []string{"spec.thresholds[http_req_duration][0]", "must be a k6 threshold expression"}},
		{name: "threshold with doubled operator", obj: run().Threshold("http_req_failed", "rate<<0.01").Obj(),
			want: []string{"spec.thresholds[http_req_failed][0]", "must be a k6 threshold expression"}},
		{name: "threshold with unknown aggregation", obj: run().Threshold("http_req_duration", "p(95)<200", "mean<100").Obj(),
			want: []string{"spec.thresholds[http_req_duration][1]", "aggregation (avg, min, max, med, count, rate, value or p(N) with N from 0 to 100)"}},
		{name: "threshold metric name with space", obj: run().Threshold("http req", "rate<0.01").Obj(),
			want: []string{"spec.thresholds", "keys must be k6 metric names"}},
		{name: "threshold without expressions", obj: run().Obj(), edit: set([]string{"spec", "thresholds", "checks"}, []any{}),
			want: []string{"spec.thresholds", "need at least one expression"}},

		// --- target
		{name: "components and external", obj: run().Obj(), edit: set([]string{"spec", "target", "external"}, map[string]any{"url": "http://x:80"}),
			want: []string{"spec.target", "exactly one of components"}},
		{name: "no target", obj: run().Components().Obj(),
			want: []string{"spec.target", "exactly one of components"}},
		{name: "duplicate component names", obj: run().Components(component("web", v1alpha1.ComponentWebServer), component("web", v1alpha1.ComponentDatabase)).Obj(),
			want: []string{"spec.target", "components names must be unique"}},
		{name: "custom component without image", obj: run().Components(component("app", v1alpha1.ComponentCustom)).Obj(),
			want: []string{"spec.target.components[0]", "a component of kind custom needs an image"}},
		{name: "engine of another kind", obj: run().Components(v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Engine: "mariadb"}).Obj(),
			want: []string{"spec.target.components[0]", "engine must fit kind: webServer takes nginx or apache"}},
		{name: "root component under restricted", obj: run().Components(func() v1alpha1.Component { c := custom; c.RunAsUser = ptr.To[int64](0); return c }()).Obj(),
			want: []string{"spec.target", "runAsUser 0 runs as root", "spec.target.podSecurity: baseline"}},
		{name: "unknown pod security level", obj: run().Obj(), edit: set([]string{"spec", "target", "podSecurity"}, "privileged"),
			want: []string{"spec.target.podSecurity", `supported values: "restricted", "baseline"`}},
		{name: "component name not a DNS label", obj: run().Components(component("Web_1", v1alpha1.ComponentWebServer)).Obj(),
			want: []string{"spec.target.components[0].name", "must be a DNS label"}},
		{name: "perComponent without shares", obj: run().Sizing(v1alpha1.SizingPerComponent).Components(component("web", v1alpha1.ComponentWebServer), custom).Obj(),
			want: []string{"spec.target", "every component needs a share"}},
		{name: "shares above 100 percent", obj: run().Sizing(v1alpha1.SizingPerComponent).Components(share(component("web", v1alpha1.ComponentWebServer), 60), share(custom, 50)).Obj(),
			want: []string{"spec.target", "shares add up to more than 100 percent"}},
		{name: "database settings on a web server", obj: run().Components(v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Database: &v1alpha1.DatabaseSettings{InitSQL: "select 1"}}).Obj(),
			want: []string{"spec.target.components[0]", "database settings are only allowed on a component of kind database"}},
		{name: "external URL without scheme", obj: run().External("api.example.com/v1").Obj(),
			want: []string{"spec.target.external.url", "absolute URL with scheme"}},
		{name: "provisioned target without profile", obj: run().Profile("").Obj(),
			want: []string{"spec", "spec.profile is required when spec.target.components are provisioned"}},
		{name: "unknown cleanup policy", obj: run().Obj(), edit: set([]string{"spec", "cleanup", "target"}, "Never"),
			want: []string{"spec.cleanup.target", "Unsupported value: \"Never\""}},

		// --- Profiles
		{name: "profile cpu zero", obj: tw.MakeProfile("zero-cpu", "0", "1Gi").Obj(),
			want: []string{"spec", "spec.cpu must be a positive quantity"}},
		{name: "profile cpu not a quantity", obj: tw.MakeProfile("bad-cpu", "1", "1Gi").Obj(), edit: set([]string{"spec", "cpu"}, "two"),
			want: []string{"spec.cpu", "should match"}},
		{name: "profile memory too small", obj: tw.MakeProfile("tiny", "1", "16Mi").Obj(),
			want: []string{"spec", "spec.memory must be at least 32Mi"}},
		{name: "profile without memory", obj: &v1alpha1.Profile{
			TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Profile"}, ObjectMeta: metav1.ObjectMeta{Name: "no-mem"},
			Spec: v1alpha1.ProfileSpec{CPU: resource.MustParse("1")}}, edit: func(u map[string]any) { unstructured.RemoveNestedField(u, "spec", "memory") },
			want: []string{"spec.memory", "Required value"}},

		// --- dispatching (spec.managedBy)
		{name: "managedBy another controller", obj: run().Parallelism(2).Obj(), edit: set([]string{"spec", "managedBy"}, "example.com/other"),
			want: []string{"spec.managedBy", "kueue.x-k8s.io/multikueue"}},
		{name: "managedBy with parallelism auto", obj: run().Devices(100, "1s").Duration("1m").Obj(), edit: set([]string{"spec", "managedBy"}, v1alpha1.ManagedByMultiKueue),
			want: []string{"spec.managedBy", "needs a fixed runner count", "set spec.parallelism to a number"}},
		{name: "plan template dispatched", obj: tw.MakeCapacityPlan("tpl-dispatch", ns, template, "C1").Obj(),
			edit: set([]string{"spec", "template", "managedBy"}, v1alpha1.ManagedByMultiKueue),
			want: []string{"spec.template.managedBy is not implemented yet for a CapacityPlan"}},
		{name: "plan template zoned", obj: tw.MakeCapacityPlan("tpl-zones", ns, template, "C1").Obj(),
			edit: set([]string{"spec", "template", "zones"}, []any{map[string]any{"name": "home", "runners": int64(1)}, map[string]any{"name": "c2", "cluster": "cluster-2", "runners": int64(1)}}),
			want: []string{"spec.template.zones is not implemented yet for a CapacityPlan"}},
		// --- CapacityPlans
		{name: "plan without profiles", obj: tw.MakeCapacityPlan("no-profiles", ns, template).Obj(),
			want: []string{"spec.profiles", "Required value"}},
		{name: "plan with template profile", obj: tw.MakeCapacityPlan("tpl-profile", ns, template, "C1").TemplateProfile("C2").Obj(),
			want: []string{"spec", "spec.template.profile must be empty"}},
		{name: "plan sweeps an unknown component", obj: tw.MakeCapacityPlan("sweep-unknown", ns, template, "C1").Sweep("app", "WORKERS", "1", "2").Obj(),
			want: []string{"spec", "spec.sweep[].component must name a component"}},
		{name: "plan lists a profile twice", obj: tw.MakeCapacityPlan("dup", ns, template, "C1", "C1").Obj(),
			want: []string{"spec.profiles[1]", "Duplicate value"}},
		{name: "plan lists a profile twice in other case", obj: tw.MakeCapacityPlan("dup-case", ns, template, "C1", "c1").Obj(),
			want: []string{"spec.profiles", "lists a profile twice"}},
		{name: "profile name not a Kubernetes name", obj: run().Profile("C 1").Obj(),
			want: []string{"spec.profile", "must be the name of a Profile"}},
		{name: "plan sweep env not a variable name", obj: tw.MakeCapacityPlan("bad-env", ns, template, "C1").Sweep("web", "WORKER COUNT", "1").Obj(),
			want: []string{"spec.sweep[0].env", "must be an environment variable name"}},
		{name: "peak climb over 200 steps", obj: run().Type(v1alpha1.TestTypePeak).Devices(10, "10s").
			Peak(&v1alpha1.PeakSpec{StepDevices: 1, StepDuration: "10s", MaxDevices: ptr.To[int32](1000),
				StopWhen: v1alpha1.PeakStopRules{P95Above: "1s"}}).Obj(),
			want: []string{"spec.peak", "more than 200 steps", "raise stepDevices"}},
		{name: "benchmark repetitions in one TestRun", obj: run().Type(v1alpha1.TestTypeBenchmark).Devices(10, "10s").Iterations(5).
			Benchmark(&v1alpha1.BenchmarkSpec{Repetitions: 2}).Obj(),
			want: []string{"spec.benchmark.repetitions", "not implemented yet", "CapacityPlan", "spec.repetitions"}},
		{name: "plan over 256 cells", obj: tw.MakeCapacityPlan("huge", ns, template, "C1", "C2", "C3", "C4").
			SweepScriptEnv("THREADS", "1", "2", "4", "8", "16", "32", "64", "128").SweepField("parallelism", "1", "2", "4", "8", "16").Repetitions(2).Obj(), // 4 × 8 × 5 × 2 = 320
			want: []string{"spec", "more than 256 cells", "split it into several plans"}},
		{name: "plan sweep both component and script env", obj: tw.MakeCapacityPlan("both", ns, template, "C1").
			Sweep("web", "WORKERS", "1").Obj(), edit: set([]string{"spec", "sweep"}, []any{map[string]any{"component": "web", "env": "W", "scriptEnv": "T", "values": []any{"1"}}}),
			want: []string{"spec.sweep[0]", "set exactly one of env (with component), scriptEnv or field"}},
		{name: "plan sweep env without component", obj: tw.MakeCapacityPlan("half", ns, template, "C1").SweepScriptEnv("T", "1").Obj(),
			edit: set([]string{"spec", "sweep"}, []any{map[string]any{"env": "WORKERS", "values": []any{"1"}}}),
			want: []string{"spec.sweep[0]", "component and env go together"}},
		{name: "plan tls sweep without component", obj: tw.MakeCapacityPlan("tls", ns, template, "C1").SweepField("tls", "true", "false").Obj(),
			want: []string{"spec.sweep[0]", "field tls needs the component that serves it"}},
		{name: "plan tls sweep values", obj: tw.MakeCapacityPlan("tlsv", ns, tw.MakeTestRun("t", ns).Obj(), "C1").Sweep("web", "X", "on").Obj(),
			edit: set([]string{"spec", "sweep"}, []any{map[string]any{"component": "web", "field": "tls", "values": []any{"on", "off"}}}),
			want: []string{"spec.sweep[0]", `tls sweep are "true" and "false"`}},
		{name: "plan field sweep not a number", obj: tw.MakeCapacityPlan("nan", ns, template, "C1").SweepField("devices", "many").Obj(),
			want: []string{"spec.sweep[0]", "positive whole numbers"}},
		{name: "plan parallelism sweep too large", obj: tw.MakeCapacityPlan("wide", ns, template, "C1").SweepField("parallelism", "6000").Obj(),
			want: []string{"spec.sweep[0]", "parallelism is at most 5000"}},
		{name: "plan devices sweep without period", obj: tw.MakeCapacityPlan("noperiod", ns, tw.MakeTestRun("t", ns).Obj(), "C1").SweepField("devices", "100").Obj(),
			want: []string{"spec", "devices needs spec.template.load.period"}},
		{name: "plan maxParallel without Parallel", obj: tw.MakeCapacityPlan("maxpar", ns, template, "C1").Parallel(2).Obj(),
			edit: set([]string{"spec", "concurrency"}, "Serial"), want: []string{"spec", "maxParallel applies only with spec.concurrency: Parallel"}},
		{name: "plan Serial keeps targets", obj: tw.MakeCapacityPlan("keep", ns, tw.MakeTestRun("t", ns).Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj(), "C1").Obj(),
			want: []string{"spec", "KeepUntilDeleted keeps every child's target", "spec.concurrency: Parallel"}},
		{name: "plan keepFor without a kept target", obj: tw.MakeCapacityPlan("keepfor", ns, tw.MakeTestRun("t", ns).Cleanup(v1alpha1.TargetDeleteAfterRun).Obj(), "C1").Obj(),
			edit: set([]string{"spec", "template", "cleanup", "keepFor"}, "2h"),
			want: []string{"spec.template.cleanup", "keepFor applies to a kept target only: set spec.cleanup.target: KeepUntilDeleted"}},
		{name: "plan keepFor zero", obj: tw.MakeCapacityPlan("keep0", ns, tw.MakeTestRun("t", ns).Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj(), "C1").Parallel(2).Obj(),
			edit: set([]string{"spec", "template", "cleanup", "keepFor"}, "0s"), want: []string{"spec.template.cleanup.keepFor", "positive duration"}},
		{name: "plan children with a TTL", obj: tw.MakeCapacityPlan("ttl", ns, tw.MakeTestRun("t", ns).TTL(60).Obj(), "C1").Obj(),
			want: []string{"spec", "ttlSecondsAfterFinished must be empty", "delete the plan"}},
		{name: "plan unknown failure policy", obj: tw.MakeCapacityPlan("pol", ns, template, "C1").FailurePolicy("Retry").Obj(),
			want: []string{"spec.failurePolicy", "Unsupported value"}},
		{name: "plan template invalid itself", obj: tw.MakeCapacityPlan("bad-tpl", ns, tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypeStability).Obj(), "C1").Obj(),
			want: []string{"spec.template", "spec.load.duration is required when spec.type is stability"}},
	}
}

// TestInvalidObjectsAreRefused creates each bad object and expects a 422 whose message names
// the field and says what to write instead.
func TestInvalidObjectsAreRefused(t *testing.T) {
	cases := invalidCases()
	if len(cases) < 30 {
		t.Fatalf("the table must hold at least 30 cases, has %d", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.refused)
	}
	t.Logf("%d invalid objects refused", len(cases))
}

// refused creates the case's object and expects a 422 whose message holds every wanted phrase.
func (tc invalidCase) refused(t *testing.T) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.obj)
	if err != nil {
		t.Fatal(err)
	}
	if tc.edit != nil {
		tc.edit(raw)
	}
	u := &unstructured.Unstructured{Object: raw}
	err = env.Client.Create(context.Background(), u)
	if err == nil {
		_ = env.Client.Delete(context.Background(), u)
		t.Fatalf("accepted, want refusal naming %q", tc.want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid (422) refusal, got %v", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
	for _, w := range tc.want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal does not contain %q:\n%v", w, err)
		}
	}
}

// TestOrdinaryArgumentsAreAccepted: the short-flag rules refuse -o and -a however they are
// written, but nothing else: other flags, and values after a flag that takes one (k6 reads
// -eDATA=1 as -e with the value DATA=1).
func TestOrdinaryArgumentsAreAccepted(t *testing.T) {
	ctx := context.Background()
	for i, arguments := range []string{
		"--tag team=a", "-q", "-qv", "--vus 10", "--no-color", "--tag team=a -q --vus 10 --no-color",
		"--tag area=oa --no-setup --no-teardown", "-eDATA=abc", "--vus 3 --iterations 30 --compatibility-mode=base", "-e data=1 -u 10 -d 30s", "-s 10s:5 -i 100",
		"--insecure-skip-tls-verify --throw",
	} {
		run := tw.MakeTestRun(fmt.Sprintf("arguments-%d", i), ns).Arguments(arguments).Obj()
		if err := env.Client.Create(ctx, run); err != nil {
			t.Errorf("arguments %q refused: %v", arguments, err)
			continue
		}
		_ = env.Client.Delete(ctx, run)
	}
	for i, args := range [][]string{
		{"--tag", "team=a"}, {"-q"}, {"-qvw"}, {"--vus", "10"}, {"--no-color"}, {"--tag", "team=a b", "-q", "--vus", "10"},
		{"-edata=abc"}, {"-u", "10", "-d", "30s"}, {"--tag", "role=admin"}, {"--no-teardown"}, {"--rps", "50"},
		{"--include-system-env-vars=false", "--stage", "5s:2"},
	} {
		run := tw.MakeTestRun(fmt.Sprintf("args-%d", i), ns).Args(args...).Obj()
		if err := env.Client.Create(ctx, run); err != nil {
			t.Errorf("args %q refused: %v", args, err)
			continue
		}
		_ = env.Client.Delete(ctx, run)
	}
}

// TestTestRunSpecIsImmutable mirrors a Job's template: a change is a new TestRun.
func TestTestRunSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	run := tw.MakeTestRun("immutable", ns).Parallelism(2).Obj()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, run) })

	run.Spec.Parallelism = v1alpha1.FixedParallelism(3)
	err := env.Client.Update(ctx, run)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec is immutable") {
		t.Fatalf("want the update refused as immutable, got %v", err)
	}

	// Metadata and status stay writable: labels for GitOps tools, status for the operator.
	var fresh v1alpha1.TestRun
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Labels = map[string]string{"team": "fleet"}
	if err := env.Client.Update(ctx, &fresh); err != nil {
		t.Fatalf("label update refused: %v", err)
	}
	fresh.Status.Phase = v1alpha1.PhasePending
	if err := env.Client.Status().Update(ctx, &fresh); err != nil {
		t.Fatalf("status update refused: %v", err)
	}
}

// TestCapacityPlanSpecIsImmutable: children are named by their cell, so a changed plan would
// silently mix two plans' rows; a change is a new plan.
func TestCapacityPlanSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	plan := tw.MakeCapacityPlan("immutable-plan", ns, tw.MakeTestRun("t", ns).Obj(), "C1", "C2").Obj()
	if err := env.Client.Create(ctx, plan); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, plan) })
	if plan.Spec.Repetitions != 1 || plan.Spec.Concurrency != v1alpha1.ConcurrencySerial || plan.Spec.FailurePolicy != v1alpha1.FailureContinue {
		t.Errorf("defaults: repetitions %d concurrency %q failurePolicy %q", plan.Spec.Repetitions, plan.Spec.Concurrency, plan.Spec.FailurePolicy)
	}
	plan.Spec.Profiles = []string{"C1"}
	err := env.Client.Update(ctx, plan)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec is immutable") {
		t.Fatalf("want the update refused as immutable, got %v", err)
	}
}

// TestDefaultsAreApplied checks the defaults users rely on without writing them.
func TestDefaultsAreApplied(t *testing.T) {
	ctx := context.Background()
	run := tw.MakeTestRun("defaults", ns).Obj()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, run) })
	// parallelism has no stored default: unset is 1 without a device model, auto with one.
	if run.Spec.Type != v1alpha1.TestTypeLoad || run.Spec.Parallelism != nil || run.RunnerCount() != 1 || run.Spec.Target.Sizing != v1alpha1.SizingOneMachine {
		t.Fatalf("defaults not applied: type=%q parallelism=%v runners=%d sizing=%q", run.Spec.Type, run.Spec.Parallelism, run.RunnerCount(), run.Spec.Target.Sizing)
	}
}
