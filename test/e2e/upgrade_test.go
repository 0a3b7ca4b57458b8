//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// Issue 28 item 3: the operator is upgraded, and restarted, during a run.

const (
	// upgradeTag is the manager image the upgrade rolls to: the same binary as :dev under a
	// second name (hack/e2e/images.sh tags it in every node's containerd), so the Deployment's
	// pod template changes and Kubernetes rolls the manager as it would for a new release.
	upgradeTag = "dev-upgrade"
	// releaseName and leaseName are hack/e2e/install.sh's release and cmd/manager's
	// LeaderElectionID.
	releaseName = "fleetbench"
	leaseName   = "fleetbench.dev"
)

// TestManagerUpgradedAndRestartedMidRun: a stability run of 80 s (seed 000's device model, nginx
// → sample backend → PostgreSQL) meets, while its load runs, a `helm upgrade` of the release to
// a new manager image (a rolling update: the new pod starts, the old one gets SIGTERM, hands
// the lease over and exits) and later a plain deletion of the manager pod (graceful, as a
// node drain or `kubectl rollout restart` ends it). The run must end Succeeded/PASSED with full
// counts: every push the runners saw accepted is in the backend's database, none is dropped,
// the results are not partial, no runner Job is made twice and the load is started once.
func TestManagerUpgradedAndRestartedMidRun(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-upgrade")
	run := stabilityRun(ns, "upgrade", "80s")
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	// Whatever happens, later tests get the release as install.sh left it (image tag dev).
	t.Cleanup(func() { e.helmSetManagerTag(t, "dev") })

	running := e.waitPhase(t, run, v1alpha1.PhaseRunning, 5*time.Minute)
	started := running.Status.StartTime.DeepCopy()
	time.Sleep(10 * time.Second)

	// 1. helm upgrade to a new manager image, mid-load.
	before := e.managerPodList(t)
	upgradeAt := time.Now()
	e.helmSetManagerTag(t, upgradeTag)
	holder := e.waitNewLeader(t, before, "fleetbench/manager:"+upgradeTag)
	t.Logf("upgraded: %s leads %s after the helm upgrade began (run %s)", holder, time.Since(upgradeAt).Round(time.Second), e.phaseOf(t, run))
	e.waitAdopted(t, run, "the upgraded manager")

	// 2. The manager pod deleted (with its grace period), later in the same load.
	if left := time.Until(started.Add(55 * time.Second)); left > 0 {
		time.Sleep(left)
	}
	before = e.managerPodList(t)
	for _, p := range before {
		if err := e.cs.CoreV1().Pods(managerNamespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deletedAt := time.Now()
	holder = e.waitNewLeader(t, before, "")
	t.Logf("restarted: %s leads %s after the deletion (run %s)", holder, time.Since(deletedAt).Round(time.Second), e.phaseOf(t, run))

	got, took := e.waitFinished(t, run, 5*time.Minute)
	t.Logf("finished %s/%s verdict %s, %s after the restart: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second), got.Status.Message)
	requirePassed(t, got)
	if !got.Status.StartTime.Equal(started) {
		t.Errorf("startTime moved from %s to %s: the load was started twice", started, got.Status.StartTime)
	}
	r := got.Status.Results
	// 1000 devices every 200 s for 80 s: 400 pushes.
	if r == nil || r.Requests == nil || r.Partial || r.Requests.Total < 360 || r.Requests.Total > 440 || r.Requests.Dropped != 0 {
		t.Fatalf("results %+v, want about 400 requests, none dropped, not partial", r)
	}
	stored := e.storedPushes(t, got.Status.TargetNamespace)
	t.Logf("accepted %d of %d pushes, the backend stored %d", r.Requests.Accepted, r.Requests.Total, stored)
	if stored != r.Requests.Accepted || r.Requests.Accepted != r.Requests.Total {
		t.Errorf("the backend stored %d pushes; status says %d accepted of %d", stored, r.Requests.Accepted, r.Requests.Total)
	}
	var jobs batchv1.JobList
	if err := e.c.List(e.ctx, &jobs, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != got.RunnerCount() {
		t.Errorf("%d runner Jobs, want %d: none made twice", len(jobs.Items), got.RunnerCount())
	}
}

// helmSetManagerTag rolls the release's manager to image tag, keeping every other value
// install.sh set (pullPolicy Never: the image is only in the nodes' containerd), and waits
// for the rollout.
func (e *env) helmSetManagerTag(t *testing.T, tag string) {
	t.Helper()
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin/helm"), "upgrade", releaseName, filepath.Join(root, "charts/fleetbench"),
		"-n", managerNamespace, "--reuse-values", "--set", "image.tag="+tag, "--wait", "--timeout", "3m")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm upgrade to manager:%s: %v\n%s", tag, err, out)
	}
	t.Logf("helm upgrade %s → fleetbench/manager:%s", releaseName, tag)
}

func (e *env) managerPodList(t *testing.T) []corev1.Pod {
	t.Helper()
	pods, err := e.cs.CoreV1().Pods(managerNamespace).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// waitNewLeader waits until a manager pod that is not one of before (and runs image, when
// given) is Ready and holds the leader lease, and returns its name. Holding the lease is
// what makes it reconcile: a Ready pod may still be waiting for the old one to let go.
func (e *env) waitNewLeader(t *testing.T, before []corev1.Pod, image string) string {
	t.Helper()
	old := map[string]bool{}
	for _, p := range before {
		old[p.Name] = true
	}
	leader := ""
	e.eventually(t, "a new manager pod leading", 3*time.Minute, func() (bool, string) {
		lease := &coordinationv1.Lease{}
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: managerNamespace, Name: leaseName}, lease); err != nil {
			return false, err.Error()
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		var seen []string
		for _, p := range e.managerPodList(t) {
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
			}
			seen = append(seen, fmt.Sprintf("%s ready=%v image=%s", p.Name, ready, p.Spec.Containers[0].Image))
			// controller-runtime's identity is "<hostname>_<uuid>"; the hostname is the pod name.
			if !old[p.Name] && ready && strings.HasPrefix(holder, p.Name+"_") && (image == "" || p.Spec.Containers[0].Image == image) {
				leader = p.Name
				return true, ""
			}
		}
		return false, fmt.Sprintf("lease held by %q; pods %v", holder, seen)
	})
	return leader
}

// waitAdopted waits until the manager now leading has written the run's live progress anew
// (the requests made so far grew): it reconciles the run, not only holds the lease.
func (e *env) waitAdopted(t *testing.T, run *v1alpha1.TestRun, who string) {
	t.Helper()
	first := int64(-1)
	e.eventually(t, who+" updating the run's progress", 90*time.Second, func() (bool, string) {
		got := &v1alpha1.TestRun{}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		if got.Status.Phase != v1alpha1.PhaseRunning {
			t.Fatalf("the run left Running after the upgrade: %s/%s %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		p := got.Status.Progress
		if p == nil {
			return false, "no progress"
		}
		if first < 0 {
			first = p.Requests
		}
		return p.Requests > first, fmt.Sprintf("progress %s, %d requests", p.Summary, p.Requests)
	})
}

func (e *env) phaseOf(t *testing.T, run *v1alpha1.TestRun) string {
	t.Helper()
	got := &v1alpha1.TestRun{}
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s/%s", got.Status.Phase, got.Status.Reason)
}
