package main

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Where a namespaced install grants a permission of the manager's ClusterRole.
type scope int

const (
	// inWatched: a Role in every watched namespace and in the target namespace.
	inWatched scope = iota
	// inCluster: the small ClusterRole, for what is cluster-scoped.
	inCluster
)

// clusterKeeps are the cluster-scoped resources the manager's markers name, with the verbs a
// namespaced install keeps of them: it reads Profiles, the TestRun's namespace (Pod Security)
// and the target namespace (that it exists), counts nodes for spec.separate, reads the Kueue
// ResourceFlavors a queued run was admitted on, and checks the tokens of whoever scrapes its
// metrics; it never creates, labels or deletes a namespace.
// The kubelet summary (nodes/stats) is read as an identity of its own (internal/rbac/kubeletstats).
var clusterKeeps = map[string][]string{
	"fleetbench.dev/profiles":                   {"list", "watch"},
	"/namespaces":                               {"get"},
	"/nodes":                                    {"list"},
	"kueue.x-k8s.io/resourceflavors":            {"get"},
	"authentication.k8s.io/tokenreviews":        {"create"},
	"authorization.k8s.io/subjectaccessreviews": {"create"},
}

// knownClusterScoped are cluster-scoped resources a marker might name one day: the split fails
// on one clusterKeeps does not decide, rather than granting it in a Role where it means nothing.
var knownClusterScoped = []string{
	"/namespaces", "/nodes", "/nodes/proxy", "/nodes/stats", "/nodes/status", "/persistentvolumes", "/componentstatuses",
	"rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings",
	"apiextensions.k8s.io/customresourcedefinitions", "storage.k8s.io/storageclasses", "storage.k8s.io/volumeattachments",
	"storage.k8s.io/csidrivers", "storage.k8s.io/csinodes", "scheduling.k8s.io/priorityclasses", "node.k8s.io/runtimeclasses",
	"certificates.k8s.io/certificatesigningrequests", "admissionregistration.k8s.io/validatingwebhookconfigurations",
	"admissionregistration.k8s.io/mutatingwebhookconfigurations", "fleetbench.dev/profiles", "metrics.k8s.io/nodes",
	"authentication.k8s.io/tokenreviews", "authorization.k8s.io/subjectaccessreviews", "kueue.x-k8s.io/resourceflavors",
	"kueue.x-k8s.io/clusterqueues", "kueue.x-k8s.io/cohorts", "kueue.x-k8s.io/topologies",
}

// notHere are what the manager's ClusterRole must never hold: leases belong in the manager's
// own namespace only (internal/rbac/leaderelection), core events are the leader elector's
// only (the controllers record events.k8s.io ones), the runners' proxy has a role of its own
// (internal/rbac/runnerproxy), node stats are another identity's (internal/rbac/kubeletstats),
// and nodes/proxy, which opens the kubelet's exec, is no one's.
var notHere = []string{"coordination.k8s.io/leases", "/events", "/nodes/proxy", "/nodes/stats", "/pods/proxy", "/serviceaccounts/token"}

// Split is the manager's ClusterRole cut for a namespaced install.
type Split struct {
	Namespaced, Cluster []rbacv1.PolicyRule
}

// split cuts rules per resource into the three scopes, each rule keeping its verbs (for
// cluster-scoped resources, only those clusterKeeps names).
func split(rules []rbacv1.PolicyRule) (Split, error) {
	var out Split
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
			return Split{}, fmt.Errorf("rule %v: non-resource URLs and resource names are not split; decide their scope here", rule)
		}
		byScope := map[scope][]string{}
		for _, res := range rule.Resources {
			sc, err := scopeOf(rule.APIGroups, res)
			if err != nil {
				return Split{}, err
			}
			byScope[sc] = append(byScope[sc], res)
		}
		if res := byScope[inWatched]; len(res) > 0 {
			out.Namespaced = append(out.Namespaced, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: res, Verbs: rule.Verbs})
		}
		for _, res := range byScope[inCluster] {
			keep := clusterKeeps[rule.APIGroups[0]+"/"+res]
			verbs := slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return !slices.Contains(keep, v) })
			if len(verbs) > 0 {
				out.Cluster = append(out.Cluster, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: []string{res}, Verbs: verbs})
			}
		}
	}
	return out, nil
}

// scopeOf is where a resource of these API groups is granted; every group must agree.
func scopeOf(groups []string, resource string) (scope, error) {
	var found []scope
	for _, g := range groups {
		key := g + "/" + resource
		_, kept := clusterKeeps[key]
		switch {
		case kept:
			found = append(found, inCluster)
		case slices.Contains(notHere, key):
			return 0, fmt.Errorf("%s does not belong in the manager's ClusterRole: give it the role of its own under internal/rbac", key)
		case slices.Contains(knownClusterScoped, key):
			return 0, fmt.Errorf("%s is cluster-scoped and clusterKeeps does not say what a namespaced install keeps of it", key)
		default:
			found = append(found, inWatched)
		}
	}
	if len(groups) > 1 && (len(slices.Compact(slices.Clone(found))) != 1 || found[0] == inCluster) {
		return 0, fmt.Errorf("resource %s of groups %v: give cluster-scoped resources a rule of their own group", resource, groups)
	}
	return found[0], nil
}
