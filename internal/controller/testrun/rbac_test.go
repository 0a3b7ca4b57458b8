package testrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/internal/testenv"
)

// The suite's manager reconciles every TestRun acting with the generated ClusterRole alone
// (testenv.AsManager), so a verb it lacks fails the lifecycle tests. What the suite plays with
// fakes (the runner API, logs, target stats) and leader election are checked here: each raw
// call the real implementations make is allowed by exactly the role that should allow it.

// forbidden: the API server's authorizer refused the call (it answers before any backend,
// so an allowed call fails otherwise here: no kubelet, no metrics-server, no runner).
func forbidden(err error) bool {
	return apierrors.IsForbidden(err) || (err != nil && strings.Contains(err.Error(), "answered 403"))
}

func TestManagerRoleAllowsTheRawCallsItMakes(t *testing.T) {
	c := env.Client
	const user, ns = "fleetbench-manager-raw-calls", "rbac-raw-calls"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "runner", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "k6", Image: "k6"}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	cfg, err := testenv.AsManagerNamed(env, user)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	call, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()

	// pods/log get and metrics.k8s.io pods list are the manager's in every install.
	if _, err := (&runio.APILogReader{Clientset: cs}).Tail(call, pod, "k6", 10, false); err == nil || forbidden(err) {
		t.Errorf("reading a runner's log: want an error past authorization (no kubelet), got %v", err)
	}
	if _, err := (&runio.APITargetStats{Clientset: cs}).PodMetrics(call, ns); !apierrors.IsNotFound(err) {
		t.Errorf("listing pod metrics: want NotFound (no metrics-server) past authorization, got %v", err)
	}

	// pods/proxy is not in the manager's ClusterRole: the chart grants it apart, where it is
	// used. Kubelet summaries are read as another identity (internal/kubelet's tests).
	proxied, err := runio.NewProxyRunnerAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"GET ready, /v1/status": func() error { return proxied.Warm(call, pod) },
		"POST /v1/setup":        func() error { _, err := proxied.Setup(call, pod); return err },
		"PATCH /v1/status":      func() error { return proxied.Resume(call, pod) },
		"PUT /v1/setup":         func() error { return proxied.SetSetupData(call, pod, []byte(`{}`)) },
	}
	for name, f := range calls {
		if err := f(); !forbidden(err) {
			t.Errorf("runner API %s through pods/proxy with the manager's ClusterRole alone: want forbidden, got %v", name, err)
		}
	}
	if err := testenv.Grant(env, user, "runner_proxy", ""); err != nil {
		t.Fatal(err)
	}
	for name, f := range calls {
		testenv.Eventually(t, "runner API "+name+" allowed by runner_proxy", func() error {
			if err := f(); err == nil || forbidden(err) {
				return errors.Join(errors.New("want an error past authorization (no runner)"), err)
			}
			return nil
		})
	}
}

// TestLeaderElectionNeedsOnlyItsRole: a manager acting with the generated ClusterRole and the
// leader election Role in its own namespace becomes leader; the ClusterRole alone holds no
// lease rights, so without the Role it never does.
func TestLeaderElectionNeedsOnlyItsRole(t *testing.T) {
	const own = "fleetbench-system"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: own}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	elected := func(user string, wait time.Duration) bool {
		cfg, err := testenv.AsManagerNamed(env, user)
		if err != nil {
			t.Fatal(err)
		}
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
			LeaderElection: true, LeaderElectionID: user, LeaderElectionNamespace: own, LeaderElectionReleaseOnCancel: true,
			LeaseDuration: ptr.To(4 * time.Second), RenewDeadline: ptr.To(3 * time.Second), RetryPeriod: ptr.To(200 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		run, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = mgr.Start(run) }()
		defer func() { stop(); <-done }()
		select {
		case <-mgr.Elected():
			return true
		case <-time.After(wait):
			return false
		}
	}
	if elected("fleetbench-manager-no-lease", 3*time.Second) {
		t.Errorf("a manager with the ClusterRole alone became leader: the ClusterRole holds lease rights")
	}
	const user = "fleetbench-manager-leader"
	if _, err := testenv.AsManagerNamed(env, user); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Grant(env, user, "leader_election", own); err != nil {
		t.Fatal(err)
	}
	if !elected(user, 20*time.Second) {
		t.Errorf("a manager with the leader election Role did not become leader within 20 s")
	}
}
