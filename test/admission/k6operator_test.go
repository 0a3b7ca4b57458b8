package admission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/k6convert"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// k6Base is a valid spec the k6-operator fields are added to.
const k6Base = `
target: {external: {url: "http://api.example.svc:8080"}}
script: {configMap: {name: k6-test, file: test.js}}
parallelism: 2
`

// dryRunSpec dry-run creates a TestRun with spec k6Base plus extra, and returns the API server's
// answer; the server's field validation is Strict, so an unknown field is an error too.
func dryRunSpec(t *testing.T, extra string) (*v1alpha1.TestRun, error) {
	t.Helper()
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(k6Base+extra), &spec); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "TestRun",
		"metadata": map[string]any{"name": "k6op", "namespace": ns}, "spec": spec,
	}}
	err := env.Client.Create(context.Background(), u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
	run := &v1alpha1.TestRun{}
	if err == nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, run); err != nil {
			t.Fatalf("decoding the admitted TestRun: %v", err)
		}
	}
	return run, err
}

// Every k6-operator v1.6 field fleetbench does not honour is declared and refused with a message
// naming fleetbench's equivalent, instead of being an unknown field a lenient client drops.
func TestK6OperatorFieldsAreRefusedNamingTheEquivalent(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"initializer", `initializer: {disabled: true}`, "spec.initializer is k6-operator's initializer pod; fleetbench checks the script in its own pre-flight pod"},
		{"starter", `starter: {image: k6-starter}`, "fleetbench starts the runners itself"},
		{"quiet", `quiet: "false"`, `add "--quiet" to spec.args`},
		{"paused", `paused: "true"`, "fleetbench starts the runners itself"},
		{"scuttle", `scuttle: {enabled: "true"}`, "spec.scuttle"},
		{"testRunId", `testRunId: "123"`, "spec.testRunId is reserved by Grafana Cloud k6"},
		{"token", `token: abc`, "spec.token is reserved by Grafana Cloud k6"},
		{"runner disabled", `runner: {disabled: true}`, "spec.runner.disabled applies to k6-operator's initializer only"},
		{"runner readinessProbe", `runner: {readinessProbe: {httpGet: {path: /, port: 6565}}}`, "gates the synchronized start"},
		{"runner livenessProbe", `runner: {livenessProbe: {httpGet: {path: /, port: 6565}}}`, "spec.runner.livenessProbe: a liveness kill loses the run"},
		{"port 6565", `ports: [{containerPort: 6565}]`, "k6-operator's own port 6565 needs no entry"},
		{"port named live", `ports: [{name: live, containerPort: 9000}]`, "names k6-api and live are fleetbench's own"},
		{"automount not a bool string", `runner: {automountServiceAccountToken: "yes"}`, `spec.runner.automountServiceAccountToken: Unsupported value: "yes"`},
		{"scheduler not a name", `runner: {schedulerName: "My Scheduler"}`, "must be the name of a scheduler"},
		{"init container named k6", `runner: {initContainers: [{name: k6, image: busybox}]}`, "must be a DNS label other than k6"},
		{"init container without image", `runner: {initContainers: [{name: a}]}`, "spec.runner.initContainers[0].image: Required value"},
		{"runner mount at /test", `runner: {volumes: [{name: d, emptyDir: {}}], volumeMounts: [{name: d, mountPath: /test}]}`, "spec.runner volumeMounts must not use /test"},
		{"init container mount under /test", `runner: {volumes: [{name: d, emptyDir: {}}], initContainers: [{image: busybox, volumeMounts: [{name: d, mountPath: /test/data}]}]}`, "must not use /test"},
		{"root without runAsNonRoot false", `runner: {securityContext: {runAsUser: 0}}`, "set runAsNonRoot: false too"},
		// k6-operator's string form of cleanup, which fleetbench's cleanup (an object) would refuse
		// with a type error.
		{"cleanup post", `cleanup: post`, "spec.cleanup: Invalid value: \"post\": spec.cleanup in body should match '" + cleanupHint},
		{"cleanup another string", `cleanup: "yes"`, cleanupHint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dryRunSpec(t, tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("spec %s: got %v, want a refusal containing %q", tc.spec, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "must be of type") {
				t.Errorf("spec %s: refused with a type error: %v", tc.spec, err)
			}
		})
	}
}

// What fleetbench honours of k6-operator is admitted and decoded, including k6-operator's
// pod-level runner.securityContext and a localFile script whose image has its own /test.
func TestK6OperatorFieldsFleetbenchHonoursAreAdmitted(t *testing.T) {
	for _, spec := range []string{
		`ports: [{name: ext, containerPort: 9000}]`,
		`runner: {schedulerName: default-scheduler, automountServiceAccountToken: "false"}`,
		`runner: {securityContext: {fsGroup: 1, runAsNonRoot: true, runAsUser: 12345, seccompProfile: {type: RuntimeDefault}, supplementalGroups: [12345]},
  containerSecurityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}`,
		`runner: {securityContext: {readOnlyRootFilesystem: false, capabilities: {add: [NET_BIND_SERVICE]}}}`,
		`runner: {securityContext: {runAsUser: 0, runAsNonRoot: false}}`,
		`runner: {volumes: [{name: d, emptyDir: {}}], volumeMounts: [{name: d, mountPath: /data}],
  initContainers: [{image: busybox, command: [sh, -c, "cp /test/users.json /data/"], volumeMounts: [{name: d, mountPath: /data}]}, {name: proxy, image: envoy, restartPolicy: Always}]}`,
		`script: {localFile: /test/bar.js}
runner: {volumes: [{name: p, emptyDir: {}}], volumeMounts: [{name: p, mountPath: /test}], initContainers: [{image: busybox, volumeMounts: [{name: p, mountPath: /test}]}]}`,
	} {
		run, err := dryRunSpec(t, spec)
		if err != nil {
			t.Errorf("spec %s refused: %v", spec, err)
			continue
		}
		job := runners.Job(run, 0, run.RunnerCount(), runners.JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "k6op-script"})
		if err := env.Client.Create(context.Background(), job, client.DryRunAll); err != nil {
			t.Errorf("spec %s: the runner Job is refused: %v", spec, err)
		}
	}
}

// k6-operator's securityContext sample, converted unchanged, gives runner pods that a
// restricted namespace admits without a warning: the user's pod-level keys are merged over the
// hardened defaults, which a user's runAsUser used to replace. An explicit weakening is still
// the namespace's to refuse.
func TestRunnerPodsWithUserSecurityPassRestricted(t *testing.T) {
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	seen := &warnings{}
	cfg.WarningHandler = seen
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	restricted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-runners-",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}
	if err := c.Create(ctx, restricted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, restricted) })
	for _, tc := range []struct{ name, spec, refused string }{
		{name: "k6-operator's securityContext sample", spec: `runner: {securityContext: {fsGroup: 1, runAsNonRoot: true, runAsUser: 12345, seccompProfile: {type: RuntimeDefault}, supplementalGroups: [12345]},
  containerSecurityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}`},
		{name: "runAsUser alone", spec: `runner: {securityContext: {runAsUser: 12345}}`},
		{name: "init container", spec: `runner: {securityContext: {runAsGroup: 3000}, initContainers: [{image: busybox}]}`},
		{name: "privilege escalation asked for", spec: `runner: {securityContext: {allowPrivilegeEscalation: true}}`, refused: "allowPrivilegeEscalation != false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := dryRunSpec(t, tc.spec)
			if err != nil {
				t.Fatalf("spec refused: %v", err)
			}
			run.Namespace = restricted.Name
			for _, tmpl := range []corev1.PodTemplateSpec{
				runners.Job(run, 0, 2, runners.JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "s"}).Spec.Template,
				runners.PreflightJob(run, runners.JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "s"}).Spec.Template,
			} {
				seen.seen = nil
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "runner-", Namespace: restricted.Name}, Spec: tmpl.Spec}
				err := c.Create(ctx, pod, client.DryRunAll)
				switch {
				case tc.refused == "" && err != nil:
					t.Errorf("runner pod refused in a restricted namespace: %v", err)
				case tc.refused == "" && len(seen.seen) > 0:
					t.Errorf("runner pod drew warnings: %v", seen.seen)
				case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
					t.Errorf("an explicit weakening: got %v, want Pod Security's refusal naming %q", err, tc.refused)
				}
			}
		})
	}
}

// cleanupHint is what admission says to k6-operator's `cleanup: post`.
const cleanupHint = "k6-operator's `cleanup: post` is spec.ttlSecondsAfterFinished: 0 here (spec.cleanup.target says what happens to the target)"

// keepForHint is what admission says to keepFor beside a target that is not kept.
const keepForHint = "spec.cleanup.keepFor applies to a kept target only: set spec.cleanup.target: KeepUntilDeleted, or drop keepFor"

// spec.cleanup admits k6-operator's string form only to refuse it (hack/crdpatch): its object
// form keeps target's enum and default, and every other value, or a key that is not target, is
// refused too, also when a client's field validation would only have dropped an unknown key.
func TestCleanupKeepsItsObjectForm(t *testing.T) {
	for spec, want := range map[string]v1alpha1.TargetCleanupPolicy{
		`cleanup: {target: KeepUntilDeleted}`:              v1alpha1.TargetKeepUntilDeleted,
		`cleanup: {}`:                                      v1alpha1.TargetDeleteAfterRun,
		`cleanup: {target: KeepUntilDeleted, keepFor: 2h}`: v1alpha1.TargetKeepUntilDeleted,
	} {
		run, err := dryRunSpec(t, spec)
		if err != nil || run.Spec.Cleanup == nil || run.Spec.Cleanup.Target != want {
			t.Errorf("%s: got %+v, %v; want admitted with target %s", spec, run.Spec.Cleanup, err, want)
		}
	}
	for spec, want := range map[string]string{
		`cleanup: {target: Later}`:            `spec.cleanup.target: Unsupported value: "Later"`,
		`cleanup: {targte: KeepUntilDeleted}`: "spec.cleanup: Too many",
		`cleanup: 0`:                          "spec.cleanup",
		`cleanup: true`:                       "spec.cleanup",
		`cleanup: [post]`:                     "spec.cleanup",
		`cleanup: ""`:                         cleanupHint,
		// keepFor is the one second key, and only beside KeepUntilDeleted.
		`cleanup: {keepFor: 2h}`:                                 keepForHint,
		`cleanup: {target: DeleteAfterRun, keepFor: 2h}`:         keepForHint,
		`cleanup: {target: KeepUntilDeleted, targte: x}`:         "spec.cleanup: Too many",
		`cleanup: {target: KeepUntilDeleted, keepFor: 2h, x: y}`: "spec.cleanup: Too many",
		`cleanup: {target: KeepUntilDeleted, keepFor: forever}`:  "spec.cleanup.keepFor",
		`cleanup: {target: KeepUntilDeleted, keepFor: "0s"}`:     "must be a positive duration",
	} {
		if _, err := dryRunSpec(t, spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a refusal containing %q", spec, err, want)
		}
	}
	// A GitOps tool's field validation (Ignore) would have had the typo pruned and the default
	// put in its place.
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(k6Base+`cleanup: {targte: KeepUntilDeleted}`), &spec); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "TestRun",
		"metadata": map[string]any{"name": "k6op", "namespace": ns}, "spec": spec,
	}}
	if err := env.Client.Create(context.Background(), u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore)); err == nil {
		t.Errorf("cleanup.targte under field validation Ignore: admitted as %v", u.Object["spec"].(map[string]any)["cleanup"])
	}
}

// k6-operator v1.6's own sample and e2e TestRuns with only their apiVersion changed and a target
// added, as a user migrating by hand would, created as a GitOps tool does (field validation
// Ignore: an unknown field is dropped without a word). Each is stored with every field it has,
// or refused naming the field: none is silently changed.
func TestUnconvertedK6OperatorManifestsLoseNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "plugin", "testdata", "k6operator", "*.yaml"))
	if err != nil || len(files) < 35 {
		t.Fatalf("%d manifests (%v)", len(files), err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if u.GetKind() != "TestRun" {
			continue
		}
		u.SetAPIVersion(v1alpha1.GroupVersion.String())
		u.SetNamespace(ns)
		if err := unstructured.SetNestedField(u.Object, "http://sut.example:8080", "spec", "target", "external", "url"); err != nil {
			t.Fatal(err)
		}
		want := u.DeepCopy()
		err = env.Client.Create(context.Background(), u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore))
		if err != nil {
			if !strings.Contains(err.Error(), "spec.") {
				t.Errorf("%s: refused without naming a field: %v", filepath.Base(f), err)
			}
			t.Logf("%s: refused: %v", filepath.Base(f), err)
			continue
		}
		if d := k6convert.Dropped(want.Object["spec"], u.Object["spec"]); len(d) > 0 {
			t.Errorf("%s: admitted but not stored as written: %q", filepath.Base(f), d)
		}
	}
}
