//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

// scraper is the ServiceAccount the tests scrape the manager's metrics as: the metrics are
// served over HTTPS to tokens allowed to get /metrics only (the chart's metrics-reader role),
// so this one is bound to it, as a cluster's Prometheus would be.
const scraper = "fleetbench-e2e-scraper"

// managerMetrics reads the manager's /metrics as a scraper does: with a token of a
// ServiceAccount bound to the chart's <fullname>-metrics-reader, over HTTPS (a self-signed
// certificate), through a port-forward to a manager pod (the API server's service proxy would
// not pass the token on).
func (e *env) managerMetrics(fullname string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scraper, Namespace: managerNamespace}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: scraper},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: fullname + "-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: scraper, Namespace: managerNamespace}}}
	for _, o := range []interface {
		GetName() string
	}{sa, binding} {
		var err error
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			_, err = e.cs.CoreV1().ServiceAccounts(managerNamespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = e.cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
	}
	token, err := e.cs.CoreV1().ServiceAccounts(managerNamespace).CreateToken(ctx, scraper,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}

	pods, err := e.cs.CoreV1().Pods(managerNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil {
		return nil, err
	}
	var pod *corev1.Pod
	port := int32(0)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || !p.DeletionTimestamp.IsZero() {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == "metrics" {
					pod, port = p, cp.ContainerPort
				}
			}
		}
	}
	if pod == nil {
		return nil, fmt.Errorf("no running manager pod with a metrics port in %s", managerNamespace)
	}
	local, stop, err := e.portForward(pod, port)
	if err != nil {
		return nil, err
	}
	defer stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", local), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token.Status.Token)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics as %s answered %d: %.200s", scraper, resp.StatusCode, body)
	}
	return body, nil
}

// portForward forwards a free local port to pod's port until stop.
func (e *env) portForward(pod *corev1.Pod, port int32) (local uint16, stop func(), err error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return 0, nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	target := e.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, &url.URL{Scheme: target.Scheme, Host: target.Host, Path: target.Path})
	stopCh, ready := make(chan struct{}), make(chan struct{})
	var errOut strings.Builder
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stopCh, ready, io.Discard, &errOut)
	if err != nil {
		return 0, nil, err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return 0, nil, fmt.Errorf("port-forward to %s: %v %s", pod.Name, err, errOut.String())
	case <-time.After(30 * time.Second):
		close(stopCh)
		return 0, nil, fmt.Errorf("port-forward to %s: not ready within 30 s %s", pod.Name, errOut.String())
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stopCh)
		return 0, nil, fmt.Errorf("port-forward to %s: no local port: %v", pod.Name, err)
	}
	return ports[0].Local, func() { close(stopCh) }, nil
}
