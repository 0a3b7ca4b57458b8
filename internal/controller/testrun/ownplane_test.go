package testrun

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// ownControlPlane starts a control plane of the test's own (the suite's manager would act on
// its runs too), stopped when the test ends, passes every pre-flight Job there, and creates
// objs there in order.
func ownControlPlane(t *testing.T, objs []client.Object, opts ...testenv.Option) *testenv.Env {
	t.Helper()
	e, err := testenv.Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	preflights, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go passPreflights(preflights, e.Client)
	for _, o := range objs {
		if err := e.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// namespaceAndProfile is what a run in ns needs on a control plane of its own: the namespace
// and the Profile c1 the test wrappers' runs name.
func namespaceAndProfile(ns string) []client.Object {
	return []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, tw.MakeProfile("c1", "1", "512Mi").Obj()}
}

// startOwnManager runs a TestRun controller alone on e, stopped when the test ends, with the
// suite's fakes and timings and Kueue as the manager found it at start; configure changes
// those options, or refuses to start on that Kueue answer. Stopping it early is safe.
func startOwnManager(t *testing.T, e *testenv.Env, configure func(o *runenv.Options, kueue bool) error) *testenv.Manager {
	t.Helper()
	mgr, err := testenv.StartManagerIn(e, controller.Namespaces{}, ctrl.Options{}, func(mgr ctrl.Manager, kueue bool) error {
		o := runenv.Options{RunnerAPI: runner, Logs: logs, Stats: stats, RunnerImage: "fleetbench/runner:test", Timeouts: testTimeouts,
			PodLevelResources: true, ProgressInterval: time.Second, PullRetryGrace: 5 * time.Second, Kueue: kueue}
		if err := configure(&o, kueue); err != nil {
			return err
		}
		return New(mgr, o).SetupWithManager(mgr)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Stop() })
	return mgr
}
