package plugin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// KeptBaseline reads the kept record of the run's comparison baseline, whose series the HTML
// report draws over the run's: one Get by the name the controller gave it (never a list), in the
// run's namespace. When it cannot be read (gone by retention, the user may not read ConfigMaps
// there, not a kept record) the record is nil and why says so; the report is written anyway.
// Its bytes are the namespace's to write: compare.DecodeRecord bounds what it reads.
func KeptBaseline(ctx context.Context, c client.Reader, run *v1alpha1.TestRun) (rec *compare.Record, why string) {
	cmp := run.Status.Comparison
	if cmp == nil || cmp.Baseline == nil {
		return nil, ""
	}
	b := cmp.Baseline
	if b.UID == "" {
		return nil, "the comparison does not record the baseline's UID, which names its kept record"
	}
	name := naming.KeptResults(b.Name, b.UID)
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, &cm); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Sprintf("its kept record (ConfigMap %s) is gone: deleted, or beyond the retention count", name)
		case apierrors.IsForbidden(err):
			return nil, fmt.Sprintf("you may not read its kept record (ConfigMap %s): reading it needs get on configmaps in namespace %s", name, run.Namespace)
		}
		return nil, fmt.Sprintf("reading its kept record (ConfigMap %s): %v", name, err)
	}
	r, err := compare.KeptRecordIn(&cm, b.Name, b.UID)
	if err != nil {
		return nil, fmt.Sprintf("its kept record (ConfigMap %s) is not readable: %v", name, err)
	}
	return &r, ""
}
