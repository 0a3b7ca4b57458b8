package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// teamQuota is the tenant's ResourceQuota of cpu requests, over pods that ask for resources
// (NotBestEffort: the suite's runner pods ask none, so only the target's charge counts).
const teamQuota = "team"

// setQuota sets the namespace's quota to hard cpu requests and, as the quota controller would
// (envtest runs none; the API server's quota admission only adds), its status: hard, and used.
func setQuota(t *testing.T, ns, hard, used string) {
	t.Helper()
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(q)}
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: teamQuota, Namespace: ns}, Spec: corev1.ResourceQuotaSpec{
		Hard: cpu(hard), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}}}
	if err := env.Client.Create(ctx, q); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return err
		}
		q.Spec.Hard = cpu(hard)
		if err := env.Client.Update(ctx, q); err != nil {
			return err
		}
		q.Status = corev1.ResourceQuotaStatus{Hard: cpu(hard), Used: cpu(used)}
		return env.Client.Status().Update(ctx, q)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// quotaUsed is the cpu requests the quota counts as used.
func quotaUsed(t *testing.T, ns string) string {
	t.Helper()
	q := &corev1.ResourceQuota{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: teamQuota}, q); err != nil {
		t.Fatal(err)
	}
	used := q.Status.Used[corev1.ResourceRequestsCPU]
	return used.String()
}

// chargePod waits for run's charge pod other than the one of UID not, and returns it.
func chargePod(t *testing.T, run *v1alpha1.TestRun, not types.UID) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	eventually(t, "the target's charge pod", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.TargetChargePod(run.Name)}, pod); err != nil {
			return err
		}
		if pod.UID == not {
			return fmt.Errorf("pod %s is still the one deleted", pod.Name)
		}
		return nil
	})
	return pod
}

// chargeGone waits until run's charge pod is gone.
func chargeGone(t *testing.T, run *v1alpha1.TestRun) {
	t.Helper()
	eventually(t, "the charge pod gone", func() error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.TargetChargePod(run.Name)}, &corev1.Pod{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err == nil:
			return fmt.Errorf("still there")
		}
		return err
	})
}

func deleteCharge(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if err := env.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// TestTargetIsChargedToItsNamespace: a run's target counts in its namespace's ResourceQuota,
// though it runs in a namespace of its own. The charge pod is made before the target, in a
// namespace enforcing the restricted Pod Security level, gated and owned by the run; a run the
// quota has no room for waits Pending TargetQuotaExceeded with nothing provisioned and fails so
// at its provisioning deadline, or goes on once room frees. A charge pod deleted mid-run is
// made again; one the quota has no room to make again fails its run. The release of the target
// deletes it.
func TestTargetIsChargedToItsNamespace(t *testing.T) {
	ns := setup(t)
	nsObj := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if err := env.Client.Update(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	setQuota(t, ns, "1500m", "0")

	first := tw.MakeTestRun("first", ns).Obj()
	create(t, first)
	waitPhase(t, first, v1alpha1.PhaseProvisioning, "")
	charge := chargePod(t, first, "")
	if g := charge.Spec.SchedulingGates; len(g) != 1 || g[0].Name != target.ChargeGate || !decide.ControlledBy(charge, first.UID) {
		t.Errorf("charge pod gates %v, owners %v: want gated for good, controlled by its TestRun", g, charge.OwnerReferences)
	}
	if used := quotaUsed(t, ns); used != "1" {
		t.Errorf("the quota counts %s cpu used, want the target's 1 (Profile c1)", used)
	}

	// 1 of 1.5 cpu used: a second target does not fit, and waits until its deadline.
	second := tw.MakeTestRun("second", ns).Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "4s"}).Obj()
	create(t, second)
	waiting := waitPhase(t, second, v1alpha1.PhasePending, v1alpha1.ReasonTargetQuotaExceeded)
	for _, want := range []string{"requests cpu 1", "exceeded quota: " + teamQuota, "waiting until"} {
		if !strings.Contains(waiting.Status.Message, want) {
			t.Errorf("waiting message %q lacks %q", waiting.Status.Message, want)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, second.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a target the quota has no room for was provisioned: %v", err)
	}
	failed := waitPhase(t, second, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetQuotaExceeded)
	if !strings.Contains(failed.Status.Message, "use a smaller Profile") {
		t.Errorf("failure message %q, want what to do", failed.Status.Message)
	}

	// A third waits until the quota has room, then goes on.
	third := tw.MakeTestRun("third", ns).Obj()
	create(t, third)
	waitPhase(t, third, v1alpha1.PhasePending, v1alpha1.ReasonTargetQuotaExceeded)
	setQuota(t, ns, "10", "1")
	waitPhase(t, third, v1alpha1.PhaseProvisioning, "")
	thirdCharge := chargePod(t, third, "")

	// first runs; its charge pod, deleted, is made again.
	k := newKubelet(t, first)
	k.targetReady()
	pods := k.runnersReady(1)
	waitPhase(t, first, v1alpha1.PhaseRunning, "")
	deleteCharge(t, charge)
	chargePod(t, first, charge.UID)
	// first ends: releasing its target deletes its charge.
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
	waitPhase(t, first, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	chargeGone(t, first)

	// third's charge is deleted while the quota has room only for what it charged: it fails.
	setQuota(t, ns, "1", "1")
	deleteCharge(t, thirdCharge)
	got := waitPhase(t, third, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetQuotaExceeded)
	if !strings.Contains(got.Status.Message, "is gone") || !strings.Contains(got.Status.Message, "leave that pod in place") {
		t.Errorf("message %q, want the charge pod gone and what to do", got.Status.Message)
	}
}

// TestTargetChargeRefusedByTheNamespace: a LimitRange whose per-container maximum the target's
// container passes refuses the charge pod, and the run ends TargetChargeRefused at once with
// the API server's words and nothing provisioned; so does a run whose charge pod's name a pod
// not its own holds, which is left untouched.
func TestTargetChargeRefusedByTheNamespace(t *testing.T) {
	ns := setup(t)
	limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}
	if err := env.Client.Create(ctx, limits); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("too-big", ns).Obj()
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetChargeRefused)
	if !strings.Contains(got.Status.Message, "maximum cpu usage per Container is 500m") || !strings.Contains(got.Status.Message, "smaller Profile") {
		t.Errorf("message %q, want the LimitRange's words and what to do", got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a target whose charge was refused was provisioned: %v", err)
	}

	other := setup(t)
	squat := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: naming.TargetChargePod("squatted"), Namespace: other},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if err := env.Client.Create(ctx, squat); err != nil {
		t.Fatal(err)
	}
	squatted := tw.MakeTestRun("squatted", other).Obj()
	create(t, squatted)
	got = waitPhase(t, squatted, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetChargeRefused)
	if !strings.Contains(got.Status.Message, "does not own") {
		t.Errorf("message %q, want the squatted name", got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(squat), squat); err != nil || !squat.DeletionTimestamp.IsZero() {
		t.Errorf("the squatting pod was touched: %v", err)
	}
}
