package kubelet_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/internal/kubelet"
	"fleetbench.dev/fleetbench/internal/testenv"
)

const summaryJSON = `{"node":{"nodeName":"node-a"},"pods":[]}`

// fakeKubelet answers /stats/summary as a kubelet with webhook authentication and
// authorization does: a TokenReview of the bearer token, then a SubjectAccessReview of get on
// nodes/stats, both asked of the real API server.
type fakeKubelet struct {
	srv   *httptest.Server
	admin client.Client
	node  string

	mu       sync.Mutex
	requests int
	user     authenticationv1.UserInfo
}

func (k *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.requests++
	k.mu.Unlock()
	if r.URL.Path != "/stats/summary" {
		http.NotFound(w, r)
		return
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")}}
	if err := k.admin.Create(r.Context(), review); err != nil || !review.Status.Authenticated {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	k.mu.Lock()
	k.user = review.Status.User
	k.mu.Unlock()
	if !allowed(r.Context(), k.admin, review.Status.User, "get", "stats", k.node) {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	_, _ = w.Write([]byte(summaryJSON))
}

func (k *fakeKubelet) seen() (int, authenticationv1.UserInfo) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.requests, k.user
}

// allowed asks the API server whether user may verb nodes/subresource name.
func allowed(ctx context.Context, admin client.Client, user authenticationv1.UserInfo, verb, subresource, name string) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes", Subresource: subresource, Name: name},
	}}
	return admin.Create(ctx, sar) == nil && sar.Status.Allowed
}

// testCA signs a serving certificate for 127.0.0.1, as a cluster CA signs a kubelet's.
func testCA(t *testing.T) (*x509.CertPool, tls.Certificate) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, leafKey := key(), key()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test cluster CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "system:node:node-a"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	return roots, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
}

// node registers a Node whose kubelet is srv.
func node(t *testing.T, e *testenv.Env, name string, srv *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(p)
	if err := e.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}

var identity = types.NamespacedName{Namespace: "fleetbench-system", Name: "fleetbench-kubelet-stats"}

// TestSummaryIsReadAsTheStatsIdentity: a manager acting with its ClusterRole gets a summary from
// a kubelet only with the kubelet-token Role (it mints the stats ServiceAccount's tokens) and the
// stats ServiceAccount's nodes/stats ClusterRole (the kubelet's check), as config/rbac grants
// them; the kubelet sees that ServiceAccount, which may not use nodes/proxy.
func TestSummaryIsReadAsTheStatsIdentity(t *testing.T) {
	e, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	roots, cert := testCA(t)
	k := &fakeKubelet{admin: e.Client, node: "node-a"}
	k.srv = httptest.NewUnstartedServer(k)
	k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	node(t, e, "node-a", k.srv)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identity.Namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: identity.Name, Namespace: identity.Namespace}},
	} {
		if err := e.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	const user = "fleetbench-manager-kubelet"
	cfg, err := testenv.AsManagerNamed(e, user)
	if err != nil {
		t.Fatal(err)
	}
	s := kubelet.New(kubernetes.NewForConfigOrDie(cfg), identity, roots, 1<<20)

	_, err = s.Summary(ctx, "node-a")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "requesting a token of ServiceAccount fleetbench-system/fleetbench-kubelet-stats") {
		t.Errorf("with the manager's ClusterRole alone: want the TokenRequest forbidden, got %v", err)
	}
	if n, _ := k.seen(); n != 0 {
		t.Errorf("the kubelet was called %d times without a token", n)
	}

	if err := testenv.Grant(e, user, "kubelet_token", identity.Namespace); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the kubelet refuses a ServiceAccount without nodes/stats", func() error {
		if _, err := s.Summary(ctx, "node-a"); err == nil || !strings.Contains(err.Error(), "answered 403") {
			return errors.Join(errors.New("want the kubelet's 403"), err)
		}
		return nil
	})

	stats := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(readFile(t, "config/rbac/kubelet_stats/role.yaml"), stats); err != nil {
		t.Fatal(err)
	}
	stats.ObjectMeta = metav1.ObjectMeta{Name: "kubelet-stats"}
	for _, obj := range []client.Object{stats, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubelet-stats"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: stats.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: identity.Name, Namespace: identity.Namespace}},
	}} {
		if err := e.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "the summary read as the stats identity", func() error {
		b, err := s.Summary(ctx, "node-a")
		if err == nil && string(b) != summaryJSON {
			err = errors.New("the summary is " + string(b))
		}
		return err
	})
	_, seen := k.seen()
	if seen.Username != "system:serviceaccount:fleetbench-system:fleetbench-kubelet-stats" {
		t.Errorf("the kubelet saw %q, want the stats ServiceAccount", seen.Username)
	}
	for _, verb := range []string{"get", "create"} {
		if allowed(ctx, e.Client, seen, verb, "proxy", "node-a") {
			t.Errorf("the token the kubelet saw may %s nodes/proxy (the kubelet's exec)", verb)
		}
	}
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnverifiedKubeletGetsNoToken: whatever answers at a node's address with a certificate the
// manager's CA did not sign, or with a redirect, gets no token and no answer is used.
func TestUnverifiedKubeletGetsNoToken(t *testing.T) {
	e, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var tokens []string
	record := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, r.Header.Get("Authorization"))
	}
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		_, _ = w.Write([]byte(summaryJSON))
	}))
	t.Cleanup(impostor.Close)
	node(t, e, "node-b", impostor)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identity.Namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: identity.Name, Namespace: identity.Namespace}},
	} {
		if err := e.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	roots, cert := testCA(t)
	s := kubelet.New(kubernetes.NewForConfigOrDie(e.Config), identity, roots, 1<<20)
	if _, err := s.Summary(ctx, "node-b"); err == nil || !strings.Contains(err.Error(), "cannot verify") {
		t.Errorf("a kubelet certificate the CA did not sign: want an error saying it cannot be verified, got %v", err)
	}
	mu.Lock()
	if len(tokens) != 0 {
		t.Errorf("the impostor got %d requests, with tokens %q", len(tokens), tokens)
	}
	mu.Unlock()

	// A verified kubelet that redirects: the redirect is an error, and its target never called.
	elsewhere := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { record(r) }))
	t.Cleanup(elsewhere.Close)
	redirecting := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/stats/summary", http.StatusFound)
	}))
	redirecting.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	redirecting.StartTLS()
	t.Cleanup(redirecting.Close)
	node(t, e, "node-c", redirecting)
	if _, err := s.Summary(ctx, "node-c"); err == nil || !strings.Contains(err.Error(), "answered 302") {
		t.Errorf("a redirecting kubelet: want an error naming the 302, got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) != 0 {
		t.Errorf("the redirect's target got %d requests", len(tokens))
	}
}

func TestAddress(t *testing.T) {
	addr := func(typ corev1.NodeAddressType, a string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: typ, Address: a}
	}
	for _, c := range []struct {
		name  string
		addrs []corev1.NodeAddress
		port  int32
		want  string
	}{
		{"InternalIP first, the status's port", []corev1.NodeAddress{addr(corev1.NodeHostName, "n1"), addr(corev1.NodeExternalIP, "203.0.113.1"), addr(corev1.NodeInternalIP, "10.0.0.1")}, 10255, "10.0.0.1:10255"},
		{"no port: the kubelet's", []corev1.NodeAddress{addr(corev1.NodeInternalIP, "10.0.0.1")}, 0, "10.0.0.1:10250"},
		{"IPv6", []corev1.NodeAddress{addr(corev1.NodeInternalIP, "fd00::1")}, 0, "[fd00::1]:10250"},
		{"a hostname where there is no IP", []corev1.NodeAddress{addr(corev1.NodeExternalIP, "203.0.113.1"), addr(corev1.NodeHostName, "n1")}, 0, "n1:10250"},
		{"only an external address: none", []corev1.NodeAddress{addr(corev1.NodeExternalIP, "203.0.113.1")}, 0, ""},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port = c.addrs, c.port
		got, err := kubelet.Address(n)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestParseIdentity(t *testing.T) {
	for in, ok := range map[string]bool{
		"fleetbench-system/fleetbench-kubelet-stats": true, "ns/sa.name": true,
		"": false, "sa": false, "/sa": false, "ns/": false, "Ns/sa": false, "ns/sa/x": false,
	} {
		if _, err := kubelet.ParseIdentity(in); (err == nil) != ok {
			t.Errorf("ParseIdentity(%q): error %v, want ok %v", in, err, ok)
		}
	}
}
