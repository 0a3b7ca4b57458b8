package target

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// DefaultEphemeralStorage is the local disk of a Profile without spec.ephemeralStorage: room
// for the built-in images' data and logs over a long test, small enough to schedule beside
// others on a CI node.
var DefaultEphemeralStorage = resource.MustParse("2Gi")

// NotPermittedError is a target the operator refuses to build because the TestRun asks for more
// than it may have (v1alpha1.ReasonNotPermitted); any other Build error is InvalidTarget.
type NotPermittedError struct{ msg string }

func (e *NotPermittedError) Error() string { return e.msg }

// IsNotPermitted tells a refusal by policy from a spec that cannot be built.
func IsNotPermitted(err error) bool {
	var np *NotPermittedError
	return errors.As(err, &np)
}

// standard are the resources every target container is bounded in and the quota covers; any
// other is an extended resource (a GPU, hugepages) only a Profile can grant.
var standard = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// profileAmount is the Profile's total of a standard resource.
func profileAmount(p *v1alpha1.ProfileSpec, name corev1.ResourceName) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return p.CPU
	case corev1.ResourceMemory:
		return p.Memory
	}
	if p.EphemeralStorage != nil {
		return *p.EphemeralStorage
	}
	return DefaultEphemeralStorage
}

// fraction is num/den of q, rounded down, in q's own unit (millicores for CPU, bytes otherwise).
func fraction(q resource.Quantity, name corev1.ResourceName, num, den int64) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(q.MilliValue()*num/den, resource.DecimalSI)
	}
	return *resource.NewQuantity(q.Value()*num/den, resource.BinarySI)
}

// fillUnstated bounds every container of a perComponent target in every standard resource: one
// whose resources leave one out shares evenly what the other components leave of the profile.
// Without it, such a container would be refused by the namespace quota (cpu, memory) or run
// without a bound (ephemeral-storage, and everything in a shared namespace, which has no quota).
func fillUnstated(components []v1alpha1.Component, containers []corev1.Container, p *v1alpha1.ProfileSpec) error {
	for _, name := range standard {
		var missing []int
		left := profileAmount(p, name)
		for i := range containers {
			if q, ok := containers[i].Resources.Limits[name]; ok {
				left.Sub(q)
			} else {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if left.Sign() <= 0 {
			total := profileAmount(p, name)
			return fmt.Errorf("component %q states no %s, and the other components take all of the profile's %s; "+
				"give it resources.limits.%s, or give the others less", components[missing[0]].Name, name, total.String(), name)
		}
		share := fraction(left, name, 1, int64(len(missing)))
		for _, i := range missing {
			res := &containers[i].Resources
			if res.Limits == nil {
				res.Limits = corev1.ResourceList{}
			}
			if res.Requests == nil {
				res.Requests = corev1.ResourceList{}
			}
			res.Limits[name] = share
			if _, ok := res.Requests[name]; !ok {
				res.Requests[name] = share
			}
		}
	}
	return nil
}

// fitProfile refuses a target whose containers ask more than the profile: in total more of a
// standard resource than it has, an extended resource it does not grant (NotPermitted), or more
// of one than it grants. It holds in a shared target namespace, where no quota does.
func fitProfile(containers []corev1.Container, pod *corev1.ResourceRequirements, p *v1alpha1.ProfileSpec) error {
	granted := map[corev1.ResourceName]resource.Quantity{}
	for _, name := range standard {
		granted[name] = profileAmount(p, name)
	}
	for name, q := range p.ExtendedResources {
		granted[name] = q
	}
	type use struct {
		total resource.Quantity
		by    []string
	}
	asked := map[corev1.ResourceName]*use{}
	add := func(who string, res *corev1.ResourceRequirements) error {
		names := map[corev1.ResourceName]bool{}
		for name := range res.Limits {
			names[name] = true
		}
		for name := range res.Requests {
			names[name] = true
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if _, ok := granted[name]; !ok {
				return &NotPermittedError{fmt.Sprintf("%s asks for %s, which the profile does not grant (its spec.extendedResources); "+
					"remove it from the component's resources, or use a Profile that grants it (kubectl get profiles; an admin sets extendedResources)", who, name)}
			}
			// A request above its limit is refused by the API server; the larger is what counts.
			q := res.Limits[name]
			if r, ok := res.Requests[name]; ok && r.Cmp(q) > 0 {
				q = r
			}
			u := asked[name]
			if u == nil {
				u = &use{}
				asked[name] = u
			}
			u.total.Add(q)
			u.by = append(u.by, fmt.Sprintf("%s %s", who, q.String()))
		}
		return nil
	}
	if pod != nil {
		if err := add("the pod", pod); err != nil {
			return err
		}
	}
	for i := range containers {
		if err := add(fmt.Sprintf("component %q", containers[i].Name), &containers[i].Resources); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(asked)) {
		u, limit := asked[name], granted[name]
		if u.total.Cmp(limit) > 0 {
			return fmt.Errorf("the target asks for %s of %s (%s), more than the profile's %s; lower the components' resources or shares, "+
				"or pick a bigger profile", u.total.String(), name, strings.Join(u.by, ", "), limit.String())
		}
	}
	return nil
}

// refuseSecretRefs refuses a target in a shared namespace that reads a Secret: the kubelet
// hands a pod any Secret of its namespace it names, and there that includes the other runs'
// copied pull Secrets, whose names can be computed, and the admin's own.
func refuseSecretRefs(components []v1alpha1.Component) error {
	for i := range components {
		for j, e := range components[i].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return &NotPermittedError{fmt.Sprintf("spec.target.components[%d].env[%d] (%s of component %q) reads Secret %q: "+
					"in the shared target namespace every run's Secrets sit side by side, so a target may read none; "+
					"pass the value in env[].value, or have it installed without --target-namespace (a namespace per run)",
					i, j, e.Name, components[i].Name, e.ValueFrom.SecretKeyRef.Name)}
			}
		}
	}
	return nil
}

// quotaHard is the target namespace's quota: requests and limits of cpu, memory and
// ephemeral-storage at the profile's, and the extended resources it grants (quota counts those
// by request only). Anything else a pod asks for is refused at build time (fitProfile).
func quotaHard(p *v1alpha1.ProfileSpec) corev1.ResourceList {
	es := profileAmount(p, corev1.ResourceEphemeralStorage)
	hard := corev1.ResourceList{
		corev1.ResourceRequestsCPU:              p.CPU,
		corev1.ResourceLimitsCPU:                p.CPU,
		corev1.ResourceRequestsMemory:           p.Memory,
		corev1.ResourceLimitsMemory:             p.Memory,
		corev1.ResourceRequestsEphemeralStorage: es,
		corev1.ResourceLimitsEphemeralStorage:   es,
	}
	for name, q := range p.ExtendedResources {
		hard[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q
	}
	return hard
}
