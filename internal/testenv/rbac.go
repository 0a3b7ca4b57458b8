package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// managerUser is who envtest managers act as: bound to the operator's generated ClusterRole and
// nothing else, so a controller that needs a verb the role lacks fails its tests, as it would
// in a cluster.
const managerUser = "fleetbench-manager"

// AsManager binds managerUser to config/rbac/role.yaml and returns a config that impersonates it.
func AsManager(e *Env) (*rest.Config, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		return nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: managerUser}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: managerUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser}},
	}
	ctx := context.Background()
	if err := e.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := e.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: managerUser}
	return cfg, nil
}
