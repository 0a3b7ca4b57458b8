package capacityplan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

func template(ns string) *v1alpha1.TestRun {
	return tw.MakeTestRun("t", ns).Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer},
		v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "sut:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}},
	).Devices(100, "6s").Duration("30s").Obj()
}

func create(t *testing.T, p *v1alpha1.CapacityPlan) {
	t.Helper()
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func condition(p *v1alpha1.CapacityPlan, typ string) string {
	c := meta.FindStatusCondition(p.Status.Conditions, typ)
	if c == nil {
		return "absent"
	}
	return string(c.Status) + "/" + c.Reason
}

// TestSerialPlanRunsEveryCellOnceAndBuildsTheTable: C1 and C2 × WORKERS 1 and 2, one child at
// a time, the next only once the previous target namespace is gone; the manager restarts in
// every phase and no child is created twice; the table and the summary come from the children.
func TestSerialPlanRunsEveryCellOnceAndBuildsTheTable(t *testing.T) {
	ns := setup(t)
	p := tw.MakeCapacityPlan("bench", ns, template(ns), "C1", "C2").Sweep("app", "WORKERS", "1", "2").Obj()
	create(t, p)
	names := []string{"bench-c1-0", "bench-c1-1", "bench-c2-2", "bench-c2-3"}
	pushes := []string{"16.50", "31.00", "33.00", "60.00"}

	for i, name := range names {
		kids := waitChildren(t, p, names[:i+1]...)
		child := kids[name]
		if i == 0 {
			got := waitPlan(t, p, v1alpha1.PlanRunning, v1alpha1.ReasonRunningChildren)
			if got.Status.Progress != "0/4" || condition(got, v1alpha1.ConditionReconciling) != "True/"+v1alpha1.ReasonRunningChildren {
				t.Errorf("progress %s, Reconciling %s", got.Status.Progress, condition(got, v1alpha1.ConditionReconciling))
			}
			// The child is the template with the cell applied, controlled by the plan.
			if child.Spec.Profile != "C1" || child.Spec.Target.Components[1].Env[0].Value != "1" {
				t.Errorf("child spec: profile %s app env %v", child.Spec.Profile, child.Spec.Target.Components[1].Env)
			}
			if owner := metav1.GetControllerOf(child); owner == nil || owner.Kind != "CapacityPlan" || owner.Name != "bench" {
				t.Errorf("child owner %+v", owner)
			}
		}
		restartManager(t) // while a child runs
		target := targetNamespace(t, child)
		finish(t, child, v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted, pushes[i], int64(100*(i+1)))
		if i == len(names)-1 {
			removeNamespace(t, target)
			break
		}
		// Serial: the next child waits for this child's target namespace to be gone.
		waitPlan(t, p, v1alpha1.PlanRunning, v1alpha1.ReasonWaitingForTargetNamespace)
		restartManager(t) // while it waits
		time.Sleep(500 * time.Millisecond)
		if n := len(children(t, p)); n != i+1 {
			t.Fatalf("%d children while the target namespace of %s still exists, want %d", n, name, i+1)
		}
		removeNamespace(t, target)
	}

	got := waitPlan(t, p, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted)
	restartManager(t) // once done: nothing more is created, nothing is lost
	time.Sleep(500 * time.Millisecond)
	if n := len(children(t, p)); n != 4 {
		t.Fatalf("%d children after the plan ended, want 4", n)
	}
	if got.Status.Progress != "4/4" || len(got.Status.Table) != 4 {
		t.Fatalf("progress %s, %d rows", got.Status.Progress, len(got.Status.Table))
	}
	for i, row := range got.Status.Table {
		if row.TestRun != names[i] || row.Phase != v1alpha1.PhaseSucceeded || row.PushesPerSecond != pushes[i] || row.SafeMaxDevices != int64(100*(i+1)) ||
			row.RequestsAccepted != 600 || row.Latency == nil || row.Latency.P95 != "3.30" {
			t.Errorf("row %d = %+v", i, row)
		}
	}
	if v := got.Status.Table[3].Values["WORKERS"]; v != "2" || got.Status.Table[3].Profile != "C2" {
		t.Errorf("row 3 values %v profile %s", got.Status.Table[3].Values, got.Status.Table[3].Profile)
	}
	// The weakest passing row of each profile, as seed 000's sizing table takes it.
	if s := got.Status.Summary; len(s) != 2 || s[0].SafeMaxDevices != 100 || s[0].PushesPerSecond != "16.50" || s[1].SafeMaxDevices != 300 || s[1].Passed != 2 {
		t.Errorf("summary %+v", s)
	}
	for typ, want := range map[string]string{v1alpha1.ConditionReady: "True/" + v1alpha1.ReasonPassed, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonPlanCompleted,
		v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonPassed, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonPlanCompleted} {
		if c := condition(got, typ); c != want {
			t.Errorf("%s = %s, want %s", typ, c, want)
		}
	}
}

// TestFailedRowsAndTheFailurePolicy: with Continue a failed child and a missing profile are
// Failed rows and the plan goes on; with StopOnFailure nothing starts after the first failure.
func TestFailedRowsAndTheFailurePolicy(t *testing.T) {
	t.Run("continue", func(t *testing.T) {
		ns := setup(t)
		p := tw.MakeCapacityPlan("cont", ns, template(ns), "C1", "C9").Obj()
		p.Spec.Template.Target.Components = p.Spec.Template.Target.Components[:1]
		p.Spec.Template.Target.External = nil
		create(t, p)
		kids := waitChildren(t, p, "cont-c1-0")
		finish(t, kids["cont-c1-0"], v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonRunnerOOMKilled, "", 0)
		got := waitPlan(t, p, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted)
		if r := got.Status.Table[0]; r.Phase != v1alpha1.PhaseFailed || r.Reason != v1alpha1.ReasonRunnerOOMKilled {
			t.Errorf("failed child's row = %+v", r)
		}
		if r := got.Status.Table[1]; r.Phase != v1alpha1.PhaseFailed || r.Reason != v1alpha1.ReasonProfileNotFound || r.TestRun != "" {
			t.Errorf("missing profile's row = %+v", r)
		}
		if len(children(t, got)) != 1 {
			t.Errorf("a child was made for the missing profile")
		}
		if c := condition(got, v1alpha1.ConditionReady); c != "False/"+v1alpha1.ReasonFailed {
			t.Errorf("Ready = %s: a plan with unmeasured rows is not Ready", c)
		}
		if c := condition(got, v1alpha1.ConditionStalled); !strings.HasPrefix(c, "True/") {
			t.Errorf("Stalled = %s", c)
		}
	})
	t.Run("stop on failure", func(t *testing.T) {
		ns := setup(t)
		p := tw.MakeCapacityPlan("stop", ns, template(ns), "C1").Obj()
		p.Spec.Repetitions, p.Spec.FailurePolicy = 3, v1alpha1.FailureStop
		create(t, p)
		kids := waitChildren(t, p, "stop-c1-0")
		finish(t, kids["stop-c1-0"], v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonTargetNotReady, "", 0)
		got := waitPlan(t, p, v1alpha1.PlanFailed, v1alpha1.ReasonChildFailed)
		time.Sleep(500 * time.Millisecond)
		if n := len(children(t, p)); n != 1 {
			t.Errorf("%d children after the first failed under StopOnFailure, want 1", n)
		}
		if !strings.Contains(got.Status.Message, "TargetNotReady") || got.Status.Progress != "1/3" {
			t.Errorf("message %q progress %s", got.Status.Message, got.Status.Progress)
		}
		if c := condition(got, v1alpha1.ConditionStalled); c != "True/"+v1alpha1.ReasonChildFailed {
			t.Errorf("Stalled = %s", c)
		}
		if c := condition(got, v1alpha1.ConditionComplete); c != "True/"+v1alpha1.ReasonChildFailed {
			t.Errorf("Complete = %s", c)
		}
	})
}

// TestParallelKeepsMaxParallelRunning: two children at once; the third when one ends.
func TestParallelKeepsMaxParallelRunning(t *testing.T) {
	ns := setup(t)
	p := tw.MakeCapacityPlan("par", ns, template(ns), "C1").Obj()
	p.Spec.Repetitions, p.Spec.Concurrency, p.Spec.MaxParallel = 3, v1alpha1.ConcurrencyParallel, ptr.To[int32](2)
	create(t, p)
	kids := waitChildren(t, p, "par-c1-0", "par-c1-1")
	if got := kids["par-c1-1"].Spec; got.Profile != "C1" {
		t.Errorf("second child profile %s", got.Profile)
	}
	targetNamespace(t, kids["par-c1-0"]) // Parallel does not wait for it
	finish(t, kids["par-c1-0"], v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted, "10.00", 50)
	waitChildren(t, p, "par-c1-0", "par-c1-1", "par-c1-2")
}

// TestDeletingThePlanDeletesItsChildren.
func TestDeletingThePlanDeletesItsChildren(t *testing.T) {
	ns := setup(t)
	p := tw.MakeCapacityPlan("gone", ns, template(ns), "C1", "C2").Obj()
	p.Spec.Concurrency = v1alpha1.ConcurrencyParallel
	create(t, p)
	waitChildren(t, p, "gone-c1-0", "gone-c2-1")
	if err := env.Client.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "plan and children deleted", func() error {
		if n := len(children(t, p)); n > 0 {
			return fmt.Errorf("%d children left", n)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), &v1alpha1.CapacityPlan{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("plan still there: %w", err)
		}
		return nil
	})
}
