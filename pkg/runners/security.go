package runners

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// runnerUID is the runner image's non-root user.
const runnerUID = 65532

// podSecurityContext is the runner pod's hardened defaults with the user's pod-level keys
// merged over them: a key the user leaves out keeps its default, so a user's runAsUser never
// costs the RuntimeDefault seccomp profile or runAsNonRoot that a restricted namespace needs.
func podSecurityContext(r *v1alpha1.RunnerSpec) *corev1.PodSecurityContext {
	pod := &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](runnerUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:        slices.Clone(r.Sysctls),
	}
	sc := r.SecurityContext
	if sc == nil {
		return pod
	}
	set(&pod.RunAsUser, sc.RunAsUser)
	set(&pod.RunAsGroup, sc.RunAsGroup)
	set(&pod.RunAsNonRoot, sc.RunAsNonRoot)
	set(&pod.FSGroup, sc.FSGroup)
	set(&pod.FSGroupChangePolicy, sc.FSGroupChangePolicy)
	set(&pod.SupplementalGroupsPolicy, sc.SupplementalGroupsPolicy)
	set(&pod.SeccompProfile, sc.SeccompProfile)
	set(&pod.SELinuxOptions, sc.SELinuxOptions)
	set(&pod.SELinuxChangePolicy, sc.SELinuxChangePolicy)
	set(&pod.AppArmorProfile, sc.AppArmorProfile)
	set(&pod.WindowsOptions, sc.WindowsOptions)
	pod.SupplementalGroups = slices.Clone(sc.SupplementalGroups)
	pod.Sysctls = append(pod.Sysctls, sc.Sysctls...)
	return pod
}

// containerSecurityContext is the k6 container's hardened defaults with the user's
// container-level keys merged over them: securityContext's, then containerSecurityContext's
// (k6-operator's). Only an explicit key weakens a default; the namespace's Pod Security level
// then decides whether the pod is admitted.
func containerSecurityContext(r *v1alpha1.RunnerSpec) *corev1.SecurityContext {
	c := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if sc := r.SecurityContext; sc != nil {
		// The container's runAsNonRoot would override the pod's: follow the user's pod-level word.
		set(&c.RunAsNonRoot, sc.RunAsNonRoot)
		mergeContainer(c, &corev1.SecurityContext{Capabilities: sc.Capabilities, Privileged: sc.Privileged,
			AllowPrivilegeEscalation: sc.AllowPrivilegeEscalation, ReadOnlyRootFilesystem: sc.ReadOnlyRootFilesystem, ProcMount: sc.ProcMount})
	}
	if r.ContainerSecurityContext != nil {
		mergeContainer(c, r.ContainerSecurityContext)
	}
	return c
}

// mergeContainer sets every key u sets. Capabilities to add are added; a drop list replaces
// the default drop ALL only when given.
func mergeContainer(c, u *corev1.SecurityContext) {
	if u.Capabilities != nil {
		caps := c.Capabilities.DeepCopy()
		caps.Add = append(caps.Add, u.Capabilities.Add...)
		if u.Capabilities.Drop != nil {
			caps.Drop = slices.Clone(u.Capabilities.Drop)
		}
		c.Capabilities = caps
	}
	set(&c.Privileged, u.Privileged)
	set(&c.AllowPrivilegeEscalation, u.AllowPrivilegeEscalation)
	set(&c.ReadOnlyRootFilesystem, u.ReadOnlyRootFilesystem)
	set(&c.ProcMount, u.ProcMount)
	set(&c.RunAsUser, u.RunAsUser)
	set(&c.RunAsGroup, u.RunAsGroup)
	set(&c.RunAsNonRoot, u.RunAsNonRoot)
	set(&c.SeccompProfile, u.SeccompProfile)
	set(&c.SELinuxOptions, u.SELinuxOptions)
	set(&c.AppArmorProfile, u.AppArmorProfile)
	set(&c.WindowsOptions, u.WindowsOptions)
}

// set replaces *dst with a copy of v when v is set.
func set[T any](dst **T, v *T) {
	if v != nil {
		*dst = ptr.To(*v)
	}
}

// initContainers are k6-operator's runner init containers: before k6, with the k6 container's
// security settings and pull policy, and the script's volume at /test as k6-operator mounts it.
func initContainers(r *v1alpha1.RunnerSpec, testMounts []corev1.VolumeMount, pullPolicy corev1.PullPolicy, sc *corev1.SecurityContext) []corev1.Container {
	var out []corev1.Container
	for i, ic := range r.InitContainers {
		name := ic.Name
		if name == "" {
			name = fmt.Sprintf("k6-init-%d", i)
		}
		out = append(out, corev1.Container{
			Name:                     name,
			Image:                    ic.Image,
			Command:                  ic.Command,
			Args:                     ic.Args,
			WorkingDir:               ic.WorkingDir,
			Env:                      ic.Env,
			EnvFrom:                  ic.EnvFrom,
			VolumeMounts:             append(slices.Clone(testMounts), ic.VolumeMounts...),
			Resources:                ptr.Deref(ic.Resources, corev1.ResourceRequirements{}),
			RestartPolicy:            ic.RestartPolicy,
			ImagePullPolicy:          pullPolicy,
			SecurityContext:          sc.DeepCopy(),
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		})
	}
	return out
}

// automountToken is false unless the user asks for the token with k6-operator's "true":
// runners talk to nothing in the cluster API.
func automountToken(r *v1alpha1.RunnerSpec) *bool {
	return ptr.To(r.AutomountServiceAccountToken == "true")
}
