//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// noisyScript is arrivalScript logging 4 KB per request: 8 MB per runner in 20 s, rotated by
// make e2e's kubelets (containerLogMaxSize 1Mi) while the runners run. Each VU's first line
// is a marker that rotation takes out of the log the kubelet serves.
const noisyScript = `import http from 'k6/http';
export const options = {
  scenarios: {
    load: { executor: 'constant-arrival-rate', rate: 200, timeUnit: '1s', duration: '20s', preAllocatedVUs: 100 },
  },
};
const noise = 'x'.repeat(4000);
export default function () {
  if (__ITER === 0) { console.log('fleetbench-first-line'); }
  http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `);
  console.log(noise);
}
`

// TestEnvelopeSurvivesLogRotation: the runners' logs are rotated under them, and their
// thresholds are crossed (k6 exits 99, a test error in the final envelope): the results are
// still complete and equal to what nginx served, because they never depended on the log.
func TestEnvelopeSurvivesLogRotation(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-logrotation")
	run := tw.MakeTestRun("noisy", ns).Inline(noisyScript).Parallelism(2).
		Threshold("http_req_duration", "p(95)<0.001"). // crossed: exit 99 on every runner
		Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
	got := e.run(t, run, 3*time.Minute)
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Verdict != v1alpha1.VerdictFailed {
		t.Fatalf("%s/%s verdict %s, want Succeeded with the threshold FAILED: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, got.Status.Message)
	}
	r := got.Status.Results
	if r == nil || r.Requests == nil || r.Partial {
		t.Fatalf("results %+v, want complete", r)
	}
	served := e.nginxRequests(t, naming.TargetNamespace(ns, run.Name), "web") - 1 // minus this read
	if r.Requests.Total != served {
		t.Errorf("results.requests.total %d != %d requests nginx served", r.Requests.Total, served)
	}
	// The rotation happened: the markers are no longer in the log the kubelet serves.
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(run))); err != nil || len(pods.Items) != 2 {
		t.Fatalf("runner pods: %v (%d)", err, len(pods.Items))
	}
	for _, pod := range pods.Items {
		log, err := e.cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: runners.ContainerName}).DoRaw(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("runner %s: %d bytes of log served after rotation", pod.Name, len(log))
		if strings.Contains(string(log), "fleetbench-first-line") {
			t.Errorf("runner %s's log was not rotated (the first lines are still served); the test shows nothing", pod.Name)
		}
	}
}
