package admission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestRolesNameEveryVerbAndResource: the manager's ClusterRole (generated from the
// +kubebuilder:rbac markers), its namespaced install's roles and the user roles grant nothing
// through a wildcard, so a reviewer
// reads exactly what the operator may do. The chart's roles are generated from these files.
func TestRolesNameEveryVerbAndResource(t *testing.T) {
	files, err := filepath.Glob("../../config/rbac/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The namespaced install's Role and ClusterRole, cut from the manager's by hack/rbacsplit.
	namespaced, err := filepath.Glob("../../config/rbac/namespaced/*.yaml")
	if err != nil || len(namespaced) != 2 {
		t.Fatalf("config/rbac/namespaced: %v %v, want its two roles (make manifests)", namespaced, err)
	}
	files = append(files, namespaced...)
	// The roles granted apart, where used: leader election, the kubelet summary, the runner proxy.
	apart, err := filepath.Glob("../../config/rbac/*/role.yaml")
	if err != nil || len(apart) < 4 {
		t.Fatalf("config/rbac/*/role.yaml: %v %v, want the leader election, kubelet stats and runner proxy roles (make manifests)", apart, err)
	}
	files = append(files, apart...)
	roles := map[string]rbacv1.ClusterRole{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var role rbacv1.ClusterRole
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if role.Kind != "ClusterRole" && role.Kind != "Role" {
				continue
			}
			roles[role.Name] = role
			for i, rule := range role.Rules {
				for field, values := range map[string][]string{"apiGroups": rule.APIGroups, "resources": rule.Resources, "verbs": rule.Verbs,
					"resourceNames": rule.ResourceNames, "nonResourceURLs": rule.NonResourceURLs} {
					if slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, "*") }) {
						t.Errorf("%s %s rule %d: %s %v holds a wildcard; name each one", f, role.Name, i, field, values)
					}
				}
			}
		}
	}
	for name, aggregateTo := range map[string][]string{"fleetbench-edit": {"edit", "admin"}, "fleetbench-view": {"view"}} {
		role, ok := roles[name]
		if !ok {
			t.Errorf("no ClusterRole %s in config/rbac", name)
			continue
		}
		for _, to := range aggregateTo {
			if role.Labels["rbac.authorization.k8s.io/aggregate-to-"+to] != "true" {
				t.Errorf("%s is not aggregated into %s: labels %v", name, to, role.Labels)
			}
		}
	}
	if len(roles) < 8 {
		t.Errorf("read %d roles from config/rbac, want the manager's, its namespaced ones, the three granted apart and the two user roles", len(roles))
	}
}
