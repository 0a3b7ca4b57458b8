package testrun

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/capacityplan"
	"fleetbench.dev/fleetbench/internal/controller/orphans"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/testenv"
	"fleetbench.dev/fleetbench/pkg/target"
)

// The suite runs the real reconciler against a real kube-apiserver and etcd. Nothing plays
// the kubelet, Job or Deployment controllers there, so the tests do (see kubelet_test.go);
// only the k6 REST API and the log reader are test doubles.
var (
	env     *testenv.Env
	runner  = newFakeRunnerAPI()
	logs    = newFakeLogs()
	stats   = newFakeStats()
	writes  = &writeCounter{}
	manager *testenv.Manager
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapcore.Level(zapLevel()))))
	var err error
	env, err = testenv.Start(testenv.WithKueueCRDs())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	manager, err = startManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	ctx, stopPreflights := context.WithCancel(context.Background())
	go passPreflights(ctx, env.Client)
	code := m.Run()
	stopPreflights()
	if manager != nil {
		manager.Stop()
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

func zapLevel() int8 {
	if os.Getenv("TEST_VERBOSE_MANAGER") != "" {
		return -1
	}
	return 1 // errors only: reconcile logs would drown the test output
}

// testTimeouts are short so every deadline path finishes within seconds.
var testTimeouts = decide.Timeouts{
	Provisioning: time.Minute,
	RunnersReady: time.Minute,
	RunGrace:     time.Minute,
	RunUnknown:   time.Minute,
	Collection:   10 * time.Second,
}

// testOrphanGrace is how long an orphaned target is left before the sweeper deletes it.
const testOrphanGrace = 3 * time.Second

// startManager runs a manager with the reconciler until stop; tests restart it to prove a
// reconcile that starts from nothing but the world creates nothing twice.
func startManager() (*testenv.Manager, error) {
	return startManagerOn(env)
}

// startManagerOn runs the manager against the control plane of e.
func startManagerOn(e *testenv.Env) (*testenv.Manager, error) {
	return startManagerIn(e, controller.Namespaces{})
}

// startManagerIn runs the manager against the control plane of e, working in ns: with watched
// namespaces as a namespaced install, with its RBAC only, and the CapacityPlan controller too,
// to show its watches need no more.
func startManagerIn(e *testenv.Env, ns controller.Namespaces) (*testenv.Manager, error) {
	return testenv.StartManagerIn(e, ns, ctrl.Options{
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(cfg, opts)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, writes.funcs()), nil
		},
	}, func(mgr ctrl.Manager, kueue bool) error {
		// The sweeper runs as in main, with a grace the tests can wait out.
		if err := orphans.New(mgr, orphans.Options{Namespaces: ns, Grace: testOrphanGrace}).SetupWithManager(mgr); err != nil {
			return err
		}
		if len(ns.Watch) > 0 {
			if err := capacityplan.New(mgr, capacityplan.Options{TargetNamespace: ns.Target}).SetupWithManager(mgr); err != nil {
				return err
			}
		}
		rec := New(mgr, runenv.Options{
			RunnerAPI:         runner,
			Logs:              logs,
			Stats:             stats,
			RunnerImage:       "fleetbench/runner:test",
			Timeouts:          testTimeouts,
			PodLevelResources: true,
			ProgressInterval:  time.Second,
			// The kubelet's retries are played, not waited for.
			PullRetryGrace:  5 * time.Second,
			TargetNamespace: ns.Target,
			Workers:         testWorkers,
			Kueue:           kueue,
			// tenancy_test.go: what targets may reach, and the labels they take from their tenant.
			EgressAllowList:          testEgressAllowList,
			PropagateNamespaceLabels: []string{"team", "cost-center"},
		})
		if e == env && len(ns.Watch) == 0 {
			mainReconciler.Store(rec)
		}
		return rec.SetupWithManager(mgr)
	})
}

// testEgressAllowList is the suite's --egress-allow-list.
var testEgressAllowList = target.EgressAllowList{netip.MustParsePrefix("10.0.0.0/8")}

// mainReconciler is the reconciler of the suite's main manager, for what only memory shows.
var mainReconciler atomic.Pointer[Reconciler]

// testWorkers is the manager's reconcile workers; DefaultWorkers when zero (see oneWorker).
var testWorkers int

// restartManager stops the manager and starts a fresh one, with empty caches and queues.
func restartManager(t *testing.T) { t.Helper(); manager = manager.Restart(t) }

// writeCounter counts the API writes the reconciler makes, per TestRun namespace.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]*atomic.Int64
	// faults fail chosen writes (replace_kept_test.go).
	faults []writeFault
}

func (w *writeCounter) add(ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts == nil {
		w.counts = map[string]*atomic.Int64{}
	}
	if w.counts[ns] == nil {
		w.counts[ns] = &atomic.Int64{}
	}
	w.counts[ns].Add(1)
}

// count is the writes made in a TestRun's namespace plus its target namespace.
func (w *writeCounter) count(namespaces ...string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, ns := range namespaces {
		if c := w.counts[ns]; c != nil {
			n += c.Load()
		}
	}
	return n
}

func (w *writeCounter) funcs() interceptor.Funcs {
	nsOf := func(o client.Object) string {
		if ns, ok := o.(*corev1.Namespace); ok {
			return ns.Name
		}
		return o.GetNamespace()
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			w.add(nsOf(o))
			if err := w.fault("create", o); err != nil {
				return err
			}
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			w.add(nsOf(o))
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			w.add(nsOf(o))
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			w.add(nsOf(o))
			if err := w.fault("delete", o); err != nil {
				return err
			}
			return c.Delete(ctx, o, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			w.add(nsOf(o))
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			w.add(nsOf(o))
			if err := w.fault("patch "+sub, o); err != nil {
				return err
			}
			if err := refusedStatus(o); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	}
}
