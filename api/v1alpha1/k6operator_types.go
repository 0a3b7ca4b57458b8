package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// k6-operator v1.6's TestRun fields, declared so that no manifest migrated from it loses a
// field without a word: a client whose field validation only warns (Helm, client-go, GitOps
// tools) would otherwise see the API server drop an unknown field. Each is honoured, or refused
// at admission with a message naming fleetbench's equivalent. docs/migrating-from-k6-operator.md
// has the whole table; `kubectl fleetbench convert` rewrites a manifest.

// K6OperatorFields are k6-operator's top-level spec fields fleetbench has no field of its own for.
type K6OperatorFields struct {
	// ports are added to every runner container, as k6-operator's field of the same name
	// (for an extension that listens). 6565 and 6566 (k6-api, live) are fleetbench's own.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.containerPort >= 1 && p.containerPort <= 65535 && !(p.containerPort in [6565, 6566]))",message="spec.ports: containerPort must be between 1 and 65535 and not 6565 or 6566, which every runner already exposes (k6's REST API and fleetbench's live results); k6-operator's own port 6565 needs no entry"
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.name) || !(p.name in ['k6-api', 'live']))",message="spec.ports: names k6-api and live are fleetbench's own; rename the port"
	Ports []corev1.ContainerPort `json:"ports,omitempty"`

	// initializer is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.initializer is k6-operator's initializer pod; fleetbench checks the script in its own pre-flight pod, built like a runner (spec.runner's image, env, volumes, init containers): remove spec.initializer and shape the runners in spec.runner"
	Initializer *runtime.RawExtension `json:"initializer,omitempty"`

	// starter is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.starter is k6-operator's starter pod; fleetbench starts the runners itself, together, through k6's REST API from the operator: remove spec.starter"
	Starter *runtime.RawExtension `json:"starter,omitempty"`

	// quiet is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="false",message="spec.quiet is k6-operator's switch for k6's --quiet; fleetbench passes no --quiet of its own: remove spec.quiet, and add \"--quiet\" to spec.args to silence k6's progress lines"
	Quiet string `json:"quiet,omitempty"`

	// paused is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="false",message="spec.paused is k6-operator's; fleetbench starts the runners itself: they always start paused and the operator un-pauses them together once all are Ready. Remove spec.paused"
	Paused string `json:"paused,omitempty"`

	// scuttle is k6-operator's (deprecated there); refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.scuttle (Envoy/Istio sidecar shutdown) is deprecated in k6-operator and fleetbench has none: keep the mesh's sidecar out of the runner pods with spec.runner.metadata.annotations {sidecar.istio.io/inject: \"false\"}, or a native sidecar that ends with the pod"
	Scuttle *runtime.RawExtension `json:"scuttle,omitempty"`

	// testRunId is reserved by Grafana Cloud k6; refused.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="false",message="spec.testRunId is reserved by Grafana Cloud k6 and fleetbench does not run in it: remove it; the run's id is status.testID"
	TestRunID string `json:"testRunId,omitempty"`

	// token is reserved by Grafana Cloud k6; refused.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="false",message="spec.token is reserved by Grafana Cloud k6 and fleetbench does not run in it: remove it; a token the script needs goes in a Secret read through spec.runner.envFrom"
	Token string `json:"token,omitempty"`
}

// K6OperatorRunnerFields are k6-operator's runner-pod fields fleetbench has no field of its own for.
type K6OperatorRunnerFields struct {
	// schedulerName of the runner pods; the cluster's default scheduler when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be the name of a scheduler: lower-case letters, digits, '-' and '.', e.g. default-scheduler"
	SchedulerName string `json:"schedulerName,omitempty"`

	// automountServiceAccountToken "true" mounts the runner's service account token, for a
	// script that calls the Kubernetes API. Unset or "false": no token (k6-operator mounts one
	// unless told "false"). A string, as in k6-operator.
	// +optional
	// +kubebuilder:validation:Enum="true";"false"
	AutomountServiceAccountToken string `json:"automountServiceAccountToken,omitempty"`

	// initContainers run in every runner pod (and the pre-flight's) before k6, as in
	// k6-operator: each sees the script's volume at /test (where one is mounted) and may mount
	// spec.runner.volumes, e.g. to fetch test data. They run with the runner container's
	// security settings.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.name) || self.exists_one(d, has(d.name) && d.name == c.name))",message="spec.runner.initContainers names must be unique"
	InitContainers []InitContainer `json:"initContainers,omitempty"`

	// containerSecurityContext is merged over the runner container's hardened defaults (and
	// applies to initContainers), as k6-operator's field of the same name.
	// +optional
	ContainerSecurityContext *corev1.SecurityContext `json:"containerSecurityContext,omitempty"`

	// disabled is k6-operator's, for its initializer only; refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.runner.disabled applies to k6-operator's initializer only; fleetbench's runners cannot be disabled: remove it"
	Disabled *bool `json:"disabled,omitempty"`

	// readinessProbe is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.runner.readinessProbe: fleetbench's own readiness probe on k6's REST API gates the synchronized start of the runners and cannot be replaced; remove it"
	ReadinessProbe *runtime.RawExtension `json:"readinessProbe,omitempty"`

	// livenessProbe is k6-operator's; refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.runner.livenessProbe: a liveness kill loses the run (a runner is never restarted), so fleetbench sets none; a hung run is ended by spec.timeouts.run. Remove it"
	LivenessProbe *runtime.RawExtension `json:"livenessProbe,omitempty"`
}

// InitContainer is k6-operator's init container of a runner pod.
type InitContainer struct {
	// name of the container; k6-init-<index> when empty, as in k6-operator.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self != 'k6'",message="must be a DNS label other than k6 (the runner's container), e.g. fetch-data"
	Name string `json:"name,omitempty"`
	// image of the container.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`
	// command overrides the image's entrypoint; an element may carry an inline shell script.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=32768
	// +listType=atomic
	Command []string `json:"command,omitempty"`
	// args are passed to the entrypoint.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=32768
	// +listType=atomic
	Args []string `json:"args,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	WorkingDir string `json:"workingDir,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// volumeMounts of spec.runner.volumes; not under /fleetbench.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(m, !m.mountPath.startsWith('/fleetbench'))",message="initContainers volumeMounts must not use /fleetbench (fleetbench mounts the script and config there)"
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// restartPolicy Always makes it a sidecar that runs beside k6 and ends with it.
	// +optional
	// +kubebuilder:validation:Enum=Always
	RestartPolicy *corev1.ContainerRestartPolicy `json:"restartPolicy,omitempty"`
}

// RunnerSecurityContext takes the pod-level keys of k6-operator's runner.securityContext (a
// PodSecurityContext) and the container-level keys fleetbench's runner.securityContext always
// took, so manifests of both convert unchanged. Every key is merged over the runner's hardened
// defaults (non-root uid 65532, RuntimeDefault seccomp, no capabilities, no privilege
// escalation, read-only root file system): a key not set keeps its default, so a user's
// runAsUser keeps the rest. Keys of both levels (runAsUser, runAsGroup, runAsNonRoot,
// seccompProfile, seLinuxOptions, appArmorProfile, windowsOptions) are set on the pod.
// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || self.runAsUser != 0 || (has(self.runAsNonRoot) && !self.runAsNonRoot)",message="spec.runner.securityContext.runAsUser 0 is root while runAsNonRoot stays true by default; set runAsNonRoot: false too (the namespace's Pod Security level must allow root)"
type RunnerSecurityContext struct {
	// Pod-level keys.

	// +optional
	RunAsUser *int64 `json:"runAsUser,omitempty"`
	// +optional
	RunAsGroup *int64 `json:"runAsGroup,omitempty"`
	// +optional
	RunAsNonRoot *bool `json:"runAsNonRoot,omitempty"`
	// +optional
	FSGroup *int64 `json:"fsGroup,omitempty"`
	// +optional
	FSGroupChangePolicy *corev1.PodFSGroupChangePolicy `json:"fsGroupChangePolicy,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
	// +optional
	SupplementalGroupsPolicy *corev1.SupplementalGroupsPolicy `json:"supplementalGroupsPolicy,omitempty"`
	// sysctls are added to spec.runner.sysctls.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Sysctls []corev1.Sysctl `json:"sysctls,omitempty"`
	// +optional
	SeccompProfile *corev1.SeccompProfile `json:"seccompProfile,omitempty"`
	// +optional
	SELinuxOptions *corev1.SELinuxOptions `json:"seLinuxOptions,omitempty"`
	// +optional
	SELinuxChangePolicy *corev1.PodSELinuxChangePolicy `json:"seLinuxChangePolicy,omitempty"`
	// +optional
	AppArmorProfile *corev1.AppArmorProfile `json:"appArmorProfile,omitempty"`
	// +optional
	WindowsOptions *corev1.WindowsSecurityContextOptions `json:"windowsOptions,omitempty"`

	// Container-level keys, set on the runner's container (and its init containers).

	// capabilities: add is added to the defaults (drop ALL); drop replaces drop ALL.
	// +optional
	Capabilities *corev1.Capabilities `json:"capabilities,omitempty"`
	// +optional
	Privileged *bool `json:"privileged,omitempty"`
	// +optional
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation,omitempty"`
	// +optional
	ReadOnlyRootFilesystem *bool `json:"readOnlyRootFilesystem,omitempty"`
	// +optional
	ProcMount *corev1.ProcMountType `json:"procMount,omitempty"`
}
