package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/internal/controller"
)

// managerUser is who envtest managers act as: bound to the operator's generated ClusterRole and
// nothing else, so a controller that needs a verb the role lacks fails its tests, as it would
// in a cluster. namespacedUser is a namespaced install's manager.
const (
	managerUser    = "fleetbench-manager"
	namespacedUser = "fleetbench-namespaced-manager"
)

// AsManager binds managerUser to config/rbac/role.yaml and returns a config that impersonates it.
func AsManager(e *Env) (*rest.Config, error) {
	role := &rbacv1.ClusterRole{}
	if err := readRole("role.yaml", role); err != nil {
		return nil, err
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: managerUser}
	if err := createAll(e.Client, role, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: managerUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser}},
	}); err != nil {
		return nil, err
	}
	return impersonate(e, managerUser), nil
}

// AsNamespacedManager grants namespacedUser what the chart grants a namespaced install
// (config/rbac/namespaced): the Role in each watched namespace and the target namespace, which
// must exist, and the small ClusterRole; it returns a config that impersonates that user.
func AsNamespacedManager(e *Env, ns controller.Namespaces) (*rest.Config, error) {
	cluster, role := &rbacv1.ClusterRole{}, &rbacv1.Role{}
	if err := readRole("namespaced/cluster_role.yaml", cluster); err != nil {
		return nil, err
	}
	if err := readRole("namespaced/role.yaml", role); err != nil {
		return nil, err
	}
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: namespacedUser}}
	cluster.ObjectMeta = metav1.ObjectMeta{Name: namespacedUser}
	objs := []client.Object{cluster, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespacedUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: namespacedUser},
		Subjects:   subjects,
	}}
	for _, name := range append(slices.Clone(ns.Watch), ns.Target) {
		if name == "" {
			continue
		}
		r := role.DeepCopy()
		r.ObjectMeta = metav1.ObjectMeta{Name: namespacedUser, Namespace: name}
		objs = append(objs, r, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: namespacedUser, Namespace: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: namespacedUser},
			Subjects:   subjects,
		})
	}
	if err := createAll(e.Client, objs...); err != nil {
		return nil, err
	}
	return impersonate(e, namespacedUser), nil
}

func readRole(file string, into any) error {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", file))
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("config/rbac/%s: %w", file, err)
	}
	return nil
}

func createAll(c client.Client, objs ...client.Object) error {
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func impersonate(e *Env, user string) *rest.Config {
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}
