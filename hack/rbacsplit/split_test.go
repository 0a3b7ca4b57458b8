package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func TestSplit(t *testing.T) {
	rule := func(groups, resources, verbs string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: strings.Split(groups, ","), Resources: strings.Split(resources, ","), Verbs: strings.Split(verbs, ",")}
	}
	all := "create,delete,get,list,patch,update,watch"
	got, err := split([]rbacv1.PolicyRule{
		rule("", "configmaps,namespaces,pods", all),
		rule("events.k8s.io", "events", "create,patch"),
		rule("fleetbench.dev", "profiles", "get,list,watch"),
		rule("", "nodes", "get,list,watch"),
		rule("authentication.k8s.io", "tokenreviews", "create"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Split{
		Namespaced: []rbacv1.PolicyRule{rule("", "configmaps,pods", all), rule("events.k8s.io", "events", "create,patch")},
		Cluster: []rbacv1.PolicyRule{rule("", "namespaces", "get"), rule("fleetbench.dev", "profiles", "list,watch"), rule("", "nodes", "list"),
			rule("authentication.k8s.io", "tokenreviews", "create")},
	}
	for name, pair := range map[string][2][]rbacv1.PolicyRule{
		"namespaced": {got.Namespaced, want.Namespaced}, "cluster": {got.Cluster, want.Cluster},
	} {
		if !slices.EqualFunc(pair[0], pair[1], func(a, b rbacv1.PolicyRule) bool {
			return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs)
		}) {
			t.Errorf("%s rules:\n got %v\nwant %v", name, pair[0], pair[1])
		}
	}

	for _, bad := range []rbacv1.PolicyRule{
		rule("storage.k8s.io", "storageclasses", "get"), // cluster-scoped, undecided
		rule(",fleetbench.dev", "profiles", "get"),      // a cluster-scoped resource among groups
		rule("coordination.k8s.io", "leases", "get"),    // leader election's own Role
		rule("", "events", "create"),                    // the leader elector's, in its own Role
		rule("", "nodes/proxy", "get"),                  // no one's: it opens the kubelet's exec
		rule("", "nodes/stats", "get"),                  // the kubelet-stats identity's (kubeletstats)
		rule("", "serviceaccounts/token", "create"),     // kubelettoken's Role, one ServiceAccount by name
		rule("", "pods/proxy", "get"),                   // runnerproxy's own ClusterRole
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}, ResourceNames: []string{"x"}},
	} {
		if _, err := split([]rbacv1.PolicyRule{bad}); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

// TestGeneratedNamespacedRBAC: what `make manifests` wrote from the markers keeps every
// namespaced permission in the Role and lets the small ClusterRole read only (but for the
// reviews of metrics scrapers' tokens, which write nothing).
func TestGeneratedNamespacedRBAC(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "rbac")
	read := func(name string, into any) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	var full, cluster rbacv1.ClusterRole
	var role rbacv1.Role
	read("role.yaml", &full)
	read("namespaced/cluster_role.yaml", &cluster)
	read("namespaced/role.yaml", &role)
	want, err := split(full.Rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) != len(want.Namespaced) || len(cluster.Rules) != len(want.Cluster) {
		t.Errorf("config/rbac/namespaced is stale: run make manifests")
	}
	for _, r := range cluster.Rules {
		if slices.ContainsFunc(r.Resources, func(res string) bool { return res == "tokenreviews" || res == "subjectaccessreviews" }) {
			continue
		}
		if slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
			t.Errorf("the namespaced install's ClusterRole may only read: %v", r)
		}
	}
}
