package zones

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nodePortService(name, ns string, port, nodePort int32) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: port, NodePort: nodePort}}}}
}

// TestExposedMovesEveryComponentToItsNodePort: other clusters reach each component at a home
// node's address and its Service's NodePort; the URL is the first one a runner may use.
func TestExposedMovesEveryComponentToItsNodePort(t *testing.T) {
	env := []corev1.EnvVar{
		{Name: "TARGET_DB_URL", Value: "postgres://fb-db.t1.svc:5432"}, {Name: "TARGET_DB_HOST", Value: "fb-db.t1.svc"}, {Name: "TARGET_DB_PORT", Value: "5432"},
		{Name: "TARGET_WEB_URL", Value: "http://fb-web.t1.svc:8080"}, {Name: "TARGET_WEB_HOST", Value: "fb-web.t1.svc"}, {Name: "TARGET_WEB_PORT", Value: "8080"},
	}
	svcs := []corev1.Service{nodePortService("fb-db", "t1", 5432, 31432), nodePortService("fb-web", "t1", 8080, 30080)}
	got, err := Exposed(env, svcs, "10.200.0.10")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != "http://10.200.0.10:30080" {
		t.Errorf("URL %q, want the web component's (postgres:// is no runner scheme)", got.URL)
	}
	want := map[string]string{
		"TARGET_DB_URL": "postgres://10.200.0.10:31432", "TARGET_DB_HOST": "10.200.0.10", "TARGET_DB_PORT": "31432",
		"TARGET_WEB_URL": "http://10.200.0.10:30080", "TARGET_WEB_HOST": "10.200.0.10", "TARGET_WEB_PORT": "30080",
	}
	if len(got.Env) != len(want) {
		t.Fatalf("env %v", got.Env)
	}
	for _, e := range got.Env {
		if want[e.Name] != e.Value {
			t.Errorf("%s=%q, want %q", e.Name, e.Value, want[e.Name])
		}
	}
	svcs[1].Spec.Ports[0].NodePort = 0
	if _, err := Exposed(env, svcs, "10.200.0.10"); err == nil || !strings.Contains(err.Error(), "no NodePort yet") {
		t.Errorf("a Service without its NodePort: %v", err)
	}
	if _, err := Exposed(env, svcs[:1], "10.200.0.10"); err == nil || !strings.Contains(err.Error(), "no Service exposes fb-web.t1.svc:8080") {
		t.Errorf("a component without its Service: %v", err)
	}
}
