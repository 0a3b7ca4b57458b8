package target

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// ChargeGate is the scheduling gate the charge pod is made with and that the operator never
// removes: the pod is never scheduled, so it takes no node's capacity and its image is never
// pulled, while the API server's quota admission has charged it at its creation.
const ChargeGate = naming.LabelPrefix + "charge-only"

// chargeUID is the user the charge pod would run as; with runAsNonRoot, no privilege and a
// RuntimeDefault seccomp profile it passes the restricted Pod Security level.
const chargeUID = 65532

// Charge is the pod that charges a target to its TestRun's namespace: the target runs in a
// namespace of its own (or the admin's shared one), out of reach of the quota and LimitRange of
// the namespace the run was made in. The pod lives there, with one container per target
// container and the same requests and limits, so the namespace's ResourceQuota counts the
// target's total and its LimitRange judges each container as it would the target's. It is
// gated for good (ChargeGate). A one-machine target's pod-level budget is split evenly among
// its containers, as Build does where pod-level resources are off: a cluster that drops
// pod-level resources would otherwise charge nothing. image is the run's runner image, which
// the namespace's image policies already admit for the runners.
func Charge(tr *v1alpha1.TestRun, objs *Objects, image string) *corev1.Pod {
	var containers []corev1.Container
	names := map[string]bool{}
	for _, d := range objs.Deployments {
		spec := &d.Spec.Template.Spec
		for replica := range ptr.Deref(d.Spec.Replicas, 1) {
			for i := range spec.Containers {
				res := *spec.Containers[i].Resources.DeepCopy()
				if spec.Resources != nil {
					addShare(&res, spec.Resources, i, len(spec.Containers))
				}
				name := spec.Containers[i].Name
				if names[name] {
					name = fmt.Sprintf("%s-%d", name, replica)
				}
				names[name] = true
				containers = append(containers, chargeContainer(name, image, res))
			}
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: naming.TargetChargePod(tr.Name), Namespace: tr.Namespace, Labels: map[string]string{
			naming.LabelTestRun:   tr.Name,
			naming.LabelTestRunNS: tr.Namespace,
			naming.LabelRole:      naming.RoleTargetCharge,
		}},
		Spec: corev1.PodSpec{
			Containers:                    containers,
			SchedulingGates:               []corev1.PodSchedulingGate{{Name: ChargeGate}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](chargeUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
}

func chargeContainer(name, image string, res corev1.ResourceRequirements) corev1.Container {
	return corev1.Container{
		Name:  name,
		Image: image,
		// Were the gate ever lifted by hand, the runner image prints its version and exits.
		Args:            []string{"version"},
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources:       res,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

// addShare adds container i's share of n of the pod-level budget pod to res; the first takes
// what the even split rounds away, so the shares add up to the pod's budget exactly.
func addShare(res *corev1.ResourceRequirements, pod *corev1.ResourceRequirements, i, n int) {
	add := func(into *corev1.ResourceList, from corev1.ResourceList) {
		for name, q := range from {
			share := fraction(q, name, 1, int64(n))
			if i == 0 {
				rest := share.DeepCopy()
				rest.Mul(int64(n))
				share.Add(q)
				share.Sub(rest)
			}
			if *into == nil {
				*into = corev1.ResourceList{}
			}
			sum := (*into)[name]
			sum.Add(share)
			(*into)[name] = sum
		}
	}
	add(&res.Requests, pod.Requests)
	add(&res.Limits, pod.Limits)
}

// ChargeTotal says what a charge pod asks the namespace's quota for, e.g. "requests cpu 2,
// memory 1Gi; limits cpu 2, memory 1Gi", for a message.
func ChargeTotal(pod *corev1.Pod) string {
	total := func(pick func(*corev1.ResourceRequirements) corev1.ResourceList) string {
		sum := corev1.ResourceList{}
		for i := range pod.Spec.Containers {
			for name, q := range pick(&pod.Spec.Containers[i].Resources) {
				s := sum[name]
				s.Add(q)
				sum[name] = s
			}
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(sum)) {
			q := sum[name]
			parts = append(parts, fmt.Sprintf("%s %s", name, q.String()))
		}
		return strings.Join(parts, ", ")
	}
	return "requests " + total(func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }) +
		"; limits " + total(func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}
