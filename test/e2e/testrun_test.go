//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

const arrivalScript = `import http from 'k6/http';
export const options = {
  scenarios: {
    load: { executor: 'constant-arrival-rate', rate: 200, timeUnit: '1s', duration: '20s', preAllocatedVUs: 100 },
  },
};
export default function () { http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `); }
`

// TestConstantArrivalRateAgainstNginx runs the quickstart's shape (profile C1, nginx, 2
// runners, constant arrival rate) and checks the merged request count against the count
// nginx itself served.
func TestConstantArrivalRateAgainstNginx(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-arrival")
	run := tw.MakeTestRun("arrival", ns).Inline(arrivalScript).Parallelism(2).
		Threshold("http_req_duration", "p(95)<500").
		Threshold("http_req_failed", "rate<0.01").
		// A tag value with a space reaches k6 as one argument: every request carries it.
		Args("--tag", "team=a b").Threshold("http_reqs{team:a b}", "count>=3900").
		// Keep the target so nginx can be asked what it served.
		Cleanup(v1alpha1.TargetKeepUntilDeleted).
		Obj()
	// Registry credentials, as for a private registry: copied into the target's namespace and
	// named in its pods (the image is on the nodes already, so nothing is pulled with them).
	pull := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-cred", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.fleetbench.test":{"auth":"ZTJlOmUyZQ=="}}}`)}}
	if err := e.c.Create(e.ctx, pull); err != nil {
		t.Fatal(err)
	}
	run.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: pull.Name}}
	targetNS := naming.TargetNamespace(ns, run.Name)
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), targetNS)
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatalf("creating TestRun: %v", err)
	}

	// 20 s of load; about 10 s to provision and start and a few to collect on this machine.
	got, took := e.waitFinished(t, run, 3*time.Minute)
	t.Logf("TestRun %s finished %s/%s in %s", run.Name, got.Status.Phase, got.Status.Reason, took.Round(100*time.Millisecond))
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s (%s: %s), want Succeeded", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	if got.Status.Verdict != v1alpha1.VerdictPassed {
		t.Errorf("verdict %s, want PASSED", got.Status.Verdict)
	}
	wantConditions(t, got, v1alpha1.ConditionReady, v1alpha1.ConditionComplete)
	if got.Status.TargetNamespace != targetNS {
		t.Errorf("targetNamespace %q, want %q", got.Status.TargetNamespace, targetNS)
	}
	res := got.Status.Results
	if res == nil || res.Requests == nil || res.Latency == nil {
		t.Fatalf("results incomplete: %+v", res)
	}
	if res.Partial {
		t.Errorf("results are partial")
	}
	if res.Requests.Dropped != 0 {
		t.Errorf("requests dropped %d, want 0", res.Requests.Dropped)
	}
	if res.Iterations != nil && res.Iterations.Dropped != 0 {
		t.Errorf("iterations dropped %d, want 0", res.Iterations.Dropped)
	}
	if !positiveDuration(res.Latency.P95) {
		t.Errorf("latency p95 %q, want a duration > 0", res.Latency.P95)
	}
	// 200/s for 20 s, split over 2 runners: 4000 (k6 starts one at t=0, so up to 4001).
	if res.Requests.Total < 3900 || res.Requests.Total > 4001 {
		t.Errorf("requests total %d, want about 4000", res.Requests.Total)
	}
	if got.Status.Runners == nil || got.Status.Runners.StartSkew == "" {
		t.Errorf("status.runners.startSkew not set: %+v", got.Status.Runners)
	} else {
		t.Logf("runners %+v", *got.Status.Runners)
	}
	tagged := false
	for _, th := range res.Thresholds {
		if !th.Passed {
			t.Errorf("threshold %s %s failed at %s", th.Metric, th.Expression, th.Value)
		}
		tagged = tagged || th.Metric == "http_reqs{team:a b}"
	}
	if !tagged {
		t.Errorf("no result for the threshold on http_reqs{team:a b}: %+v", res.Thresholds)
	}
	copied := &corev1.Secret{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: targetNS, Name: pull.Name}, copied); err != nil {
		t.Errorf("the pull Secret was not copied into %s: %v", targetNS, err)
	} else if string(copied.Data[corev1.DockerConfigJsonKey]) != string(pull.Data[corev1.DockerConfigJsonKey]) {
		t.Errorf("the copied pull Secret differs from the TestRun's")
	}
	var targetPods corev1.PodList
	if err := e.c.List(e.ctx, &targetPods, client.InNamespace(targetNS)); err != nil || len(targetPods.Items) == 0 {
		t.Fatalf("target pods: %v", err)
	}
	if refs := targetPods.Items[0].Spec.ImagePullSecrets; len(refs) != 1 || refs[0].Name != pull.Name {
		t.Errorf("target pod imagePullSecrets %v, want %s", refs, pull.Name)
	}

	// What nginx served. stub_status counts every request it finished or is serving,
	// including the status request itself; the target's readiness probe is a TCP probe and
	// is not a request (checked below: nothing else moves the counter between two reads).
	probe := targetProbe(t, e, targetNS)
	if probe.HTTPGet != nil {
		t.Fatalf("the target's readiness probe is an HTTP probe, which nginx would count: %+v", probe)
	}
	first := e.nginxRequests(t, targetNS, "web")
	served := first - 1 // minus this read
	t.Logf("results.requests.total %d, nginx served %d (stub_status %d incl. the status read)", res.Requests.Total, served, first)
	if res.Requests.Total != served {
		t.Errorf("results.requests.total %d != %d requests nginx served", res.Requests.Total, served)
	}
	// Wait longer than two probe periods: only our own second read may count.
	wait := 2*time.Duration(max(probe.PeriodSeconds, 1))*time.Second + time.Second
	time.Sleep(wait)
	second := e.nginxRequests(t, targetNS, "web")
	if second != first+1 {
		t.Errorf("nginx counted %d requests in %s besides our status read: probes or stray traffic are counted", second-first-1, wait)
	}
}

func targetProbe(t *testing.T, e *env, ns string) *corev1.Probe {
	t.Helper()
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns)); err != nil || len(pods.Items) == 0 {
		t.Fatalf("target pods in %s: %v (%d)", ns, err, len(pods.Items))
	}
	p := pods.Items[0].Spec.Containers[0].ReadinessProbe
	if p == nil {
		t.Fatalf("target pod %s has no readiness probe", pods.Items[0].Name)
	}
	return p
}

// TestTargetThatNeverGetsReadyFails: a custom component whose image exists nowhere (no registry
// is reachable from the local cluster) ends Failed TargetImageNotPresent once its pull has kept
// failing through a minute of the kubelet's retries, before its provisioning deadline.
func TestTargetThatNeverGetsReadyFails(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-notready")
	// Long enough that only the image pull failing for a minute ends it.
	const provisioning = 2 * time.Minute
	run := tw.MakeTestRun("missing-image", ns).
		// Small and sized per component, so it schedules beside whatever else runs and
		// fails for its image alone.
		Sizing(v1alpha1.SizingPerComponent).
		Components(v1alpha1.Component{
			Name: "app", Kind: v1alpha1.ComponentCustom,
			Image: "fleetbench/does-not-exist:e2e",
			Ports: []corev1.ContainerPort{{Name: "main", ContainerPort: 8080}},
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
			},
		}).
		Inline("export default function () {}\n").
		Parallelism(1).
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: v1alpha1.Duration(provisioning.String())}).
		Obj()
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatalf("creating TestRun: %v", err)
	}
	got, took := e.waitFinished(t, run, provisioning+45*time.Second)
	t.Logf("TestRun %s finished %s/%s in %s", run.Name, got.Status.Phase, got.Status.Reason, took.Round(100*time.Millisecond))
	if got.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	if r := got.Status.Reason; r != v1alpha1.ReasonTargetImageNotPresent || !strings.Contains(got.Status.Message, "fleetbench/does-not-exist:e2e") {
		t.Errorf("reason %q (%s), want TargetImageNotPresent naming the image, before the provisioning deadline", r, got.Status.Message)
	}
	wantConditions(t, got, v1alpha1.ConditionStalled, v1alpha1.ConditionComplete)
	if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("a failed TestRun is Ready")
	}
	if got.Status.Verdict != v1alpha1.VerdictFailed {
		t.Errorf("verdict %q, want FAILED", got.Status.Verdict)
	}
	if got.Status.CompletionTime == nil {
		t.Errorf("completionTime not set")
	} else if late := got.Status.CompletionTime.Sub(got.CreationTimestamp.Time); late >= provisioning {
		t.Errorf("failed %s after creation, want before the provisioning deadline %s: a pull failing for a minute does not heal", late, provisioning)
	}
	// No runner may have been started for a target that never became Ready.
	if got.Status.StartTime != nil {
		t.Errorf("runners were started (startTime %s) although the target never became Ready", got.Status.StartTime)
	}
}

// wantConditions fails unless each condition is True: what kubectl wait and GitOps tools read.
func wantConditions(t *testing.T, run *v1alpha1.TestRun, types ...string) {
	t.Helper()
	for _, typ := range types {
		if !meta.IsStatusConditionTrue(run.Status.Conditions, typ) {
			t.Errorf("condition %s not True: %+v", typ, meta.FindStatusCondition(run.Status.Conditions, typ))
		}
	}
}
