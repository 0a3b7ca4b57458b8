package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"fleetbench.dev/fleetbench/internal/controller"
)

// Manager is a controller manager running against an envtest control plane, until Stop.
type Manager struct {
	cancel context.CancelFunc
	done   chan struct{}
	// Cache is the manager's informer cache, for tests that check what it holds.
	Cache cache.Cache
	// restart starts the same manager again.
	restart func() (*Manager, error)
}

// Setup registers the controllers on mgr; kueue is whether Kueue's API is served, asked once
// when the manager starts (controller.KueueServed), as main asks it: the TestRun controller
// takes it as testrun.Options.Kueue, so its watches agree with the cache.
type Setup func(mgr ctrl.Manager, kueue bool) error

// StartManager runs a manager with the operator's cache options (and opts' client, where
// set), acting with the operator's generated ClusterRole only (AsManager), and the controllers
// setup registers. Tests restart managers to prove a reconcile that
// starts from nothing but the world creates nothing twice.
func StartManager(e *Env, opts ctrl.Options, setup Setup) (*Manager, error) {
	return StartManagerIn(e, controller.Namespaces{}, opts, setup)
}

// StartManagerIn is StartManager for a manager that works in ns; with watched namespaces it is
// a namespaced install, acting with that install's Roles and ClusterRole only
// (AsNamespacedManager).
func StartManagerIn(e *Env, ns controller.Namespaces, opts ctrl.Options, setup Setup) (*Manager, error) {
	opts.Scheme = e.Scheme
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.Cache = controller.CacheOptions(ns)
	// Restarts register the same controllers again in this process.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	as := AsManager
	if len(ns.Watch) > 0 {
		as = func(e *Env) (*rest.Config, error) { return AsNamespacedManager(e, ns) }
	}
	cfg, err := as(e)
	if err != nil {
		return nil, err
	}
	kueue, err := controller.KueueServed(cfg)
	if err != nil {
		return nil, err
	}
	opts.Cache = controller.WithKueue(opts.Cache, kueue)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := setup(mgr, kueue); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cancel: cancel, done: make(chan struct{}), Cache: mgr.GetCache(),
		restart: func() (*Manager, error) { return StartManagerIn(e, ns, opts, setup) }}
	go func() {
		defer close(m.done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m, nil
}

// Restart stops the manager and starts a fresh one, with empty caches and queues.
func (m *Manager) Restart(t testing.TB) *Manager {
	t.Helper()
	m.Stop()
	next, err := m.restart()
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// Eventually retries check until it passes or 30 s pass.
func Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

// Stop stops the manager and waits for it.
func (m *Manager) Stop() {
	m.cancel()
	<-m.done
}
