//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/plugin"
	"fleetbench.dev/fleetbench/pkg/k6convert"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// k6operatorManifests are k6-operator v1.6's own sample and e2e TestRuns, unchanged, each
// naming its source on its first line.
const k6operatorManifests = "../../internal/plugin/testdata/k6operator"

// convertRefusals: the manifests `kubectl fleetbench convert` refuses, and what its message names.
var convertRefusals = map[string]string{
	"privateloadzone.yaml":     "PrivateLoadZone/privateloadzone-sample",
	"testrun_with_output.yaml": "spec.script must be an object",
}

// TestConvertedK6OperatorManifests: every k6-operator v1.6 sample and e2e TestRun, converted by
// `kubectl fleetbench convert` and created as a GitOps tool would (field validation Ignore, so
// the API server drops unknown fields without a word), is stored exactly as converted, or is
// refused naming the field. Then a few of them run against this test's own nginx, each with a
// script of its own in the ConfigMap the manifest names, and behave as under k6-operator:
// parallelism is that many runner pods, the script's iterations are all served, --no-teardown,
// --tag, -e and $(VAR) in args reach k6, cleanup: post deletes the finished run, and arguments
// k6 refuses end the run before any load.
func TestConvertedK6OperatorManifests(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-k6op")
	target := e.canary(t, ns)
	targetURL := fmt.Sprintf("http://%s.%s.svc:80", target, ns)

	files, err := filepath.Glob(filepath.Join(k6operatorManifests, "*.yaml"))
	if err != nil || len(files) < 35 {
		t.Fatalf("%d manifests in %s (%v), want 35", len(files), k6operatorManifests, err)
	}
	converted := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		name := filepath.Base(f)
		e.applyUnconverted(t, f, ns, targetURL)
		run, notes, err := convertK6Operator(e.ctx, f, targetURL)
		if want, refused := convertRefusals[name]; refused {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: convert gave %v, want a refusal naming %q", name, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: convert: %v", name, err)
			continue
		}
		t.Logf("%s: %s", name, strings.ReplaceAll(strings.TrimSpace(notes), "\n", "; "))
		stored := run.DeepCopy()
		stored.SetNamespace(ns)
		err = e.c.Create(e.ctx, stored, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore))
		if err != nil {
			// A refusal must name the field it is about.
			if !strings.Contains(err.Error(), "spec.") {
				t.Errorf("%s: refused without naming a field: %v", name, err)
			}
			t.Logf("%s: refused: %v", name, err)
			continue
		}
		for _, path := range [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "annotations"}} {
			w, _, _ := unstructured.NestedFieldNoCopy(run.Object, path...)
			g, _, _ := unstructured.NestedFieldNoCopy(stored.Object, path...)
			if w == nil {
				continue
			}
			if d := k6convert.Dropped(w, g); len(d) > 0 {
				t.Errorf("%s: the API server did not store %s as converted: %q", name, strings.Join(path, "."), d)
			}
		}
		converted[name] = run
	}
	if t.Failed() {
		t.FailNow()
	}

	// The runs, one after another in the same namespace (the manifests share names), each
	// against the same nginx, whose request counter says what the runners really sent.
	for _, tc := range []k6operatorRun{
		{file: "basic-testrun-1.yaml", configMap: "test", scripts: map[string]string{"test.js": k6opScript(2, 10, true)},
			runners: 1, served: 1 + 10 + 1, iterations: 10},
		// arguments: --no-teardown --tag office=hours, runner.env BASE_URL: teardown() does not run.
		{file: "basic-testrun-4.yaml", configMap: "test", scripts: map[string]string{"test.js": k6opScript(4, 20, true,
			`'--tag office=hours': () => exec.test.options.tags.office === 'hours'`,
			`'runner.env BASE_URL': () => __ENV.BASE_URL === 'https://pizza.grafana.fun'`)},
			runners: 4, served: 1 + 20, iterations: 20, checks: 40},
		// args: --tag with spaces and quotes, -e with $$ and $(BASE_URL) from runner.env.
		{file: "testrun_with_args.yaml", configMap: "k6-test", scripts: map[string]string{"test.js": k6opScript(2, 10, false,
			`'--tag note': () => exec.test.options.tags.note === 'nightly run of "checkout" flow'`,
			`'-e PRICE_LABEL': () => __ENV.PRICE_LABEL === '$100 and up'`,
			`'-e BASE_URL=$(BASE_URL)': () => __ENV.BASE_URL === 'https://test.k6.io'`)},
			runners: 2, served: 10, iterations: 10, checks: 30},
		// A script that imports a second file of its ConfigMap, on 3 runners.
		{file: "multifile.yaml", configMap: "multifile", scripts: map[string]string{
			"test.js":  strings.Replace(k6opScript(3, 30, false), "export default function () {", "import { fun } from './utils.js';\nexport default function () {\n  fun();", 1),
			"utils.js": "export function fun() {}\n"},
			runners: 3, served: 30, iterations: 30},
		// cleanup: post became ttlSecondsAfterFinished: 0: the finished run is deleted.
		{file: "testrun-cleanup.yaml", configMap: "test", scripts: map[string]string{"test.js": k6opScript(1, 5, false)},
			served: 5, deleted: true},
		// k6 refuses the arguments: the run fails before any load, as k6-operator's error stage,
		// naming the field.
		{file: "invalid-arguments.yaml", configMap: "test", scripts: map[string]string{"test.js": k6opScript(1, 5, false)},
			failed: "spec.arguments"},
		// 1 VU on 5 runners: k6-operator's error stage. fleetbench runs it as 5 k6 processes would
		// and says that 4 runners had nothing to do and what avoids it.
		{file: "error-stage.yaml", configMap: "test", scripts: map[string]string{"test.js": k6opScript(1, 5, false)},
			runners: 5, served: 5, iterations: 5, warning: "would get 0 of its 1 VUs"},
	} {
		run := converted[tc.file]
		if run == nil {
			t.Fatalf("%s was not converted", tc.file)
		}
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) { e.runConverted(t, ns, target, run.DeepCopy(), tc) })
	}
}

// k6operatorRun is one converted manifest run with a script of the test's, and what it must do.
type k6operatorRun struct {
	file, configMap string
	scripts         map[string]string
	// runners is how many runner pods it must have; served how many requests nginx must serve.
	runners    int
	served     int64
	iterations int64
	// checks must all pass, this many.
	checks int64
	// deleted: the finished TestRun must be deleted (cleanup: post).
	deleted bool
	// failed: the run must fail before load, its message containing this.
	failed string
	// warning must be in status.results.warnings, naming the field that avoids it.
	warning string
}

func (e *env) runConverted(t *testing.T, ns, target string, run *unstructured.Unstructured, tc k6operatorRun) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tc.configMap, Namespace: ns}, Data: tc.scripts}
	_ = e.c.Delete(e.ctx, cm.DeepCopy())
	if err := e.c.Create(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	run.SetNamespace(ns)
	key := client.ObjectKey{Namespace: ns, Name: run.GetName()}
	typed := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}
	e.dumpOnFailure(t, key, naming.TargetNamespace(ns, key.Name))
	t.Cleanup(func() {
		_ = e.c.Delete(e.ctx, typed.DeepCopy())
		e.waitGone(t, typed.DeepCopy(), 2*time.Minute)
	})
	before := e.nginxRequests(t, ns, target)
	if err := e.c.Create(e.ctx, run, client.FieldValidation(metav1.FieldValidationIgnore)); err != nil {
		t.Fatalf("creating the converted %s: %v", tc.file, err)
	}
	served := func() int64 { return e.nginxRequests(t, ns, target) - before - 1 }

	if tc.deleted {
		// ttlSecondsAfterFinished: 0 deletes it as soon as it finished, with its runners.
		e.waitGone(t, typed.DeepCopy(), 3*time.Minute)
		if got := served(); got != tc.served {
			t.Errorf("nginx served %d requests, want %d", got, tc.served)
		}
		e.eventually(t, "the deleted run's runner Jobs gone", time.Minute, func() (bool, string) {
			var jobs batchv1.JobList
			err := e.c.List(e.ctx, &jobs, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(typed)))
			return err == nil && len(jobs.Items) == 0, fmt.Sprintf("%d jobs, %v", len(jobs.Items), err)
		})
		return
	}
	got, took := e.waitFinished(t, typed, 4*time.Minute)
	t.Logf("%s/%s verdict %s in %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second), got.Status.Message)
	if tc.failed != "" {
		if got.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(got.Status.Message, tc.failed) {
			t.Errorf("%s/%s %q: want Failed naming %q", got.Status.Phase, got.Status.Reason, got.Status.Message, tc.failed)
		}
		if n := served(); n != 0 {
			t.Errorf("nginx served %d requests, want none: the run must fail before load", n)
		}
		return
	}
	requirePassed(t, got)
	if n := served(); n != tc.served {
		t.Errorf("nginx served %d requests, want %d (setup, iterations, teardown)", n, tc.served)
	}
	r := got.Status.Results
	if r == nil || r.Iterations == nil || r.Iterations.Total != tc.iterations || r.Partial {
		t.Errorf("results %+v, want %d iterations, complete", r, tc.iterations)
	}
	if tc.checks > 0 && (r == nil || r.Checks == nil || r.Checks.Passed != tc.checks || r.Checks.Failed != 0) {
		t.Errorf("checks %+v, want %d passed and none failed", r.Checks, tc.checks)
	}
	if tc.warning != "" && (r == nil || !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, tc.warning) && strings.Contains(w, "spec.parallelism")
	})) {
		t.Errorf("warnings %q, want one saying %q and naming spec.parallelism", r.Warnings, tc.warning)
	}
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(typed))); err != nil || len(pods.Items) != tc.runners {
		t.Errorf("%d runner pods (%v), want parallelism's %d", len(pods.Items), err, tc.runners)
	}
}

// applyUnconverted creates file's TestRun with only its apiVersion changed and a target added,
// as a user migrating by hand would, the way a GitOps tool does (a server-side dry run, field
// validation Ignore): it is stored with every field it has, or refused naming the field;
// `cleanup: post` is refused naming spec.ttlSecondsAfterFinished.
func (e *env) applyUnconverted(t *testing.T, file, ns, targetURL string) {
	t.Helper()
	name := filepath.Base(file)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if u.GetKind() != "TestRun" {
		return
	}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetNamespace(ns)
	if err := unstructured.SetNestedField(u.Object, targetURL, "spec", "target", "external", "url"); err != nil {
		t.Fatal(err)
	}
	want := u.DeepCopy()
	err = e.c.Create(e.ctx, u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore))
	switch {
	case name == "testrun-cleanup.yaml" && (err == nil || !strings.Contains(err.Error(), "spec.ttlSecondsAfterFinished: 0")):
		t.Errorf("%s unconverted: got %v, want cleanup: post refused naming spec.ttlSecondsAfterFinished: 0", name, err)
	case err != nil && !strings.Contains(err.Error(), "spec."):
		t.Errorf("%s unconverted: refused without naming a field: %v", name, err)
	case err == nil:
		if d := k6convert.Dropped(want.Object["spec"], u.Object["spec"]); len(d) > 0 {
			t.Errorf("%s unconverted: admitted but not stored as written: %q", name, d)
		}
	}
}

// convertK6Operator runs `kubectl fleetbench convert` on file and returns the TestRun it wrote
// and its notes.
func convertK6Operator(ctx context.Context, file, targetURL string) (*unstructured.Unstructured, string, error) {
	var out, notes bytes.Buffer
	code := plugin.Run(ctx, []string{"convert", "-f", file, "--target-url", targetURL},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &notes})
	if code != 0 {
		return nil, "", fmt.Errorf("exit %d: %s", code, notes.String())
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(out.Bytes(), &u.Object); err != nil {
		return nil, "", err
	}
	if u.GetKind() != "TestRun" || u.GetAPIVersion() != v1alpha1.GroupVersion.String() {
		return nil, "", fmt.Errorf("converted to %s %s", u.GetAPIVersion(), u.GetKind())
	}
	return u, notes.String(), nil
}

// k6opScript is a small shared-iterations script against TARGET_URL (the converted run's
// external target), with setup() and teardown() making one request each when hooks is set, and
// the given checks (name: func) in every iteration.
func k6opScript(vus, iterations int, hooks bool, checks ...string) string {
	var b strings.Builder
	b.WriteString("import http from 'k6/http';\nimport { check } from 'k6';\nimport exec from 'k6/execution';\n")
	fmt.Fprintf(&b, "export const options = { scenarios: { s: { executor: 'shared-iterations', vus: %d, iterations: %d } } };\n", vus, iterations)
	if hooks {
		b.WriteString("export function setup() { http.get(`${__ENV.TARGET_URL}/?setup`); }\n")
		b.WriteString("export function teardown() { http.get(`${__ENV.TARGET_URL}/?teardown`); }\n")
	}
	b.WriteString("export default function () {\n  http.get(`${__ENV.TARGET_URL}/`);\n")
	if len(checks) > 0 {
		fmt.Fprintf(&b, "  check(null, { %s });\n", strings.Join(checks, ", "))
	}
	b.WriteString("}\n")
	return b.String()
}
