package testrun

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestPreflightRecordsThePlannedDuration: a run whose length only its script knows records the
// pre-flight's plan (k6's totalDuration) in status.plannedDuration, which its target sampling
// and progress then follow.
func TestPreflightRecordsThePlannedDuration(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("script-only", ns).Parallelism(2).Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	if err := preflightPod(ctx, env.Client, k.preflightJob(), 0, `{"fleetbenchCheck":"passed","totalDuration":"45s"}`); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.TestRun{}
	eventually(t, "status.plannedDuration", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.PlannedDuration != "45s" {
			return fmt.Errorf("status.plannedDuration %q, want 45s", got.Status.PlannedDuration)
		}
		return nil
	})
}
