package admit

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// Kept results: a Succeeded run's compare.Record in a ConfigMap no TestRun owns, so it is still
// a baseline after its TestRun was deleted (TTL, a pipeline's prune). It carries
// naming.LabelKeptResults, not LabelTestRun: the manager's cache (which holds what carries
// LabelTestRun, without data or annotations) never holds kept records; they are read uncached,
// by label, metadata only, within maxKeptListed.

// DefaultKeptRecords is how many kept records a namespace holds (--kept-results-per-namespace):
// the oldest beyond it are deleted when a run keeps its own.
const DefaultKeptRecords = 20

// maxKeptListed bounds the kept records read from one namespace (metadata only, in pages).
const maxKeptListed = 1000

// maxKeptReferences bounds the records retention spares as some run's fixed reference, newest
// first, beyond the retention count: the annotation that marks them is a tenant's to write too.
const maxKeptReferences = 5

// keptRef is a kept record as its metadata describes it.
type keptRef struct {
	meta       metav1.PartialObjectMetadata
	run, uid   string
	verdict    string
	completion time.Time
}

// keptRefOf reads a kept record's metadata; ok is false for a look-alike: one whose name is not
// naming.KeptResults of its recorded run name and UID, or without a completion time. Only those
// are ever read as a baseline or deleted by retention.
func keptRefOf(o metav1.PartialObjectMetadata) (keptRef, bool) {
	a := o.Annotations
	ref := keptRef{meta: o, run: a[naming.AnnotationKeptName], uid: a[naming.AnnotationKeptUID], verdict: a[naming.AnnotationKeptVerdict]}
	t, err := time.Parse(time.RFC3339, a[naming.AnnotationKeptCompletion])
	ref.completion = t
	ok := err == nil && ref.run != "" && ref.uid != "" && o.Labels[naming.LabelKeptResults] == "true" &&
		o.Name == naming.KeptResults(ref.run, ref.uid)
	return ref, ok
}

// KeptLabels are the labels a run's kept record carries: fleetbench's kept-results label and
// run name, and the TestRun's own labels (so a baseline selector matches them after the run is
// gone) but for those under fleetbench's prefix.
func KeptLabels(run *v1alpha1.TestRun) map[string]string {
	out := map[string]string{}
	for k, v := range run.Labels {
		if !strings.HasPrefix(k, naming.LabelPrefix) {
			out[k] = v
		}
	}
	out[naming.LabelKeptResults] = "true"
	out[naming.LabelKeptRun] = naming.KeptRunLabel(run.Name)
	return out
}

// CreateKeptRecord writes the run's Record once, unowned. A ConfigMap of that name that records
// another UID is not the run's: it is left alone and the record is not kept (errKeptForeign).
func (r *Stage) CreateKeptRecord(ctx context.Context, run *v1alpha1.TestRun, rec compare.Record) error {
	data, err := compare.EncodeRecord(rec)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeptTooLarge, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: naming.KeptResults(run.Name, string(run.UID)), Namespace: run.Namespace, Labels: KeptLabels(run),
		Annotations: map[string]string{
			naming.AnnotationKeptName: run.Name, naming.AnnotationKeptUID: string(run.UID),
			naming.AnnotationKeptCompletion: rec.Run.CompletionTime.UTC().Format(time.RFC3339),
			naming.AnnotationKeptVerdict:    rec.Run.Verdict,
		}},
		BinaryData: map[string][]byte{naming.KeptRecordKey: data}}
	r.Seal(cm)
	err = r.Create(ctx, cm)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	var have corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), &have); err != nil {
		return client.IgnoreNotFound(err)
	}
	if have.Annotations[naming.AnnotationKeptUID] != string(run.UID) {
		return ErrKeptForeign
	}
	return nil // kept by an earlier reconcile of this run
}

var (
	ErrKeptForeign  = fmt.Errorf("a ConfigMap of the kept record's name exists and records another run")
	ErrKeptTooLarge = fmt.Errorf("the record is too large to keep")
)

// listKept is the namespace's kept records, metadata only (their data is read when compared),
// look-alikes left out, newest first.
func (r *Stage) listKept(ctx context.Context, ns string) ([]keptRef, error) {
	var out []keptRef
	cont := ""
	for listed := 0; listed < maxKeptListed; {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabels{naming.LabelKeptResults: "true"}, client.Limit(250)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := r.APIReader.List(ctx, &list, opts...); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			if ref, ok := keptRefOf(o); ok {
				out = append(out, ref)
			}
		}
		listed += len(list.Items)
		if cont = list.Continue; cont == "" {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].completion.After(out[j].completion) })
	return out, nil
}

// PruneKept deletes the namespace's oldest kept records beyond the retention count, sparing
// up to maxKeptReferences that runs pinned as their fixed reference; only kept records whose
// name matches their recorded run and UID (keptRefOf), each exactly as listed.
func (r *Stage) PruneKept(ctx context.Context, ns string) {
	keep := r.KeptRecords
	if keep <= 0 {
		keep = DefaultKeptRecords
	}
	refs, err := r.listKept(ctx, ns)
	if err != nil {
		logf.FromContext(ctx).Info("listing kept records for retention failed", "error", err.Error())
		return
	}
	kept, spared := 0, 0
	for _, ref := range refs { // newest first
		if ref.meta.Annotations[naming.AnnotationKeptReference] == "true" && spared < maxKeptReferences {
			spared++
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		m := ref.meta
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID}}
		if err := rc.DeleteExact(ctx, r.Client, cm); err != nil {
			logf.FromContext(ctx).Info("deleting a kept record beyond retention failed", "configMap", m.Name, "error", err.Error())
		}
	}
}

// ReadKept reads the kept record of the run name with uid, decoding it within the process-wide
// decode budget (measure.DecodeMemory): its bytes are whatever the namespace's tenants wrote.
func (r *Stage) ReadKept(ctx context.Context, ns, name, uid string) (compare.Record, error) {
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.KeptResults(name, uid)}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return compare.Record{}, fmt.Errorf("the kept record of %s is gone (deleted, or beyond the retention count)", name)
		}
		return compare.Record{}, err
	}
	if err := r.Unseal(&cm); err != nil {
		return compare.Record{}, err
	}
	release, err := measure.DecodeMemory.Acquire(ctx, compare.RecordDecodeCost)
	if err != nil {
		return compare.Record{}, err
	}
	defer release()
	return compare.KeptRecordIn(&cm, name, uid)
}

// keptMatches says whether a kept record's labels match sel.
func keptMatches(ref keptRef, sel labels.Selector) bool {
	return sel.Matches(labels.Set(ref.meta.Labels))
}

// MarkReference marks the kept record of the run name with uid as a run's fixed reference, so
// retention spares it. A record that is gone is left so: the comparison says it is gone. (An
// update of the record as read, not a patch: the manager holds no patch on ConfigMaps.)
func (r *Stage) MarkReference(ctx context.Context, ns, name, uid string) error {
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.KeptResults(name, uid)}, &cm); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := keptRefOf(metav1.PartialObjectMetadata{ObjectMeta: cm.ObjectMeta}); !ok || cm.Annotations[naming.AnnotationKeptUID] != uid ||
		cm.Annotations[naming.AnnotationKeptReference] == "true" {
		return nil
	}
	cm.Annotations[naming.AnnotationKeptReference] = "true"
	return client.IgnoreNotFound(r.Update(ctx, &cm))
}

// KeptMatching reads the newest limit kept records of ns whose labels match sel, but the run
// skipUID's own, oldest first. A record that cannot be read (its seal does not verify, its
// bytes are not a record) is left out and counted in the notes; the API server's errors and a
// budget's wait cut short are returned.
func (r *Stage) KeptMatching(ctx context.Context, ns string, sel labels.Selector, limit int, skipUID string) ([]compare.Record, []string, error) {
	refs, err := r.listKept(ctx, ns)
	if err != nil {
		return nil, nil, err
	}
	var out []compare.Record
	unreadable := 0
	for _, ref := range refs { // newest first
		if len(out)+unreadable >= limit {
			break
		}
		if ref.uid == skipUID || !keptMatches(ref, sel) {
			continue
		}
		rec, err := r.ReadKept(ctx, ns, ref.run, ref.uid)
		switch {
		case err != nil && (ctx.Err() != nil || rc.IsAPIError(err)):
			return nil, nil, err
		case err != nil:
			unreadable++
			continue
		}
		out = append(out, rec)
	}
	slices.Reverse(out)
	var notes []string
	if unreadable > 0 {
		notes = append(notes, fmt.Sprintf("%d kept records could not be read (tampered or not a record) and were left out", unreadable))
	}
	return out, notes, nil
}
