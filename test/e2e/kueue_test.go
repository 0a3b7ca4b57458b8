//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
)

// These tests need Kueue on the cluster: hack/cluster/kueue.sh up (built from its Go module at
// KUEUE_VERSION). Without it they skip. Each makes its own ClusterQueue, sized from its first
// run's Workload so that one fleet fits and two do not, and a LocalQueue in its namespace.

const queueScript = `import http from 'k6/http';
export const options = { scenarios: { load: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '15s', preAllocatedVUs: 20 } } };
export default function () { http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `); }
`

// kueueClient is a client that knows Kueue's types; it skips the test without Kueue installed.
func kueueClient(t *testing.T) client.Client {
	t.Helper()
	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := kueueClientOf(t, cfg)
	if meta.IsNoMatchError(err) {
		t.Skip("Kueue is not installed: hack/cluster/kueue.sh up")
	} else if err != nil {
		t.Fatal(err)
	}
	return c
}

// kueueClientOf is a client of the cluster cfg reaches that knows Kueue's types, and whether
// Kueue answers there (a NoMatch error: not installed).
func kueueClientOf(t *testing.T, cfg *rest.Config) (client.Client, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, kueue.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, c.List(t.Context(), &kueue.ClusterQueueList{})
}

func queuedRun(name, ns, lq string) *v1alpha1.TestRun {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	run := tw.MakeTestRun(name, ns).Inline(queueScript).Parallelism(2).
		Runner(&v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{Requests: rl, Limits: rl}}).Obj()
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: lq}
	return run
}

// makeQueues makes ClusterQueue name with quota (cpu, memory) on the ResourceFlavor "default"
// (hack/cluster/kueue.sh makes it) and LocalQueue name in ns pointing at it; both go at the end.
func makeQueues(t *testing.T, c client.Client, ns, name string, quota corev1.ResourceList) {
	t.Helper()
	var resources []kueue.ResourceQuota
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		resources = append(resources, kueue.ResourceQuota{Name: r, NominalQuota: quota[r]})
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: resources}}}},
	}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(name)}}
	for _, o := range []client.Object{cq, lq} {
		_ = c.Delete(t.Context(), o) // left by a crashed run
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP") == "" {
			_ = c.Delete(t.Context(), lq)
			_ = c.Delete(t.Context(), cq)
		}
	})
}

// fleetOf waits for the run's Workload and says what its fleet asks for in all.
func fleetOf(t *testing.T, e *env, c client.Client, run *v1alpha1.TestRun) corev1.ResourceList {
	t.Helper()
	wl := &kueue.Workload{}
	e.eventually(t, "the Workload of "+run.Name, time.Minute, func() (bool, string) {
		err := c.Get(e.ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.Workload(run.Name)}, wl)
		return err == nil, fmt.Sprint(err)
	})
	return podSetRequests(wl.Spec.PodSets)
}

// podSetRequests is what the pod sets ask for together: each pod's container requests times its
// count, as Kueue charges them against the ClusterQueue's quota.
func podSetRequests(sets []kueue.PodSet) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, s := range sets {
		for _, c := range s.Template.Spec.Containers {
			for name, q := range c.Resources.Requests {
				add := q.DeepCopy()
				add.Mul(int64(s.Count))
				sum := total[name]
				sum.Add(add)
				total[name] = sum
			}
		}
	}
	return total
}

// scaled is r times f, per resource.
func scaled(r corev1.ResourceList, f float64) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r {
		out[name] = *resource.NewMilliQuantity(int64(float64(q.MilliValue())*f), q.Format)
	}
	return out
}

// podsOf counts the pods (runners and pre-flight) of run in its namespace and in its target's.
func podsOf(t *testing.T, e *env, run *v1alpha1.TestRun) int {
	t.Helper()
	var n int
	for _, ns := range []string{run.Namespace, naming.TargetNamespace(run.Namespace, run.Name)} {
		var pods corev1.PodList
		if err := e.c.List(e.ctx, &pods, client.InNamespace(ns), client.MatchingLabels{naming.LabelTestRun: run.Name}); err != nil {
			t.Fatal(err)
		}
		n += len(pods.Items)
	}
	return n
}

// admittedAt is when the run's Admitted condition turned True (Reason Admitted); zero before.
func admittedAt(run *v1alpha1.TestRun) time.Time {
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionAdmitted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonAdmitted {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// TestKueueAdmitsOneFleetAtATime: two runs whose fleets cannot both fit the ClusterQueue's
// quota. The second waits Queued with no pod while the first runs, then is admitted when the
// first ends and runs to completion. Logged: the time from the first run's end to the second's
// admission, as the test saw it (polling every 100 ms) and as the conditions say (1 s).
func TestKueueAdmitsOneFleetAtATime(t *testing.T) {
	e := newEnv(t)
	c := kueueClient(t)
	ns := e.namespace(t, "e2e-kueue")
	first, second := queuedRun("first", ns, "e2e-kueue"), queuedRun("second", ns, "e2e-kueue")
	if err := e.c.Create(e.ctx, first); err != nil {
		t.Fatal(err)
	}
	fleet := fleetOf(t, e, c, first)
	// One fleet fits, two do not.
	makeQueues(t, c, ns, "e2e-kueue", scaled(fleet, 1.5))
	t.Logf("one fleet asks cpu %s memory %s; the ClusterQueue holds 1.5 fleets", fleet.Cpu(), fleet.Memory())
	e.dumpOnFailure(t, client.ObjectKeyFromObject(first), naming.TargetNamespace(ns, first.Name))
	e.dumpOnFailure(t, client.ObjectKeyFromObject(second), naming.TargetNamespace(ns, second.Name))

	got := &v1alpha1.TestRun{}
	e.eventually(t, "the first run running", 3*time.Minute, func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(first), got); err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == v1alpha1.PhaseRunning, string(got.Status.Phase) + ": " + got.Status.Message
	})
	if err := e.c.Create(e.ctx, second); err != nil {
		t.Fatal(err)
	}
	// While the first runs, the second stays Queued and holds no pod.
	var firstEnd, secondSeenAdmitted time.Time
	sec := &v1alpha1.TestRun{}
	for {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(first), got); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(second), sec); err != nil {
			t.Fatal(err)
		}
		done := got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed
		if done && firstEnd.IsZero() {
			firstEnd = time.Now()
		}
		if !admittedAt(sec).IsZero() {
			secondSeenAdmitted = time.Now()
			break
		}
		if !done {
			if sec.Status.Phase != "" && sec.Status.Phase != v1alpha1.PhasePending && sec.Status.Phase != v1alpha1.PhaseQueued {
				t.Fatalf("the second run is %s/%s while the first runs: %s", sec.Status.Phase, sec.Status.Reason, sec.Status.Message)
			}
			if n := podsOf(t, e, sec); n != 0 {
				t.Fatalf("the queued run holds %d pods", n)
			}
		}
		if !firstEnd.IsZero() && time.Since(firstEnd) > 2*time.Minute {
			t.Fatalf("the second run was not admitted within 2 min of the first's end: %s/%s %s", sec.Status.Phase, sec.Status.Reason, sec.Status.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("first run %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	byConditions := admittedAt(sec).Sub(got.Status.CompletionTime.Time)
	t.Logf("first run's end -> second run's admission: %s observed (100 ms polls), %s by status times (1 s resolution)",
		secondSeenAdmitted.Sub(firstEnd).Round(time.Millisecond), byConditions)
	wl := &kueue.Workload{}
	if err := c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: naming.Workload(first.Name)}, wl); err != nil || !queue.Read(wl).Finished {
		t.Errorf("the first run's Workload is not Finished: %v %+v", err, wl.Status.Conditions)
	}
	final, _ := e.waitFinished(t, second, 3*time.Minute)
	requirePassed(t, final)
}

// TestCapacityPlanSharesTheQueue: a CapacityPlan whose template names the queue, and an ad-hoc
// run in the same queue, sized for one fleet: every child and the run are admitted one at a
// time (never two fleets admitted at once) and all end Succeeded.
func TestCapacityPlanSharesTheQueue(t *testing.T) {
	e := newEnv(t)
	c := kueueClient(t)
	ns := e.namespace(t, "e2e-kueue-plan")
	adhoc := queuedRun("adhoc", ns, "e2e-kueue-plan")
	if err := e.c.Create(e.ctx, adhoc); err != nil {
		t.Fatal(err)
	}
	makeQueues(t, c, ns, "e2e-kueue-plan", scaled(fleetOf(t, e, c, adhoc), 1.5))
	template := queuedRun("t", ns, "e2e-kueue-plan")
	plan := tw.MakeCapacityPlan("queued-plan", ns, template, "C1").Repetitions(2).Parallel(2).Obj()
	if err := e.c.Create(e.ctx, plan); err != nil {
		t.Fatal(err)
	}
	gotPlan := &v1alpha1.CapacityPlan{}
	maxAdmitted := 0
	e.eventually(t, "the plan and the ad-hoc run to end", 8*time.Minute, func() (bool, string) {
		var wls kueue.WorkloadList
		if err := c.List(e.ctx, &wls, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		admitted := 0
		for i := range wls.Items {
			if st := queue.Read(&wls.Items[i]); st.Admitted && !st.Finished {
				admitted++
			}
		}
		maxAdmitted = max(maxAdmitted, admitted)
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(plan), gotPlan); err != nil {
			return false, err.Error()
		}
		run := &v1alpha1.TestRun{}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(adhoc), run); err != nil {
			return false, err.Error()
		}
		planDone := gotPlan.Status.Phase == v1alpha1.PlanSucceeded || gotPlan.Status.Phase == v1alpha1.PlanFailed
		runDone := run.Status.Phase == v1alpha1.PhaseSucceeded || run.Status.Phase == v1alpha1.PhaseFailed
		return planDone && runDone, fmt.Sprintf("plan %s %s, run %s, %d admitted", gotPlan.Status.Phase, gotPlan.Status.Progress, run.Status.Phase, admitted)
	})
	if maxAdmitted > 1 {
		t.Errorf("%d fleets were admitted at once; the quota holds one", maxAdmitted)
	}
	if gotPlan.Status.Phase != v1alpha1.PlanSucceeded {
		t.Errorf("plan %s: %s", gotPlan.Status.Phase, gotPlan.Status.Message)
	}
	var runs v1alpha1.TestRunList
	if err := e.c.List(e.ctx, &runs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs.Items {
		if admittedAt(&r).IsZero() || r.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("run %s %s/%s admitted at %v: every run goes through the queue and succeeds", r.Name, r.Status.Phase, r.Status.Reason, admittedAt(&r))
		}
	}
}
