package admission

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure/targetstats"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// TestLogPatternCostIsCapped: a log pattern whose counted repetitions would compile into many
// copies (issue 36's .{1000}.{1000}B) is refused, naming the field and the fix; one within
// the count, a literal brace, and the patterns users write are admitted. The CRD carries
// targetstats.LargeRepeat verbatim, whose fuzz test checks it against RE2's parser.
func TestLogPatternCostIsCapped(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "fleetbench.dev_testruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(crd, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(celRules(doc), "!self.matches(r'"+targetstats.LargeRepeat+"')") {
		t.Fatal("the CRD's log pattern rule is not targetstats.LargeRepeat: update the marker on v1alpha1.LogPattern.Regex and run make manifests")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		regex string
		want  []string // none = admitted
	}{
		{".{1000}.{1000}B", []string{"spec.stability.logPatterns[0].regex", "may count to 100 at most", "use * or + instead"}},
		{"a{101}", []string{"spec.stability.logPatterns[0].regex", "may count to 100 at most"}},
		{"x{5,200}y", []string{"may count to 100 at most"}},
		{"(ab){1000,}", []string{"may count to 100 at most"}},
		{`\\{101}`, []string{"may count to 100 at most"}},
		{"a{100}", nil},
		{`\{1000}`, nil},
		{`[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}`, nil},
		{`(?i)\b(error|fatal|panic)\b`, nil},
		{strings.Repeat("a", 257), []string{"spec.stability.logPatterns[0].regex", "Too long"}},
	} {
		t.Run(textsafe.Cut(tc.regex, 40), func(t *testing.T) {
			run := tw.MakeTestRun("patterns", ns).Type(v1alpha1.TestTypeStability).Devices(10, "1s").Duration("1h").
				Stability(&v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{{Name: "p", Regex: tc.regex}}}).Obj()
			refused(t, env.Client.Create(ctx, run, client.DryRunAll), tc.want)
		})
	}
}

// TestSpecFieldsOfKubernetesTypesAreBounded: fields of Kubernetes' own types in a spec (bounded
// by hack/crdpatch) and fleetbench's label maps refuse a value beyond their bound, naming the
// field; at the bound they are admitted. The CRDs' CEL rules, re-estimated with these bounds,
// were accepted by this API server when the suite installed them.
func TestSpecFieldsOfKubernetesTypesAreBounded(t *testing.T) {
	ctx := context.Background()
	env1 := func(n int) client.Object {
		return tw.MakeTestRun("env", ns).RunnerEnv(corev1.EnvVar{Name: "TOKEN", Value: strings.Repeat("x", n)}).Obj()
	}
	labels := func(k, v string) client.Object {
		run := tw.MakeTestRun("labels", ns).Obj()
		run.Spec.Runner = &v1alpha1.RunnerSpec{Metadata: &v1alpha1.PodMetadata{Labels: map[string]string{k: v}}}
		return run
	}
	annotation := func(n int) client.Object {
		run := tw.MakeTestRun("annotations", ns).Obj()
		run.Spec.Runner = &v1alpha1.RunnerSpec{Metadata: &v1alpha1.PodMetadata{Annotations: map[string]string{"a": strings.Repeat("x", n)}}}
		return run
	}
	items := func(n int) client.Object {
		keys := make([]corev1.KeyToPath, n)
		for i := range keys {
			keys[i] = corev1.KeyToPath{Key: "k", Path: "p"}
		}
		run := tw.MakeTestRun("items", ns).Obj()
		run.Spec.Runner = &v1alpha1.RunnerSpec{Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "data"}, Items: keys}}}}}
		return run
	}
	plan := func(n int) client.Object {
		template := tw.MakeTestRun("tpl", ns).Type(v1alpha1.TestTypeBenchmark).Devices(100, "60s").Iterations(5).
			RunnerEnv(corev1.EnvVar{Name: "TOKEN", Value: strings.Repeat("x", n)}).Obj()
		return tw.MakeCapacityPlan("plan", ns, template, "c1").Obj()
	}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string // none = admitted
	}{
		{"env value at 32 KiB", env1(32768), nil},
		{"env value above 32 KiB", env1(32769), []string{"spec.runner.env[0].value", "Too long"}},
		{"label value of 63", labels("team", strings.Repeat("a", 63)), nil},
		{"label value of 64", labels("team", strings.Repeat("a", 64)), []string{"spec.runner.metadata.labels", "value at most 63"}},
		{"label key of 318", labels(strings.Repeat("a", 318), "x"), []string{"spec.runner.metadata.labels", "at most 317 characters"}},
		{"annotation of 8 KiB", annotation(8192), nil},
		{"annotation above 8 KiB", annotation(8193), []string{"spec.runner.metadata.annotations", "put larger data in a ConfigMap"}},
		{"256 projected keys", items(256), nil},
		{"257 projected keys", items(257), []string{"spec.runner.volumes[0].configMap.items", "Too many"}},
		{"a plan's template env value above 32 KiB", plan(32769), []string{"spec.template.runner.env[0].value", "Too long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, env.Client.Create(ctx, tc.obj, client.DryRunAll), tc.want)
		})
	}
}

// refused checks a create's answer: admitted when want is empty, else an Invalid refusal
// holding every piece of want.
func refused(t *testing.T, err error, want []string) {
	t.Helper()
	switch {
	case len(want) == 0 && err != nil:
		t.Fatalf("refused: %v", err)
	case len(want) == 0:
	case err == nil:
		t.Fatalf("admitted, want a refusal naming %q", want)
	case !apierrors.IsInvalid(err):
		t.Fatalf("want an Invalid (422) refusal, got %v", err)
	default:
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("refusal does not contain %q:\n%v", w, err)
			}
		}
	}
}
