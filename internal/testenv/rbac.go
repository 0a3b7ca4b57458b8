package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
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
	return AsManagerNamed(e, managerUser)
}

// AsManagerNamed is AsManager for a user of its own: a test that grants it more (Grant)
// changes no other test's manager.
func AsManagerNamed(e *Env, user string) (*rest.Config, error) {
	role := &rbacv1.ClusterRole{}
	if err := readRole("role.yaml", role); err != nil {
		return nil, err
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: user}
	if err := createAll(e.Client, role, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}); err != nil {
		return nil, err
	}
	if err := WaitAllowed(e.Client, user, "", role.Rules); err != nil {
		return nil, err
	}
	return impersonate(e, user), nil
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
	if err := WaitAllowed(e.Client, namespacedUser, "", cluster.Rules); err != nil {
		return nil, err
	}
	for _, name := range append(slices.Clone(ns.Watch), ns.Target) {
		if name == "" {
			continue
		}
		if err := WaitAllowed(e.Client, namespacedUser, name, role.Rules); err != nil {
			return nil, err
		}
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

// Grant binds user to one of the roles only some installs grant the manager
// (config/rbac/<dir>/role.yaml, generated from internal/rbac/<package>): a ClusterRole
// cluster-wide, a Role in namespace ns, which must exist.
func Grant(e *Env, user, dir, ns string) error {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", dir, "role.yaml"))
	if err != nil {
		return err
	}
	var kind struct{ Kind string }
	if err := yaml.Unmarshal(raw, &kind); err != nil {
		return fmt.Errorf("config/rbac/%s/role.yaml: %w", dir, err)
	}
	name := user + "-" + dir
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	if kind.Kind == "Role" {
		role := &rbacv1.Role{}
		if err := yaml.Unmarshal(raw, role); err != nil {
			return err
		}
		role.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns}
		if err := createAll(e.Client, role, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   subjects,
		}); err != nil {
			return err
		}
		return WaitAllowed(e.Client, user, ns, role.Rules)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		return err
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: name}
	if err := createAll(e.Client, role, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   subjects,
	}); err != nil {
		return err
	}
	return WaitAllowed(e.Client, user, "", role.Rules)
}

// WaitAllowed waits until the API server's authorizer allows user every rule's first verb on
// its first resource or URL (in namespace ns for resources; "" cluster-wide). The authorizer
// learns of a new binding from its own watch: on a loaded machine a call made right after the
// Create is still refused, which a test would read as a missing verb.
func WaitAllowed(c client.Client, user, ns string, rules []rbacv1.PolicyRule) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, rule := range rules {
		if len(rule.Verbs) == 0 {
			continue
		}
		spec := authorizationv1.SubjectAccessReviewSpec{User: user}
		what := rule.Verbs[0] + " "
		switch {
		case len(rule.NonResourceURLs) > 0:
			spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: rule.NonResourceURLs[0], Verb: rule.Verbs[0]}
			what += rule.NonResourceURLs[0]
		case len(rule.APIGroups) > 0 && len(rule.Resources) > 0:
			resource, subresource, _ := strings.Cut(rule.Resources[0], "/")
			spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: ns, Verb: rule.Verbs[0],
				Group: rule.APIGroups[0], Resource: resource, Subresource: subresource}
			if len(rule.ResourceNames) > 0 {
				spec.ResourceAttributes.Name = rule.ResourceNames[0]
			}
			what += rule.Resources[0]
		default:
			continue
		}
		for {
			asked := &authorizationv1.SubjectAccessReview{Spec: spec}
			if err := c.Create(context.Background(), asked); err != nil {
				return fmt.Errorf("asking whether %s may %s: %w", user, what, err)
			}
			if asked.Status.Allowed {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s may not %s 30 s after its binding was made: %s", user, what, asked.Status.Reason)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
