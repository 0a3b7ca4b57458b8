//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestSSLBenchmarkThroughApacheToMariaDB is seed 000's C1 machine as the seed built it: Apache
// serving HTTPS in front of the device daemon, MariaDB behind it, all in one C1 under the
// restricted Pod Security level. Every push k6 saw accepted over TLS is in MariaDB, as the
// backend counts it; the three components shared one pod-level budget.
func TestSSLBenchmarkThroughApacheToMariaDB(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-ssl")
	run := tw.MakeTestRun("bench-ssl-c1", ns).
		Components(
			v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Engine: "apache", TLS: ptr.To(true),
				Env: []corev1.EnvVar{{Name: "PROXY_PASS", Value: "$(TARGET_APP_URL)"}}},
			v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					{Name: "DATABASE_URL", Value: "mysql://fleetbench:fleetbench@$(TARGET_DB_HOST):$(TARGET_DB_PORT)/fleetbench"},
					{Name: "WORKERS", Value: "2"},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2},
			},
			v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Engine: "mariadb"},
		).
		// 10 pushes/s for 30 s over TLS; the generated certificate is self-signed.
		Devices(1000, "100s").Duration("30s").
		Inline("export const options = { insecureSkipTLSVerify: true };\n"+devicePush).
		Parallelism(2).
		Threshold("http_req_failed", "rate<0.01").
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
		Cleanup(v1alpha1.TargetKeepUntilDeleted).
		Obj()
	got := e.run(t, run, 5*time.Minute)
	requirePassed(t, got)
	targetNS := got.Status.TargetNamespace
	r := got.Status.Results
	if r.Requests.Total < 270 || r.Requests.Total > 330 || r.Requests.Dropped != 0 || r.Checks == nil || r.Checks.Failed != 0 {
		t.Errorf("requests = %+v checks %+v, want about 300, none dropped or failed", r.Requests, r.Checks)
	}
	if got.Status.Target == nil || got.Status.Target.Memory == nil || got.Status.Target.Restarts != 0 {
		t.Errorf("target measurements = %+v", got.Status.Target)
	}
	stored := e.storedPushes(t, got.Status.TargetNamespace)
	t.Logf("accepted %d pushes over TLS, the backend stored %d in MariaDB; latency p95 %s", r.Requests.Accepted, stored, r.Latency.P95)
	if stored != r.Requests.Accepted {
		t.Errorf("the backend stored %d pushes, status says %d accepted", stored, r.Requests.Accepted)
	}

	// How the stack ran: restricted Pod Security enforced, one pod holding the whole profile,
	// every container as a non-root user the kubelet verified.
	var nsObj corev1.Namespace
	if err := e.c.Get(e.ctx, client.ObjectKey{Name: targetNS}, &nsObj); err != nil {
		t.Fatal(err)
	}
	if nsObj.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("target namespace labels = %v", nsObj.Labels)
	}
	var stack appsv1.Deployment
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: targetNS, Name: "target-stack"}, &stack); err != nil {
		t.Fatal(err)
	}
	if res := stack.Spec.Template.Spec.Resources; res == nil || res.Limits.Memory().String() != "512Mi" || res.Limits.Cpu().String() != "1" {
		t.Errorf("stack pod resources = %+v, want C1's 1 CPU / 512Mi on the pod", res)
	}
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(targetNS)); err != nil || len(pods.Items) != 1 {
		t.Fatalf("target pods: %d, %v", len(pods.Items), err)
	}
	for _, cs := range pods.Items[0].Status.ContainerStatuses {
		if !cs.Ready || cs.RestartCount != 0 {
			t.Errorf("container %s ready=%v restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
		}
	}
}

// TestXMPPRobotsHoldSessions is seed 003's robot against each built-in XMPP broker: accounts
// provisioned by the operator, sessions over WebSocket through the broker's Service, every
// session authenticated, bound, pinged and closed cleanly.
func TestXMPPRobotsHoldSessions(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "raja", "robot-session.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range xmppEngines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t)
			ns := e.namespace(t, "e2e-xmpp-"+engine)
			run := tw.MakeTestRun("robots", ns).
				Components(v1alpha1.Component{Name: "xmpp", Kind: v1alpha1.ComponentXMPPBroker, Engine: engine,
					XMPP: &v1alpha1.XMPPSettings{Users: 200, UserPrefix: "robot"}}).
				// 200 robots, each opening an 8 s session every 20 s: 10 logins/s, ~90 sessions held, so
				// 120 VUs are ready from the start (VUs made mid-run come too late and drop iterations).
				Devices(200, "20s").Duration("30s").PreAllocatedVUs(120).
				Inline(string(script)).
				Parallelism(2).
				RunnerEnv(
					corev1.EnvVar{Name: "XMPP_USER_PREFIX", Value: "robot"},
					corev1.EnvVar{Name: "HOLD_SECONDS", Value: "8"},
					corev1.EnvVar{Name: "PING_SECONDS", Value: "3"}).
				Threshold("checks", "rate==1").
				Threshold("xmpp_errors", "count==0").
				Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
				Obj()
			got := e.run(t, run, 5*time.Minute)
			requirePassed(t, got)
			r := got.Status.Results
			it := r.Iterations
			// 10 sessions/s for 30 s; the ones still open at the end finish (gracefulStop).
			if it == nil || it.Total < 270 || it.Total > 330 || it.Dropped != 0 {
				t.Errorf("iterations = %+v, want about 300 sessions and none dropped", it)
			}
			// Five checks per session: opened, authenticated, bound, pinged, closed cleanly.
			if r.Checks == nil || r.Checks.Failed != 0 || it == nil || r.Checks.Passed != 5*it.Total {
				t.Errorf("checks = %+v for %+v sessions, want 5 passed each", r.Checks, it)
			}
			target := got.Status.Target
			if target == nil || target.Memory == nil || target.Memory.BeforeMiB <= 0 || target.Restarts != 0 {
				t.Errorf("broker measurements = %+v", target)
			}
			t.Logf("%s: %d sessions, checks %+v, broker memory %+v", engine, it.Total, *r.Checks, target.Memory)
		})
	}
}

// xmppEngines are the brokers whose images hack/e2e/images.sh built.
func xmppEngines() []string {
	return []string{"prosody", "ejabberd"}
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "..", "..")
}

// storedPushes is the sample backend's own count of pushes it stored in its database.
func (e *env) storedPushes(t *testing.T, targetNS string) int64 {
	t.Helper()
	body := e.appMetrics(t, targetNS)
	match := storedMetric.FindStringSubmatch(body)
	if match == nil {
		t.Fatalf("no sut_pushes_stored_total in %s", body)
	}
	stored, _ := strconv.ParseInt(match[1], 10, 64)
	return stored
}

// appMetrics is the sample backend's /metrics page, read through the API server.
func (e *env) appMetrics(t *testing.T, targetNS string) string {
	t.Helper()
	path := fmt.Sprintf("/api/v1/namespaces/%s/services/app:8080/proxy/metrics", targetNS)
	body, err := e.cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return string(body)
}
