package runners

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A user's security settings are merged over the hardened defaults: what the user does not
// name keeps its default, and only a named key weakens one.
func TestRunnerSecurityMergesOverHardenedDefaults(t *testing.T) {
	hardenedContainer := func(t *testing.T, c *corev1.SecurityContext) {
		t.Helper()
		if !ptr.Deref(c.RunAsNonRoot, false) || ptr.Deref(c.AllowPrivilegeEscalation, true) || !ptr.Deref(c.ReadOnlyRootFilesystem, false) ||
			c.Capabilities == nil || !slices.Equal(c.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container securityContext %+v lost a hardened default", c)
		}
	}
	hardenedPod := func(t *testing.T, p *corev1.PodSecurityContext) {
		t.Helper()
		if !ptr.Deref(p.RunAsNonRoot, false) || p.SeccompProfile == nil || p.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("pod securityContext %+v lost a hardened default", p)
		}
	}
	for _, tc := range []struct {
		name   string
		runner v1alpha1.RunnerSpec
		check  func(t *testing.T, p *corev1.PodSecurityContext, c *corev1.SecurityContext)
	}{
		{name: "runAsUser alone keeps the rest", runner: v1alpha1.RunnerSpec{SecurityContext: &v1alpha1.RunnerSecurityContext{RunAsUser: ptr.To[int64](12345)}},
			check: func(t *testing.T, p *corev1.PodSecurityContext, c *corev1.SecurityContext) {
				hardenedPod(t, p)
				hardenedContainer(t, c)
				if ptr.Deref(p.RunAsUser, 0) != 12345 {
					t.Errorf("runAsUser %v, want 12345", p.RunAsUser)
				}
			}},
		{name: "k6-operator's sample: pod-level securityContext and containerSecurityContext", runner: v1alpha1.RunnerSpec{
			SecurityContext: &v1alpha1.RunnerSecurityContext{FSGroup: ptr.To[int64](1), RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](12345),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}, SupplementalGroups: []int64{12345}},
			K6OperatorRunnerFields: v1alpha1.K6OperatorRunnerFields{ContainerSecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
			check: func(t *testing.T, p *corev1.PodSecurityContext, c *corev1.SecurityContext) {
				hardenedPod(t, p)
				hardenedContainer(t, c)
				if ptr.Deref(p.FSGroup, 0) != 1 || !slices.Equal(p.SupplementalGroups, []int64{12345}) || ptr.Deref(p.RunAsUser, 0) != 12345 {
					t.Errorf("pod securityContext %+v lacks the user's fsGroup, supplementalGroups or runAsUser", p)
				}
			}},
		{name: "a capability asked for is added to drop ALL", runner: v1alpha1.RunnerSpec{SecurityContext: &v1alpha1.RunnerSecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}}},
			check: func(t *testing.T, p *corev1.PodSecurityContext, c *corev1.SecurityContext) {
				hardenedContainer(t, c)
				if !slices.Equal(c.Capabilities.Add, []corev1.Capability{"NET_BIND_SERVICE"}) {
					t.Errorf("capabilities %+v, want NET_BIND_SERVICE added", c.Capabilities)
				}
			}},
		{name: "only an explicit key weakens a default", runner: v1alpha1.RunnerSpec{SecurityContext: &v1alpha1.RunnerSecurityContext{
			AllowPrivilegeEscalation: ptr.To(true), RunAsNonRoot: ptr.To(false), RunAsUser: ptr.To[int64](0)},
			Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65535"}}},
			check: func(t *testing.T, p *corev1.PodSecurityContext, c *corev1.SecurityContext) {
				if !ptr.Deref(c.AllowPrivilegeEscalation, false) || ptr.Deref(c.RunAsNonRoot, true) || ptr.Deref(p.RunAsNonRoot, true) {
					t.Errorf("explicit weakening not applied: pod %+v container %+v", p, c)
				}
				if !slices.Equal(c.Capabilities.Drop, []corev1.Capability{"ALL"}) || !ptr.Deref(c.ReadOnlyRootFilesystem, false) ||
					p.SeccompProfile == nil || len(p.Sysctls) != 1 {
					t.Errorf("a default the user did not name was lost: pod %+v container %+v", p, c)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tw.MakeTestRun("sec", "ns").Runner(tc.runner.DeepCopy()).Obj()
			for _, job := range []*corev1.PodSpec{&Job(tr, 0, 2, JobOptions{}).Spec.Template.Spec, &PreflightJob(tr, JobOptions{}).Spec.Template.Spec} {
				tc.check(t, job.SecurityContext, job.Containers[0].SecurityContext)
			}
		})
	}
}

// k6-operator's runner fields fleetbench honours reach the runner pod and the pre-flight's.
func TestK6OperatorRunnerFieldsReachThePod(t *testing.T) {
	tr := tw.MakeTestRun("k6op", "ns").Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "k6-test"}}).Obj()
	tr.Spec.Ports = []corev1.ContainerPort{{Name: "ext", ContainerPort: 9000}}
	tr.Spec.Runner = &v1alpha1.RunnerSpec{
		ImagePullPolicy: corev1.PullAlways,
		SecurityContext: &v1alpha1.RunnerSecurityContext{RunAsUser: ptr.To[int64](1000)},
		Volumes:         []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		K6OperatorRunnerFields: v1alpha1.K6OperatorRunnerFields{
			SchedulerName:                "batch-scheduler",
			AutomountServiceAccountToken: "true",
			InitContainers: []v1alpha1.InitContainer{
				{Image: "busybox:1.36", Command: []string{"sh", "-c", "cp /test/users.json /data/"}, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}},
				{Name: "proxy", Image: "envoy:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
		},
	}
	for name, pod := range map[string]corev1.PodSpec{"runner": Job(tr, 1, 3, JobOptions{}).Spec.Template.Spec, "pre-flight": PreflightJob(tr, JobOptions{}).Spec.Template.Spec} {
		if pod.SchedulerName != "batch-scheduler" {
			t.Errorf("%s: schedulerName %q", name, pod.SchedulerName)
		}
		if !ptr.Deref(pod.AutomountServiceAccountToken, false) {
			t.Errorf("%s: automountServiceAccountToken \"true\" not honoured", name)
		}
		if name == "runner" && !slices.ContainsFunc(pod.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == "ext" && p.ContainerPort == 9000 }) {
			t.Errorf("%s: spec.ports missing from %v", name, pod.Containers[0].Ports)
		}
		if len(pod.InitContainers) != 2 {
			t.Fatalf("%s: init containers %+v, want 2", name, pod.InitContainers)
		}
		first, second := pod.InitContainers[0], pod.InitContainers[1]
		if first.Name != "k6-init-0" || first.Image != "busybox:1.36" || first.ImagePullPolicy != corev1.PullAlways ||
			!slices.Equal(first.Command, []string{"sh", "-c", "cp /test/users.json /data/"}) {
			t.Errorf("%s: first init container %+v", name, first)
		}
		for _, want := range []corev1.VolumeMount{{Name: "script", MountPath: "/test", ReadOnly: true}, {Name: "data", MountPath: "/data"}} {
			if !slices.ContainsFunc(first.VolumeMounts, func(m corev1.VolumeMount) bool {
				return m.Name == want.Name && m.MountPath == want.MountPath && m.ReadOnly == want.ReadOnly
			}) {
				t.Errorf("%s: init container mounts %+v lack %+v", name, first.VolumeMounts, want)
			}
		}
		if second.Name != "proxy" || ptr.Deref(second.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways {
			t.Errorf("%s: sidecar init container %+v", name, second)
		}
		for _, c := range pod.InitContainers {
			sc := c.SecurityContext
			if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("%s: init container %s runs without the runner's hardened settings: %+v", name, c.Name, sc)
			}
		}
	}
	// Without the k6-operator fields: no token, the default scheduler, no init containers.
	plain := Job(tw.MakeTestRun("plain", "ns").Obj(), 0, 1, JobOptions{}).Spec.Template.Spec
	if ptr.Deref(plain.AutomountServiceAccountToken, true) || plain.SchedulerName != "" || len(plain.InitContainers) != 0 {
		t.Errorf("plain runner: token %v, scheduler %q, init containers %d", plain.AutomountServiceAccountToken, plain.SchedulerName, len(plain.InitContainers))
	}
}

// The script's volume is also at /test, where k6-operator mounts it: open('/test/users.json').
func TestScriptVisibleAtTest(t *testing.T) {
	for _, tc := range []struct {
		script v1alpha1.ScriptSpec
		volume string // "" for none
	}{
		{v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "k6-test", File: "test.js"}}, "script"},
		{v1alpha1.ScriptSpec{VolumeClaim: &v1alpha1.VolumeClaimScript{Name: "scripts", ReadOnly: true}}, "script"},
		{v1alpha1.ScriptSpec{Inline: "export default function () {}"}, "config"},
		{v1alpha1.ScriptSpec{LocalFile: "/test/test.js"}, ""},
	} {
		tr := tw.MakeTestRun("t", "ns").Script(tc.script).Obj()
		for _, pod := range []corev1.PodSpec{Job(tr, 0, 1, JobOptions{ConfigMap: "c"}).Spec.Template.Spec, PreflightJob(tr, JobOptions{ConfigMap: "c"}).Spec.Template.Spec} {
			i := slices.IndexFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/test" })
			switch {
			case tc.volume == "" && i >= 0:
				t.Errorf("%+v: a localFile script's image keeps its own /test, got mount %+v", tc.script, pod.Containers[0].VolumeMounts[i])
			case tc.volume != "" && (i < 0 || pod.Containers[0].VolumeMounts[i].Name != tc.volume):
				t.Errorf("%+v: mounts %+v, want volume %s at /test", tc.script, pod.Containers[0].VolumeMounts, tc.volume)
			}
		}
	}
}
