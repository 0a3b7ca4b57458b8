package plugin

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
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

// maxKeptListed bounds the kept records listed from one namespace (metadata only, in pages), as
// the manager's own listing is bounded.
const maxKeptListed = 1000

// KeptRecords reads the namespace's kept records whose labels match sel, newest completed first,
// at most limit of them: a metadata-only list, then one Get each, so no more than limit records'
// data is read. A look-alike (a ConfigMap with the label whose name is not that of the run and
// UID it records) is left out unread, as the manager leaves it out; a record that cannot be read
// or decoded is left out and named in unread. The plugin holds no sealing key: as KeptBaseline,
// it treats the bytes as the namespace's to write, bounded by compare.DecodeRecord.
func KeptRecords(ctx context.Context, c client.Reader, ns string, sel labels.Selector, limit int) (recs []compare.Record, unread []string, err error) {
	req, err := labels.NewRequirement(naming.LabelKeptResults, selection.Equals, []string{"true"})
	if err != nil {
		return nil, nil, err
	}
	sel = sel.Add(*req)
	type ref struct {
		name, run, uid string
		at             time.Time
	}
	var refs []ref
	cont := ""
	for listed := 0; listed < maxKeptListed; {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}, client.Limit(250)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := c.List(ctx, &list, opts...); err != nil {
			if apierrors.IsForbidden(err) {
				return nil, nil, fmt.Errorf("you may not list the kept records: reading them needs list and get on configmaps in namespace %s: %w", ns, err)
			}
			return nil, nil, err
		}
		for _, o := range list.Items {
			a := o.Annotations
			r := ref{name: o.Name, run: a[naming.AnnotationKeptName], uid: a[naming.AnnotationKeptUID]}
			r.at, _ = time.Parse(time.RFC3339, a[naming.AnnotationKeptCompletion])
			if r.run != "" && r.uid != "" && o.Name == naming.KeptResults(r.run, r.uid) {
				refs = append(refs, r)
			}
		}
		listed += len(list.Items)
		if cont = list.Continue; cont == "" {
			break
		}
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].at.After(refs[j].at) })
	if limit > 0 && len(refs) > limit {
		refs = refs[:limit]
	}
	for _, r := range refs {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted by retention since the list
			}
			unread = append(unread, fmt.Sprintf("%s: %v", r.name, err))
			continue
		}
		rec, err := compare.KeptRecordIn(&cm, r.run, r.uid)
		if err != nil {
			unread = append(unread, fmt.Sprintf("%s: %v", r.name, err))
			continue
		}
		recs = append(recs, rec)
	}
	return recs, unread, nil
}
