package ctrlkit

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteExact deletes obj, as read, and nothing else: the UID precondition makes the API server
// refuse it if the object of that name is by now another one (deleted and made again, perhaps by
// someone else), which then is not touched. Gone, or replaced: nil, nothing to delete.
func DeleteExact(ctx context.Context, c client.Writer, obj client.Object) error {
	uid := obj.GetUID()
	if uid == "" {
		panic("DeleteExact of an object not read from the API server") // a programming error
	}
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
