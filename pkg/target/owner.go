package target

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// ownedLabels are what the metadata of a target's own namespace and of each object it makes
// carries: the run's labels and its UID (naming.LabelTestRunUID). Selectors and pod templates
// keep the labels without the UID, so the objects of runs started before it still match.
func ownedLabels(tr *v1alpha1.TestRun, labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[naming.LabelTestRunUID] = string(tr.UID)
	return out
}

// OwnedBy says whether obj (a target namespace, or an object in a shared one) was provably made
// for run, so the operator may delete it or work in it: it names the run and carries its UID.
// A name alone proves nothing: another tenant's namespace may read alike, and a TestRun deleted
// and made again has the same name. One exception: an object made by an operator that wrote no
// UID yet is the run's when it names the run and was made no earlier than the run was.
func OwnedBy(obj metav1.Object, run *v1alpha1.TestRun) bool {
	l := obj.GetLabels()
	if run.Name == "" || l[naming.LabelTestRun] != run.Name || l[naming.LabelTestRunNS] != run.Namespace {
		return false
	}
	if uid, labelled := l[naming.LabelTestRunUID]; labelled {
		return run.UID != "" && uid == string(run.UID)
	}
	created := obj.GetCreationTimestamp()
	return !created.IsZero() && !created.Before(&run.CreationTimestamp)
}

// OwnerUID is the UID of the TestRun obj was made for, "" if it carries none (then it is not
// fleetbench's to sweep).
func OwnerUID(obj metav1.Object) string { return obj.GetLabels()[naming.LabelTestRunUID] }
