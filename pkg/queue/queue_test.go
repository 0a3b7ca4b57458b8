package queue

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   v1alpha1.TestRun
		queue string
	}{
		{"none", v1alpha1.TestRun{}, ""},
		{"spec", v1alpha1.TestRun{Spec: v1alpha1.TestRunSpec{Queue: &v1alpha1.QueueSpec{LocalQueue: "team-a"}}}, "team-a"},
		{"label", v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.QueueNameLabel: "lq"}}}, "lq"},
		{"spec wins over the label", v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.QueueNameLabel: "lq"}},
			Spec: v1alpha1.TestRunSpec{Queue: &v1alpha1.QueueSpec{LocalQueue: "team-a"}}}, "team-a"},
	} {
		if got := Name(&tc.run); got != tc.queue {
			t.Errorf("%s: Name = %q, want %q", tc.name, got, tc.queue)
		}
	}
}

func runnerSpec(cpu, mem string) corev1.PodSpec {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "k6", Image: "secret-image", Args: []string{"--secret"},
		Env: []corev1.EnvVar{{Name: "TOKEN", Value: "x"}}, Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}}
}

// The pod sets ask for the target, every runner and the pre-flight together: what Kueue admits
// all at once or not at all.
func TestPodSetsAskForTheWholeFleet(t *testing.T) {
	pre := runnerSpec("500m", "256Mi")
	sets := PodSets(Fleet{
		Target:    &v1alpha1.ProfileSnapshotSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("4Gi"), NodeSelector: map[string]string{"pool": "sut"}},
		Runner:    runnerSpec("1", "512Mi"),
		Runners:   10,
		Preflight: &pre,
	})
	if len(sets) != 3 || sets[0].Name != PodSetTarget || sets[1].Name != PodSetRunners || sets[2].Name != PodSetPreflight || sets[1].Count != 10 {
		t.Fatalf("pod sets = %+v", sets)
	}
	if sets[0].Template.Spec.NodeSelector["pool"] != "sut" {
		t.Errorf("the target's pod set lost the Profile's placement: %+v", sets[0].Template.Spec)
	}
	// Kueue charges each pod set's requests times its count: the target's whole Profile, one
	// runner's and the pre-flight's size.
	for i, want := range []struct{ cpu, mem string }{{"2", "4Gi"}, {"1", "512Mi"}, {"500m", "256Mi"}} {
		req := sets[i].Template.Spec.Containers[0].Resources.Requests
		if req.Cpu().Cmp(resource.MustParse(want.cpu)) != 0 || req.Memory().Cmp(resource.MustParse(want.mem)) != 0 {
			t.Errorf("pod set %s requests %v, want cpu %s memory %s", sets[i].Name, req, want.cpu, want.mem)
		}
	}
	c := sets[1].Template.Spec.Containers[0]
	if c.Image != "" || len(c.Args) != 0 || len(c.Env) != 0 {
		t.Errorf("the runner's pod set copies more than its size: %+v", c)
	}
}

func TestPodSetsOfAnExternalTargetWithoutPreflight(t *testing.T) {
	sets := PodSets(Fleet{Runner: runnerSpec("1", "1Gi"), Runners: 3})
	if len(sets) != 1 || sets[0].Name != PodSetRunners {
		t.Fatalf("pod sets = %+v", sets)
	}
}

func TestRead(t *testing.T) {
	wl := &kueue.Workload{}
	if st := Read(wl); st.Admitted || st.Pending == "" {
		t.Errorf("a new Workload: %+v", st)
	}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending", Message: "couldn't assign flavors to pod set runners: insufficient quota for cpu"},
	}
	if st := Read(wl); st.Admitted || st.Pending != wl.Status.Conditions[0].Message {
		t.Errorf("pending: %+v", st)
	}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"})
	if st := Read(wl); !st.Admitted || st.ClusterQueue != "cq" {
		t.Errorf("admitted: %+v", st)
	}
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: "Preempted", Message: "by a higher priority"})
	if st := Read(wl); !st.Evicted || st.Reason != "Preempted" {
		t.Errorf("evicted: %+v", st)
	}
}

func TestMaxWait(t *testing.T) {
	run := &v1alpha1.TestRun{}
	if MaxWait(run) != DefaultMaxWait {
		t.Error("default")
	}
	run.Spec.Queue = &v1alpha1.QueueSpec{MaxWait: "90m"}
	if MaxWait(run).Minutes() != 90 {
		t.Error("90m")
	}
}
