package capacityplan

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// The suite runs the real CapacityPlan controller against a real kube-apiserver and etcd. The
// TestRun controller does not run here: the tests play it, setting each child's status as it
// would (its own suite proves it does), so every row's numbers are known.
var (
	env     *testenv.Env
	manager *testenv.Manager
	ctx     = context.Background()
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapcore.Level(1))))
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if manager, err = startManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	manager.Stop()
	_ = env.Stop()
	os.Exit(code)
}

func startManager() (*testenv.Manager, error) {
	return testenv.StartManager(env, ctrl.Options{}, func(mgr ctrl.Manager, _ bool) error { return New(mgr, Options{}).SetupWithManager(mgr) })
}

func restartManager(t *testing.T) { t.Helper(); manager = manager.Restart(t) }

// setup makes a namespace for one test and the Profiles c1 and c2.
func setup(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cp-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*v1alpha1.Profile{tw.MakeProfile("c1", "1", "512Mi").Obj(), tw.MakeProfile("c2", "2", "1Gi").Obj()} {
		if err := env.Client.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return ns.Name
}

// children lists the plan's TestRuns by name.
func children(t *testing.T, p *v1alpha1.CapacityPlan) map[string]*v1alpha1.TestRun {
	t.Helper()
	var list v1alpha1.TestRunList
	if err := env.Client.List(ctx, &list, client.InNamespace(p.Namespace), client.MatchingLabels{naming.LabelPlan: p.Name}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1alpha1.TestRun{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// waitChildren waits until exactly the named children exist, and returns them.
func waitChildren(t *testing.T, p *v1alpha1.CapacityPlan, names ...string) map[string]*v1alpha1.TestRun {
	t.Helper()
	var got map[string]*v1alpha1.TestRun
	eventually(t, fmt.Sprintf("children %v", names), func() error {
		got = children(t, p)
		if len(got) != len(names) {
			return fmt.Errorf("%d children, want %v", len(got), names)
		}
		for _, n := range names {
			if got[n] == nil {
				return fmt.Errorf("no child %s among %d", n, len(got))
			}
		}
		return nil
	})
	return got
}

// finish ends a child as the TestRun controller would: a phase, a verdict, and numbers.
func finish(t *testing.T, run *v1alpha1.TestRun, phase v1alpha1.TestRunPhase, verdict v1alpha1.Verdict, reason string, pushes string, safe int64) {
	t.Helper()
	now := metav1.Now()
	run.Status = v1alpha1.TestRunStatus{Phase: phase, Verdict: verdict, Reason: reason, Message: "played by the test", CompletionTime: &now,
		Results: &v1alpha1.Results{Requests: &v1alpha1.RequestCounts{Total: 600, Accepted: 600, DroppedPercent: "0.00"},
			Throughput: &v1alpha1.Throughput{RequestsPerSecond: pushes}, Latency: &v1alpha1.Latency{P95: "3.30"}},
		Capacity: &v1alpha1.CapacityResult{PushesPerSecond: pushes, IdealMaxDevices: safe * 2, SafeMaxDevices: safe}}
	if err := env.Client.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
}

// targetNamespace creates a child's target namespace, as the TestRun controller would.
func targetNamespace(t *testing.T, run *v1alpha1.TestRun) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: naming.TargetNamespace(run.Namespace, run.Name),
		Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelTestRunNS: run.Namespace, naming.LabelRole: naming.RoleTarget,
			naming.LabelTestRunUID: string(run.UID)}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns
}

// removeNamespace deletes a namespace for good: envtest has no namespace controller, so the
// test finalizes it as that controller would once the namespace is empty.
func removeNamespace(t *testing.T, ns *corev1.Namespace) {
	t.Helper()
	if err := env.Client.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "namespace "+ns.Name+" gone", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
}

func waitPlan(t *testing.T, p *v1alpha1.CapacityPlan, phase, reason string) *v1alpha1.CapacityPlan {
	t.Helper()
	got := &v1alpha1.CapacityPlan{}
	eventually(t, fmt.Sprintf("plan %s %s/%s", p.Name, phase, reason), func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.Phase != phase || (reason != "" && got.Status.Reason != reason) {
			return fmt.Errorf("phase %s reason %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		return nil
	})
	return got
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, what, check)
}
