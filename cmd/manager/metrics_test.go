package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/internal/testenv"
)

// TestMetricsNeedAnAuthorizedToken serves the metrics as main does, with the manager's
// generated ClusterRole only (it must be allowed to review tokens), on a real API server: a
// scrape without a token is refused 401, one with a token not allowed to get /metrics 403,
// and one bound to config/rbac's metrics reader role gets the metrics.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	e, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cfg, err := testenv.AsManager(e)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: e.Scheme, Metrics: metricsOptions(addr, true, ""), HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(run) }()
	t.Cleanup(func() { stop(); <-done })

	// The scrapers: ServiceAccounts with tokens, one bound to the metrics reader role.
	admin := kubernetes.NewForConfigOrDie(e.Config)
	const ns = "monitoring"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{}
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, reader); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(sa string) string {
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	prometheus, tenant := token("prometheus"), token("tenant")
	if err := testenv.WaitAllowed(e.Client, "system:serviceaccount:"+ns+":prometheus", "", reader.Rules); err != nil {
		t.Fatal(err)
	}

	// The certificate is self-signed: the scrapers skip verification, as the chart's monitors do.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	// Until the server listens.
	testenv.Eventually(t, "the metrics server listens", func() error { _, _, err := scrape(""); return err })

	for _, c := range []struct {
		who   string
		token string
		code  int
	}{
		{"no token", "", http.StatusUnauthorized},
		// controller-runtime's filter answers 500 when the TokenReview reports an error for it.
		{"a token the API server does not know", "not-a-token", 0},
		{"a ServiceAccount not allowed to get /metrics", tenant, http.StatusForbidden},
		{"a ServiceAccount bound to the metrics reader role", prometheus, http.StatusOK},
	} {
		code, body, err := scrape(c.token)
		if err != nil {
			t.Fatalf("%s: %v", c.who, err)
		}
		if code != c.code && (c.code != 0 || code < 400) {
			t.Errorf("%s: answered %d, want %d (0: any refusal): %.200s", c.who, code, c.code, body)
		}
		if has := strings.Contains(body, "controller_runtime_"); has != (c.code == http.StatusOK) {
			t.Errorf("%s: metrics served: %v, want %v", c.who, has, c.code == http.StatusOK)
		}
	}

	// Plain HTTP, for a manager bound to the loopback address only, is no longer what main serves.
	if !metricsOptions(":8443", true, "").SecureServing || metricsOptions("127.0.0.1:8080", false, "").SecureServing {
		t.Errorf("metricsOptions: secure must serve HTTPS and insecure plain HTTP")
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
}
