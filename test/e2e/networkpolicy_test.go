//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestNetworkPolicyAdmitsOnlyTheRunners: the target's NetworkPolicy, enforced by the local
// cluster's policy controller (hack/e2e/run.sh boots it with FLEETBENCH_NETPOL=1), lets the
// TestRun's runners in and keeps every other pod out: after the run, a client carrying the
// runner labels is served by the target, the same client without them is refused.
func TestNetworkPolicyAdmitsOnlyTheRunners(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-netpol")
	run := tw.MakeTestRun("fenced", ns).
		Devices(100, "10s").Duration("10s").
		Inline(getRoot).
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
		Cleanup(v1alpha1.TargetKeepUntilDeleted).
		Obj()
	got := e.run(t, run, 4*time.Minute)
	// The runners reached the target through the policy.
	requirePassed(t, got)
	if req := got.Status.Results.Requests; req.Accepted == 0 || req.Accepted != req.Total {
		t.Fatalf("requests = %+v, want every one accepted", req)
	}

	url := fmt.Sprintf("http://web.%s.svc/", got.Status.TargetNamespace)
	runnerLabels := map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleRunner}
	e.fetchJob(t, ns, "runner-like", runnerLabels, url, 20)
	e.fetchJob(t, ns, "outsider", nil, url, 3)
	if status := e.jobOutcome(t, ns, "runner-like"); status != batchv1.JobComplete {
		t.Errorf("a pod with the runner labels was not served: %s", status)
	}
	if status := e.jobOutcome(t, ns, "outsider"); status != batchv1.JobFailed {
		t.Fatalf("a pod without the runner labels reached the target (%s): the cluster does not enforce NetworkPolicy "+
			"(the local cluster does with FLEETBENCH_NETPOL=1 hack/cluster/up.sh)", status)
	}
	logs := e.jobLogs(t, ns, "outsider")
	if !strings.Contains(logs, "connection refused") && !strings.Contains(logs, "timeout") {
		t.Errorf("the outsider failed for another reason than the policy: %s", logs)
	}
	t.Logf("outsider: %s", strings.TrimSpace(logs))
}

// fetchJob runs fleetbench/fbget once against url from a pod with labels.
func (e *env) fetchJob(t *testing.T, ns, name string, labels map[string]string, url string, attempts int) {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To[int64](90),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "fbget", Image: "fleetbench/fbget:dev", ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{"-url", url, "-expect", "fleetbench nginx ok", "-attempts", fmt.Sprint(attempts)}}},
				},
			},
		},
	}
	if err := e.c.Create(e.ctx, job); err != nil {
		t.Fatal(err)
	}
}

// jobOutcome waits for the Job to complete or fail.
func (e *env) jobOutcome(t *testing.T, ns, name string) batchv1.JobConditionType {
	t.Helper()
	var outcome batchv1.JobConditionType
	e.eventually(t, "Job "+name+" to finish", 2*time.Minute, func() (bool, string) {
		var job batchv1.Job
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
			return false, err.Error()
		}
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				outcome = c.Type
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", job.Status)
	})
	return outcome
}

func (e *env) jobLogs(t *testing.T, ns, name string) string {
	t.Helper()
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": name}); err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods of Job %s: %d, %v", name, len(pods.Items), err)
	}
	raw, err := e.cs.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
