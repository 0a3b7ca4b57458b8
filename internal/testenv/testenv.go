// Package testenv starts a real kube-apiserver and etcd (controller-runtime's envtest) with
// fleetbench's CRDs installed, for integration tests.
package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	fleetbenchv1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Env is a running control plane with a client that knows fleetbench's kinds.
type Env struct {
	*envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
}

// RepoRoot is the repository's top folder, found from this source file.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Option changes the control plane Start boots.
type Option func(*envtest.Environment)

// WithAPIServerFlag sets a kube-apiserver flag, e.g. feature-gates.
func WithAPIServerFlag(name, value string) Option {
	return func(e *envtest.Environment) { e.ControlPlane.GetAPIServer().Configure().Set(name, value) }
}

// Start boots kube-apiserver and etcd with the CRDs from config/crd/bases.
// The binaries come from KUBEBUILDER_ASSETS, or from bin/k8s/<KUBE_VERSION> where
// hack/build-kube.sh puts them; a missing binary is an error that says how to build it.
func Start(opts ...Option) (*Env, error) {
	root := RepoRoot()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		version, err := pinnedKubeVersion(root)
		if err != nil {
			return nil, err
		}
		if err := os.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "bin", "k8s", version)); err != nil {
			return nil, err
		}
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("envtest needs %s in %s: run `make envtest-assets` (or hack/build-kube.sh) first: %w", bin, assets, err)
		}
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := fleetbenchv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	for _, opt := range opts {
		opt(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// pinnedKubeVersion reads KUBE_VERSION from hack/versions.env, the one place versions are pinned.
func pinnedKubeVersion(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "KUBE_VERSION="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("KUBE_VERSION not found in hack/versions.env")
}

// WithKueueCRDs installs Kueue's Workload, LocalQueue and ResourceFlavor CRDs, from the Kueue module go.mod pins
// (no copy is kept here): the control plane then serves Kueue's API as a cluster with Kueue
// does, and a test plays Kueue's admission by writing the Workload's status.
func WithKueueCRDs() Option {
	return func(e *envtest.Environment) {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
		dir := strings.TrimSpace(string(out))
		if err != nil || dir == "" {
			// Left to envtest to report: ErrorIfCRDPathMissing fails the start naming the path.
			dir = "sigs.k8s.io/kueue (go list -m failed: run go mod download)"
		}
		for _, kind := range []string{"workloads", "localqueues", "resourceflavors"} {
			e.CRDDirectoryPaths = append(e.CRDDirectoryPaths, filepath.Join(dir, "config", "components", "crd", "bases", "kueue.x-k8s.io_"+kind+".yaml"))
		}
	}
}
