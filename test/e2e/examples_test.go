//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestStab22ExampleRunsAsShipped applies examples/dwarfguard/stab-2-2-c1.yaml and its script's
// ConfigMap as a user would, only 30 s long instead of 2 hours, and requires every push to be
// accepted. Admission alone passed it while every push was refused (an nginx with no route to
// the backend, and a self-signed certificate the script did not skip).
func TestStab22ExampleRunsAsShipped(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-example")
	dir := filepath.Join(repoRoot(t), "examples", "dwarfguard")
	script := &corev1.ConfigMap{}
	readManifest(t, filepath.Join(dir, "device-push.yaml"), script)
	script.Namespace = ns
	if err := e.c.Create(e.ctx, script); err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.TestRun{}
	readManifest(t, filepath.Join(dir, "stab-2-2-c1.yaml"), run)
	run.Namespace = ns
	run.Spec.Load.Duration = "30s"

	got := e.run(t, run, 5*time.Minute)
	requirePassed(t, got)
	// 1000 devices every 200 s: 5 pushes/s for 30 s.
	if r := got.Status.Results.Requests; r.Total < 135 || r.Total > 165 || r.Dropped != 0 || r.Accepted != r.Total {
		t.Errorf("requests %+v, want about 150, every one accepted", r)
	}
}

func readManifest(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
