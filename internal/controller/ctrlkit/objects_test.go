package ctrlkit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestCreateOrGetCreated: a new object is created; an existing one is read back; one the API
// server has but a lagging cache does not show yet is left as built, not an error. (A fake
// client stands in for the API server and the cache: only their answers matter here.)
func TestCreateOrGetCreated(t *testing.T) {
	ctx := context.Background()
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns"}, Data: map[string]string{"k": "stored"}}
	c := fake.NewClientBuilder().WithObjects(existing).Build()

	fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ns"}}
	if created, err := CreateOrGetCreated(ctx, c, fresh); err != nil || !created {
		t.Errorf("new object: created %v, %v", created, err)
	}
	again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns"}, Data: map[string]string{"k": "built"}}
	if created, err := CreateOrGetCreated(ctx, c, again); err != nil || created || again.Data["k"] != "stored" {
		t.Errorf("existing object: created %v, %v, data %v (want the stored one)", created, err, again.Data)
	}

	lagging := interceptor.NewClient(fake.NewClientBuilder().WithObjects(existing).Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "old")
		},
	})
	built := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns"}, Data: map[string]string{"k": "built"}}
	if created, err := CreateOrGetCreated(ctx, lagging, built); err != nil || created || built.Data["k"] != "built" {
		t.Errorf("object the cache does not show yet: created %v, %v, data %v (want it left as built)", created, err, built.Data)
	}
}
