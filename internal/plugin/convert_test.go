package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/k6convert"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// k6-operator v1.6's own samples and e2e TestRuns (testdata/k6operator, each naming its source),
// converted by `kubectl fleetbench convert` and created in a server-side dry run: each is
// admitted by fleetbench's CRD and builds a runner Job the API server accepts, or the
// conversion or admission refuses it naming the field. stderr says what changed.
func TestConvertK6OperatorSamples(t *testing.T) {
	for _, tc := range k6operatorCases {
		t.Run(tc.file, func(t *testing.T) {
			args := []string{"convert", "-f", filepath.Join("testdata", "k6operator", tc.file)}
			if tc.targetURL != "" {
				args = append(args, "--target-url", tc.targetURL)
			}
			var out, errOut bytes.Buffer
			code := Run(ctx, args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if tc.convertErr != "" {
				if code != ExitError || !strings.Contains(errOut.String(), tc.convertErr) {
					t.Fatalf("exit %d, stderr %q: want exit %d naming %q", code, errOut.String(), ExitError, tc.convertErr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			for _, n := range tc.notes {
				if !strings.Contains(errOut.String(), n) {
					t.Errorf("stderr %q lacks %q", errOut.String(), n)
				}
			}
			for _, s := range tc.spec {
				if !strings.Contains(out.String(), s) {
					t.Errorf("converted manifest lacks %q:\n%s", s, out.String())
				}
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(out.Bytes(), &u.Object); err != nil {
				t.Fatal(err)
			}
			if u.GetAPIVersion() != "fleetbench.dev/v1alpha1" || u.GetKind() != "TestRun" {
				t.Fatalf("converted to %s %s", u.GetAPIVersion(), u.GetKind())
			}
			want := u.DeepCopy()
			u.SetNamespace("default")
			// As a GitOps tool applies it: the server's field validation only drops unknown fields.
			err := env.Client.Create(ctx, u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore))
			switch {
			case tc.refused != "":
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Errorf("admission: got %v, want a refusal naming %q", err, tc.refused)
				}
				return
			case err != nil:
				t.Fatalf("the converted TestRun is refused: %v\n%s", err, out.String())
			}
			// Stored as converted: nothing pruned or rewritten, so nothing was dropped without a note.
			for _, f := range []string{"spec", "metadata.labels", "metadata.annotations"} {
				path := strings.Split(f, ".")
				w, _, _ := unstructured.NestedFieldNoCopy(want.Object, path...)
				g, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
				if w == nil {
					continue
				}
				if d := k6convert.Dropped(w, g); len(d) > 0 {
					t.Errorf("the API server did not store %s as converted: %q", f, d)
				}
			}
			run := &v1alpha1.TestRun{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, run); err != nil {
				t.Fatal(err)
			}
			job := runners.Job(run, 0, run.RunnerCount(), runners.JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "s"})
			if err := env.Client.Create(ctx, job, client.DryRunAll); err != nil {
				t.Errorf("the converted TestRun's runner Job is refused: %v", err)
			}
		})
	}
}

// Every manifest of testdata/k6operator has a case above, so none is added and left unchecked.
func TestEveryK6OperatorManifestIsConverted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "k6operator", "*.yaml"))
	if err != nil || len(files) < 35 {
		t.Fatalf("%d manifests (%v), want k6-operator v1.6's 35 TestRuns and PrivateLoadZone", len(files), err)
	}
	cased := map[string]bool{}
	for _, tc := range k6operatorCases {
		cased[tc.file] = true
	}
	for _, f := range files {
		if !cased[filepath.Base(f)] {
			t.Errorf("%s has no case in k6operatorCases", f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "# Source: github.com/grafana/k6-operator, tag v1.6.0, ") {
			t.Errorf("%s does not name its source on its first line", f)
		}
	}
}

// convert reads stdin, passes other objects through, and refuses a kind it cannot convert.
func TestConvertReadsStdinAndPassesOtherObjects(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "k6operator", "testrun-cleanup.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: test}\ndata: {test.js: \"export default function () {}\"}\n"
	var out, errOut bytes.Buffer
	code := Run(ctx, []string{"convert", "--target-url", "http://sut"}, genericiooptions.IOStreams{In: strings.NewReader(cm + "---\n" + string(in)), Out: &out, ErrOut: &errOut})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 2 || !strings.Contains(docs[0], "kind: ConfigMap") || !strings.Contains(docs[1], "apiVersion: fleetbench.dev/v1alpha1") {
		t.Errorf("output:\n%s", out.String())
	}
	_, _, err = k6convert.Convert([]map[string]any{{"apiVersion": "k6.io/v1alpha1", "kind": "K6", "metadata": map[string]any{"name": "old"}}}, k6convert.Options{})
	if err == nil || !strings.Contains(err.Error(), "K6/old") {
		t.Errorf("kind K6: %v", err)
	}
}

// k6operatorCase is what `kubectl fleetbench convert` and admission make of one k6-operator manifest.
type k6operatorCase struct {
	file      string
	targetURL string
	// convertErr: the conversion refuses, naming the field or kind.
	convertErr string
	// refused: admission refuses the converted TestRun with this in the message.
	refused string
	// notes must each be in stderr; spec fields must be in the converted spec (YAML).
	notes, spec []string
}

// k6operatorCases has every manifest of testdata/k6operator (TestEveryK6OperatorManifestIsConverted).
var k6operatorCases = []k6operatorCase{
	{file: "testrun.yaml", targetURL: "https://quickpizza.grafana.com", spec: []string{"parallelism: 4", "configMap:", "file: test.js", "url: https://quickpizza.grafana.com"}},
	{file: "testrun_with_args.yaml", targetURL: "https://test.k6.io",
		spec: []string{"- note=nightly run of \"checkout\" flow", "- BASE_URL=$(BASE_URL)", "value: https://test.k6.io"}},
	{file: "testrun_with_initContainers.yaml", targetURL: "http://sut:8080",
		notes: []string{"spec.initializer: dropped: fleetbench checks the script in its own pre-flight pod"},
		spec:  []string{"initContainers:", "image: busybox:latest"}},
	{file: "testrun_with_securitycontext.yaml", targetURL: "http://sut:8080",
		notes: []string{"spec.initializer: dropped", "spec.starter: dropped: fleetbench starts the runners itself"},
		spec:  []string{"fsGroup: 1", "runAsUser: 12345", "supplementalGroups:", "containerSecurityContext:"}},
	{file: "testrun_with_readOnlyVolumeClaim.yaml", targetURL: "http://sut:8080", spec: []string{"volumeClaim:", "readOnly: true"}},
	{file: "testrun_initializer_disabled.yaml", targetURL: "http://sut:8080", notes: []string{"spec.initializer: dropped"}},
	{file: "testrun_with_localfile.yaml", targetURL: "http://sut:8080",
		notes: []string{"TODO: spec.runner.image: <custom-image> dropped", "TODO: spec.script.localFile: the file is read from the runner image"},
		spec:  []string{"localFile: /test/test.js"}},
	{file: "testrun_with_topologyspreadconstraints.yaml", targetURL: "http://sut:8080", spec: []string{"topologySpreadConstraints:", "testrun: sample"}},
	{file: "testrun-cleanup.yaml", targetURL: "http://sut:8080",
		notes: []string{"spec.cleanup: post became spec.ttlSecondsAfterFinished: 0"}, spec: []string{"ttlSecondsAfterFinished: 0"}},
	{file: "init-container-volume.yaml", targetURL: "https://quickpizza.grafana.com",
		spec: []string{"localFile: /test/bar.js", "mountPath: /test", "workingDir: /test"}},
	// Without --target-url the target is a placeholder admission refuses until it is set.
	{file: "testrun.yaml", refused: "spec.target.external.url", notes: []string{"TODO: spec.target:"}},
	// `script: k6-test` is not a script source, in k6-operator either.
	{file: "testrun_with_output.yaml", convertErr: "TestRun/k6-sample: spec.script must be an object"},
	{file: "privateloadzone.yaml", convertErr: "PrivateLoadZone/privateloadzone-sample: a Grafana Cloud k6 private load zone has no fleetbench equivalent"},
	// k6-operator v1.6's remaining e2e TestRuns and samples.
	{file: "testrun_with_volumeClaim.yaml", targetURL: "http://sut:8080", spec: []string{"volumeClaim:", "name: stress-test-volumeClaim", "file: test.js"}},
	{file: "basic-testrun-1.yaml", targetURL: "http://sut:8080", spec: []string{"parallelism: 1", "name: test"}},
	{file: "basic-testrun-4.yaml", targetURL: "http://sut:8080", spec: []string{"parallelism: 4", "arguments: --no-teardown --tag office=hours", "value: https://pizza.grafana.fun"}},
	// parallelism 5 on a 1-VU script: k6-operator's error stage; fleetbench's pre-flight judges it.
	{file: "error-stage.yaml", targetURL: "http://sut:8080", spec: []string{"parallelism: 5"}},
	{file: "initializer-disabled.yaml", targetURL: "http://sut:8080", notes: []string{"spec.initializer: dropped"}},
	{file: "initializer-missing-k6-logs.yaml", targetURL: "http://sut:8080", notes: []string{"spec.initializer: dropped"}},
	// k6 refuses the arguments when it runs: the pre-flight's verdict, as k6-operator's error stage.
	{file: "invalid-arguments.yaml", targetURL: "http://sut:8080", spec: []string{"arguments: this argument-is-invalid"}},
	{file: "multifile.yaml", targetURL: "http://sut:8080", spec: []string{"parallelism: 3", "name: multifile"}},
	{file: "testrun-archive.yaml", targetURL: "http://sut:8080", spec: []string{"file: archive.tar"}},
	{file: "test-initcontainer-volumes.yaml", targetURL: "http://sut:8080", notes: []string{"TODO: spec.script.localFile"},
		spec: []string{"localFile: /test/test.js", "mountPath: /test", "image: busybox:1.28"}},
	{file: "test-initcontainer.yaml", targetURL: "http://sut:8080", spec: []string{"initContainers:", "cat /test/test.js", "sleep 10"}},
	{file: "e2e-test.yaml", targetURL: "http://sut:8080", spec: []string{"name: crocodile-stress-test"}},
	{file: "testrun-cloud-output.yaml", targetURL: "http://sut:8080", notes: []string{"TODO: spec.arguments: --out cloud dropped"},
		spec: []string{"arguments: --tag office=hours"}},
	{file: "testrun-cloud-output-args.yaml", targetURL: "http://sut:8080", notes: []string{"TODO: spec.args: --out cloud dropped"},
		spec: []string{"- note=hello world", "- PIZZA_NOTE=hello \"world\" $$5 and $(BASE_URL)"}},
	{file: "testrun-simultaneous-cloud-output-1.yaml", targetURL: "http://sut:8080", notes: []string{"TODO: spec.arguments: --out cloud dropped"}, spec: []string{"parallelism: 2"}},
	{file: "testrun-simultaneous-cloud-output-2.yaml", targetURL: "http://sut:8080", notes: []string{"TODO: spec.arguments: --out cloud dropped"}, spec: []string{"parallelism: 3"}},
	{file: "testrun-simultaneous-1.yaml", targetURL: "http://sut:8080", spec: []string{"name: t-2-runners", "parallelism: 2"}},
	{file: "testrun-simultaneous-2.yaml", targetURL: "http://sut:8080", spec: []string{"name: t-3-runners", "parallelism: 3"}},
	{file: "testrun-watch-namespace.yaml", targetURL: "http://sut:8080", spec: []string{"namespace: some-ns"}},
	{file: "testrun-watch-namespace-invisible.yaml", targetURL: "http://sut:8080", spec: []string{"namespace: invisible"}},
	{file: "testrun-watch-namespaces.yaml", targetURL: "http://sut:8080", spec: []string{"namespace: some-ns"}},
	{file: "testrun-watch-namespaces-invisible.yaml", targetURL: "http://sut:8080", spec: []string{"namespace: invisible"}},
	{file: "testrun-watch-namespaces-other.yaml", targetURL: "http://sut:8080", spec: []string{"namespace: some-other-ns"}},
}
