package ctrlkit

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateOrGet creates obj, or loads the existing one of the same name: children have
// deterministic names, so a repeated reconcile finds what an earlier one made.
func CreateOrGet(ctx context.Context, c client.Client, obj client.Object) error {
	_, err := CreateOrGetCreated(ctx, c, obj)
	return err
}

// CreateOrGetCreated is CreateOrGet that also says whether obj was created now, so obj holds
// what the API server made of this very spec. It reads the (cached) client first: a create that
// is refused as a duplicate is still a write. An object the API server has but the cache has not
// seen yet (the reconcile just before created it) is left as built.
func CreateOrGetCreated(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
		return false, err
	}
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return false, client.IgnoreNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}
	return err == nil, err
}

// PatchStatus writes obj's status as a merge patch against before, unless changed is false:
// an empty merge patch is still a write. A deleted object has no status to keep.
func PatchStatus(ctx context.Context, c client.Client, before, obj client.Object, changed bool) error {
	if !changed {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}

// IsAPIError says whether err is the API server's (retried) rather than the caller's data
// (final): a kept record that cannot be read is the latter.
func IsAPIError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}
