package plugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
)

// The suite runs the plugin against a real kube-apiserver and etcd with fleetbench's CRDs and no
// controller: the tests play the operator, writing status through the status subresource, and
// the plugin reaches the API server through a kubeconfig file, as kubectl would.
var (
	env        *testenv.Env
	kubeconfig string
	ctx        = context.Background()
)

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	_ = env.Stop()
	os.Exit(code)
}

func runSuite(m *testing.M) (int, error) {
	user, err := env.AddUser(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return 0, err
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "plugin-kubeconfig-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// syncBuffer is an output the plugin writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// result of one plugin invocation.
type result struct {
	code           int
	stdout, stderr string
}

// plugin runs `kubectl fleetbench ARGS -n NS` to its end.
func plugin(t *testing.T, ns string, args ...string) result {
	t.Helper()
	return start(t, ns, args...).wait(t)
}

// running is a plugin invocation in progress.
type running struct {
	out, errOut *syncBuffer
	done        chan int
}

func start(t *testing.T, ns string, args ...string) *running {
	t.Helper()
	r := &running{out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan int, 1)}
	args = append(args, "--kubeconfig", kubeconfig, "-n", ns)
	go func() {
		r.done <- Run(ctx, args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: r.out, ErrOut: r.errOut})
	}()
	return r
}

func (r *running) wait(t *testing.T) result {
	t.Helper()
	select {
	case code := <-r.done:
		return result{code: code, stdout: r.out.String(), stderr: r.errOut.String()}
	case <-time.After(60 * time.Second):
		t.Fatalf("the plugin did not end; output so far:\n%s\nstderr:\n%s", r.out.String(), r.errOut.String())
	}
	return result{}
}

// waitOutput waits until the plugin printed want.
func (r *running) waitOutput(t *testing.T, want string) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("output %q", want), func() error {
		select {
		case code := <-r.done:
			r.done <- code
			return fmt.Errorf("the plugin ended with %d; stdout:\n%s\nstderr:\n%s", code, r.out.String(), r.errOut.String())
		default:
		}
		if !strings.Contains(r.out.String(), want) {
			return fmt.Errorf("not yet; stdout so far:\n%s", r.out.String())
		}
		return nil
	})
}

// namespace makes a namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plugin-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// setStatus changes a TestRun's status as the operator would, through the status subresource.
func setStatus(t *testing.T, ns, name string, change func(*v1alpha1.TestRunStatus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return err
		}
		change(&run.Status)
		return env.Client.Status().Update(ctx, run)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitExists waits until the TestRun exists (created by the plugin).
func waitExists(t *testing.T, ns, name string) {
	t.Helper()
	testenv.Eventually(t, "testrun "+name, func() error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.TestRun{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("not created yet")
		}
		return err
	})
}
