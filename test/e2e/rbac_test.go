//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUserRolesAggregate: with the chart installed, whoever the cluster's own edit role is bound
// to in a namespace may create TestRuns there, whoever view is bound to may read them only, and
// neither may change the cluster's Profiles (the cluster's aggregation controller merged the
// chart's fleetbench-edit and fleetbench-view into edit and view).
func TestUserRolesAggregate(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-rbac")
	for user, role := range map[string]string{"alice": "edit", "bob": "view"} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
		if err := e.c.Create(e.ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user, verb, resource string
		namespaced, allowed  bool
	}{
		{"alice", "create", "testruns", true, true},
		{"alice", "delete", "capacityplans", true, true},
		{"alice", "get", "profiles", false, false}, // bound in one namespace only: no cluster-wide read
		{"alice", "update", "profiles", false, false},
		{"bob", "list", "testruns", true, true},
		{"bob", "get", "capacityplans", true, true},
		{"bob", "create", "testruns", true, false},
	} {
		attrs := &authorizationv1.ResourceAttributes{Verb: tc.verb, Group: "fleetbench.dev", Resource: tc.resource}
		if tc.namespaced {
			attrs.Namespace = ns
		}
		what := fmt.Sprintf("%s may %s %s: %v", tc.user, tc.verb, tc.resource, tc.allowed)
		// The aggregation controller merges the rules a moment after the chart's roles appear.
		e.eventually(t, what, 30*time.Second, func() (bool, string) {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: tc.user, ResourceAttributes: attrs}}
			if err := e.c.Create(e.ctx, review); err != nil {
				return false, err.Error()
			}
			return review.Status.Allowed == tc.allowed, fmt.Sprintf("allowed=%v %s", review.Status.Allowed, review.Status.Reason)
		})
	}
}
