package testrun

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestProfileEditedThenDeletedMidRunChangesNothing: the Profile is fixed in status.profile at
// the first provisioning step. Its CPU doubled and then the Profile deleted while the load
// runs, the run still ends Succeeded, its quota and status.profile holding the size it started
// on and the generation it measured. (The Profile read fresh on every reconcile sent the run
// back to Pending ProfileNotFound, and its results were never collected.)
func TestProfileEditedThenDeletedMidRunChangesNothing(t *testing.T) {
	ns := setup(t)
	profile := tw.MakeProfile("pinned-"+ns, "1", "512Mi").Obj()
	if err := env.Client.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("pinned", ns).Profile(profile.Name).Parallelism(2).Devices(200, "10s").Duration("10s").Obj()
	k, pods := startRunning(t, run, 2)
	want := &v1alpha1.ProfileSnapshot{Name: profile.Name, Generation: 1,
		Spec: v1alpha1.ProfileSnapshotSpec{CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")}}

	// The Profile's CPU doubled mid-run; a runner's end makes the run look at the world again.
	profile.Spec.CPU = resource.MustParse("2")
	if err := env.Client.Update(ctx, profile); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	logs.set(pods[0], load(pods[0], start), nil)
	k.Finish(pods[0], 0, "Completed")
	got := &v1alpha1.TestRun{}
	eventually(t, "runner 0 counted as ended", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.Runners == nil || got.Status.Runners.Succeeded != 1 {
			return fmt.Errorf("%s/%s runners %+v", got.Status.Phase, got.Status.Reason, got.Status.Runners)
		}
		return nil
	})

	// And then deleted.
	if err := env.Client.Delete(ctx, profile); err != nil {
		t.Fatal(err)
	}
	logs.set(pods[1], load(pods[1], start), nil)
	k.Finish(pods[1], 0, "Completed")
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	checkSnapshot(t, got.Status.Profile, want)
	var quotas corev1.ResourceQuotaList
	if err := env.Client.List(ctx, &quotas, client.InNamespace(k.targetNS())); err != nil {
		t.Fatal(err)
	}
	if len(quotas.Items) != 1 {
		t.Fatalf("%d quotas in the target namespace, want 1", len(quotas.Items))
	}
	hard := quotas.Items[0].Spec.Hard
	if cpu := hard[corev1.ResourceLimitsCPU]; cpu.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("the target's quota allows %s CPU, want the 1 the run started on", cpu.String())
	}
	if d := k.targetDeployments()[0]; d.Spec.Template.Spec.Resources == nil || d.Spec.Template.Spec.Resources.Limits.Cpu().String() != "1" {
		t.Errorf("target pod resources %+v, want the 1 CPU the run started on", d.Spec.Template.Spec.Resources)
	}
}

func checkSnapshot(t *testing.T, got, want *v1alpha1.ProfileSnapshot) {
	t.Helper()
	if got == nil || got.Name != want.Name || got.Generation != want.Generation ||
		got.Spec.CPU.Cmp(want.Spec.CPU) != 0 || got.Spec.Memory.Cmp(want.Spec.Memory) != 0 {
		t.Fatalf("status.profile = %+v, want %+v", got, want)
	}
}

// TestScriptConfigMapEditedMidRunReachesNoRunner: the user's script ConfigMap is copied, every
// entry, into one the TestRun owns before the pre-flight is made; the runners made afterwards
// (here, once the target is scheduled, after the user edited the ConfigMap) mount the copy, so
// they run the script the run started with. (Mounting the user's ConfigMap itself, they ran
// the edited one.)
func TestScriptConfigMapEditedMidRunReachesNoRunner(t *testing.T) {
	ns := setup(t)
	const lib = "export const path = '/';\n"
	user := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "suite", Namespace: ns},
		Data: map[string]string{"test.js": tw.DefaultScript, "lib.js": lib}}
	if err := env.Client.Create(ctx, user); err != nil {
		t.Fatal(err)
	}
	// The pre-flight is ended by the test, after the edit: a passed one's Job is deleted.
	run := tw.MakeTestRun("edited", ns).Parallelism(2).Annotation(manualPreflight, "true").
		Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "suite"}}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	preflight := k.preflightJob()

	user.Data["test.js"] = "export default function () { throw new Error('edited mid-run') }\n"
	delete(user.Data, "lib.js")
	if err := env.Client.Update(ctx, user); err != nil {
		t.Fatal(err)
	}
	checked := mountedScript(t, preflight)
	if err := preflightPod(ctx, env.Client, preflight, 0, ""); err != nil {
		t.Fatal(err)
	}
	k.targetReady()
	jobs := k.jobs(2)
	if checked["test.js"] != tw.DefaultScript {
		t.Errorf("the pre-flight checked %q, want the script the run started with", checked["test.js"])
	}
	for _, job := range jobs {
		data := mountedScript(t, &job)
		if data["test.js"] != tw.DefaultScript || data["lib.js"] != lib {
			t.Errorf("Job %s mounts script entries %q, want the ones the run started with", job.Name, data)
		}
	}
}

// mountedScript is what the ConfigMap a Job mounts as its script holds.
func mountedScript(t *testing.T, job *batchv1.Job) map[string]string {
	t.Helper()
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name != "script" || v.ConfigMap == nil {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: v.ConfigMap.Name}, cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}
	t.Fatalf("Job %s mounts no script ConfigMap", job.Name)
	return nil
}
