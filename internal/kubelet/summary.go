// Package kubelet reads a node's summary (/stats/summary) from its kubelet directly, as a
// ServiceAccount that may do nothing else (nodes/stats get). The API server's node proxy
// (nodes/proxy get) would need no network path to the node, but that permission also opens the
// kubelet's exec and attach endpoints; nodes/stats opens only /stats.
//
// The request carries a bearer token, so the kubelet must prove who it is: its serving
// certificate is verified against a CA (the cluster's, or --kubelet-ca-file), never skipped.
// The token is not the manager's own but one minted (TokenRequest) for a separate
// ServiceAccount, so whatever answers at a node's address learns a token good for node stats
// only.
package kubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	// tokenSeconds is the shortest lifetime TokenRequest grants; the token is renewed at half.
	tokenSeconds = 600
	// defaultPort is the kubelet's, where the node's status names none.
	defaultPort = 10250
	// callTimeout bounds one summary read; dialTimeout a node that drops packets, so auto's
	// fallback to metrics.k8s.io is not held up long.
	callTimeout = 10 * time.Second
	dialTimeout = 3 * time.Second
)

// Summaries reads kubelet summaries. Its zero value is not usable: New.
type Summaries struct {
	clientset kubernetes.Interface
	identity  types.NamespacedName
	maxAnswer int64
	http      *http.Client

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// New reads summaries as the ServiceAccount identity, whose tokens clientset (the manager's
// own) requests; kubelets' serving certificates must chain to roots. Answers past maxAnswer
// bytes are errors.
func New(clientset kubernetes.Interface, identity types.NamespacedName, roots *x509.CertPool, maxAnswer int64) *Summaries {
	transport := &http.Transport{
		// A node's address is dialled as it is: no HTTP_PROXY in between.
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: dialTimeout,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     time.Minute,
	}
	return &Summaries{
		clientset: clientset,
		identity:  identity,
		maxAnswer: maxAnswer,
		http: &http.Client{
			Transport: transport,
			// A redirect would carry the token elsewhere: a 3xx is an error.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Summary is node's /stats/summary.
func (s *Summaries) Summary(ctx context.Context, node string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	host, err := s.address(ctx, node)
	if err != nil {
		return nil, err
	}
	token, err := s.bearer(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+"/stats/summary", http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		var unknown x509.UnknownAuthorityError
		var hostname x509.HostnameError
		var verify *tls.CertificateVerificationError
		if errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &verify) {
			return nil, fmt.Errorf("the kubelet of node %s (%s) has a serving certificate the manager cannot verify: %w; give the manager "+
				"the CA that signs kubelet serving certificates (--kubelet-ca-file, chart value kubeletCA), or measure with --target-metrics=metrics-api", node, host, err)
		}
		return nil, fmt.Errorf("reading the summary of node %s from its kubelet (%s): %w", node, host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		if resp.StatusCode == http.StatusUnauthorized {
			s.forget(token) // e.g. the ServiceAccount was made again: the next read asks anew
		}
		return nil, fmt.Errorf("the kubelet of node %s answered %d to ServiceAccount %s: that ServiceAccount needs get on nodes/stats "+
			"(the kubelet-stats ClusterRole of config/rbac and the chart), and the kubelet webhook authentication and authorization", node, resp.StatusCode, s.identity)
	default:
		return nil, fmt.Errorf("the kubelet of node %s (%s) answered %d to /stats/summary", node, host, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, s.maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the summary of node %s: %w", node, err)
	}
	if int64(len(b)) > s.maxAnswer {
		return nil, fmt.Errorf("the summary of node %s is larger than %d bytes", node, s.maxAnswer)
	}
	return b, nil
}

// address is host:port of node's kubelet, from the Node's status (nodes list: the manager's
// ClusterRole has no nodes get).
func (s *Summaries) address(ctx context.Context, node string) (string, error) {
	list, err := s.clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	if err != nil {
		return "", fmt.Errorf("looking up node %s: %w", node, err)
	}
	if len(list.Items) != 1 {
		return "", fmt.Errorf("node %s not found", node)
	}
	return Address(&list.Items[0])
}

// Address is host:port of n's kubelet: its first InternalIP, else InternalDNS or Hostname, at
// the port its status names. The certificate is verified for that very name.
func Address(n *corev1.Node) (string, error) {
	port := int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port == 0 {
		port = defaultPort
	}
	for _, typ := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeInternalDNS, corev1.NodeHostName} {
		for _, a := range n.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return net.JoinHostPort(a.Address, strconv.Itoa(port)), nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no InternalIP, InternalDNS or Hostname address in its status", n.Name)
}

// bearer is a token of the identity, requested anew once half its life is gone.
func (s *Summaries) bearer(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.token != "" && now.Before(s.renewAt) {
		return s.token, nil
	}
	tr, err := s.clientset.CoreV1().ServiceAccounts(s.identity.Namespace).CreateToken(ctx, s.identity.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](tokenSeconds)}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s, which reads kubelet summaries: %w; it must exist, and the manager "+
			"needs create on its serviceaccounts/token (the kubelet-token Role of config/rbac and the chart)", s.identity, err)
	}
	s.token = tr.Status.Token
	s.renewAt = now.Add(tr.Status.ExpirationTimestamp.Sub(now) / 2)
	return s.token, nil
}

func (s *Summaries) forget(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token = ""
	}
}

// ParseIdentity reads "namespace/name" (--kubelet-stats-identity).
func ParseIdentity(v string) (types.NamespacedName, error) {
	ns, name, _ := strings.Cut(v, "/")
	if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return types.NamespacedName{}, fmt.Errorf("%q is not namespace/name of a ServiceAccount", v)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
