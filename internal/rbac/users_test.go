package rbac

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestUserRolesCannotForgeTheManagersRecords: the roles aggregated into edit/admin and view let a
// tenant write TestRuns and CapacityPlans (their specs) but never what the manager writes: the
// status subresources (verdicts, results), the finalizers subresources (owner references that
// block deletion) or Profiles (the admin's sizes).
func TestUserRolesCannotForgeTheManagersRecords(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "config", "rbac", "user_roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	read := []string{"get", "list", "watch"}
	seen := 0
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		seen++
		for _, k := range grants(role.Rules) {
			resource, verb, _ := strings.Cut(k, " ")
			managers := strings.HasSuffix(resource, "/status") || strings.HasSuffix(resource, "/finalizers") || resource == "fleetbench.dev/profiles"
			if managers && !slices.Contains(read, verb) {
				t.Errorf("%s grants %s: a tenant could forge what the manager writes", role.Name, k)
			}
			if role.Name == "fleetbench-view" && !slices.Contains(read, verb) {
				t.Errorf("fleetbench-view grants %s", k)
			}
		}
	}
	if seen != 2 {
		t.Errorf("config/rbac/user_roles.yaml holds %d roles, want fleetbench-edit and fleetbench-view", seen)
	}
}
