// Package children is the one list of the kinds of object a TestRun makes or reads as its own.
// The manager's cache (controller.CacheOptions), the TestRun controller's watches, the release of
// a target from a shared namespace, the orphan sweeper and the shape tests all read Kinds, so a
// new kind is one row here, one builder (pkg/target, pkg/runners) and one creator.
package children

import (
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Home says where a child lives.
type Home int

const (
	// RunNamespace: beside its TestRun.
	RunNamespace Home = 1 << iota
	// TargetNamespace: in the target's namespace, the run's own or the admin's shared one.
	TargetNamespace
	// ClusterScoped: the run's own target namespace itself.
	ClusterScoped
)

// Watch says how a change of a child reaches its TestRun's reconcile.
type Watch int

const (
	NotWatched Watch = iota
	// ByOwner: the TestRun is its controller owner (in the run's namespace).
	ByOwner
	// ByLabels: fleetbench's run labels name the TestRun, in whatever namespace.
	ByLabels
)

// Release says what the release of a target from an admin's shared namespace does with a child
// there; in the run's own namespace, deleting the namespace releases everything.
type Release int

const (
	NotReleased Release = iota
	// Deleted one by one, when owned by the run (and swept when its run is gone).
	Deleted
	// Waited for: pods follow their Deployment; the release waits until they are gone.
	Waited
	// DeletedByName: a copy with no label to list it by (a pull Secret), deleted by its name.
	DeletedByName
)

// Kind is one kind of child.
type Kind struct {
	// Name says what it is, as docs/architecture.md lists it.
	Name string
	// Object is an empty object of its Go type; List the list of that type.
	Object client.Object
	List   client.ObjectList
	Home   Home
	// Cached: held in the manager's cache, selected by fleetbench's labels (controller.Slim
	// keeps only what the code reads). Not cached: read from the API server when needed.
	Cached  bool
	Watch   Watch
	Release Release
	// CreatedBy is the one function that creates it ("": made by another controller, e.g. the
	// pods of a Job or Deployment).
	CreatedBy string
	// Kueue: only where Kueue's API is served.
	Kueue bool
}

// Kinds are every child of a TestRun.
var Kinds = []Kind{
	{Name: "Namespace (the run's own target namespace)", Object: &corev1.Namespace{}, List: &corev1.NamespaceList{},
		Home: ClusterScoped, Cached: true, CreatedBy: "provisionNamespace"},
	{Name: "ResourceQuota (target)", Object: &corev1.ResourceQuota{}, List: &corev1.ResourceQuotaList{},
		Home: TargetNamespace, Cached: true, CreatedBy: "createTargetObject"},
	{Name: "NetworkPolicy (target)", Object: &networkingv1.NetworkPolicy{}, List: &networkingv1.NetworkPolicyList{},
		Home: TargetNamespace, Cached: true, Release: Deleted, CreatedBy: "createTargetObject"},
	{Name: "Deployment (target)", Object: &appsv1.Deployment{}, List: &appsv1.DeploymentList{},
		Home: TargetNamespace, Cached: true, Watch: ByLabels, Release: Deleted, CreatedBy: "createTargetObject"},
	{Name: "Service (target)", Object: &corev1.Service{}, List: &corev1.ServiceList{},
		Home: TargetNamespace, Cached: true, Release: Deleted, CreatedBy: "createTargetObject"},
	{Name: "Secret (a copy of an imagePullSecret)", Object: &corev1.Secret{}, List: &corev1.SecretList{},
		Home: TargetNamespace, Release: DeletedByName, CreatedBy: "copyPullSecrets"},
	{Name: "Pod (target and runners, made by their Deployment and Jobs)", Object: &corev1.Pod{}, List: &corev1.PodList{},
		Home: RunNamespace | TargetNamespace, Cached: true, Watch: ByLabels, Release: Waited},
	{Name: "Pod (the target's charge to the run's namespace quota)", Object: &corev1.Pod{}, List: &corev1.PodList{},
		Home: RunNamespace, Cached: true, Watch: ByLabels, CreatedBy: "createTargetCharge"},
	{Name: "Job (runner)", Object: &batchv1.Job{}, List: &batchv1.JobList{},
		Home: RunNamespace, Cached: true, Watch: ByOwner, CreatedBy: "CreateRunnerJobs"},
	{Name: "Job (pre-flight)", Object: &batchv1.Job{}, List: &batchv1.JobList{},
		Home: RunNamespace, Cached: true, Watch: ByOwner, CreatedBy: "ReconcilePreflight"},
	{Name: "ConfigMap (script, script copy, results)", Object: &corev1.ConfigMap{}, List: &corev1.ConfigMapList{},
		Home: RunNamespace, Cached: true, Watch: ByOwner, CreatedBy: "CreateConfigMap"},
	{Name: "ConfigMap (kept results, owned by no TestRun)", Object: &corev1.ConfigMap{}, List: &corev1.ConfigMapList{},
		Home: RunNamespace, CreatedBy: "CreateKeptRecord"},
	{Name: "ConfigMap (kept runner capacity, owned by no TestRun)", Object: &corev1.ConfigMap{}, List: &corev1.ConfigMapList{},
		Home: RunNamespace, CreatedBy: "createCapacityRecord"},
	{Name: "PodDisruptionBudget (runners, target)", Object: &policyv1.PodDisruptionBudget{}, List: &policyv1.PodDisruptionBudgetList{},
		Home: RunNamespace | TargetNamespace, CreatedBy: "createDisruptionBudgets"},
	{Name: "Workload (Kueue's, queueing the run)", Object: &kueue.Workload{}, List: &kueue.WorkloadList{},
		Home: RunNamespace, Cached: true, Watch: ByOwner, CreatedBy: "createWorkload", Kueue: true},
	// A zoned run's (spec.zones): no owner reference, which MultiKueue would copy to the zone's
	// cluster; deleted by the run's UID label and spec.zoneOf.run (collect.DeleteZones).
	{Name: "TestRun (a zoned run's zone run, dispatched by MultiKueue)", Object: &v1alpha1.TestRun{}, List: &v1alpha1.TestRunList{},
		Home: RunNamespace, CreatedBy: "zoneRun"},
	{Name: "ZoneStart (a zoned run's start of one zone, dispatched by MultiKueue)", Object: &v1alpha1.ZoneStart{}, List: &v1alpha1.ZoneStartList{},
		Home: RunNamespace, Cached: true, Watch: ByLabels, CreatedBy: "ensureZoneStarts"},
	{Name: "Workload (Kueue's, dispatching a ZoneStart; owned by it)", Object: &kueue.Workload{}, List: &kueue.WorkloadList{},
		Home: RunNamespace, CreatedBy: "ensureZoneStarts", Kueue: true},
}

// Select is a new empty object of each Go type among kinds that pass keep, in the order of kinds.
func Select(kinds []Kind, keep func(Kind) bool) []client.Object {
	var out []client.Object
	for _, k := range kinds {
		if keep(k) && !Among(k.Object, out) {
			out = append(out, k.Object.DeepCopyObject().(client.Object))
		}
	}
	return out
}

// Lists is Select's lists, new and empty: one of each Go type among kinds that pass keep.
func Lists(kinds []Kind, keep func(Kind) bool) []client.ObjectList {
	var out []client.ObjectList
	for _, k := range kinds {
		t := reflect.TypeOf(k.List)
		if keep(k) && !slices.ContainsFunc(out, func(o client.ObjectList) bool { return reflect.TypeOf(o) == t }) {
			out = append(out, k.List.DeepCopyObject().(client.ObjectList))
		}
	}
	return out
}

// Cached are the kinds in the manager's cache; withKueue adds Kueue's.
func Cached(kinds []Kind, withKueue bool) []client.Object {
	return Select(kinds, func(k Kind) bool { return k.Cached && (withKueue || !k.Kueue) })
}

// InTargetNamespaces are the cached kinds that live in target namespaces: with a namespace of
// its own per run, the cache holds them in every namespace.
func InTargetNamespaces(kinds []Kind) []client.Object {
	return Select(kinds, func(k Kind) bool { return k.Cached && k.Home&TargetNamespace != 0 })
}

// Owned are the kinds watched through their controller owner, the TestRun.
func Owned(kinds []Kind, withKueue bool) []client.Object {
	return Select(kinds, func(k Kind) bool { return k.Watch == ByOwner && (withKueue || !k.Kueue) })
}

// Labelled are the kinds watched by fleetbench's run labels.
func Labelled(kinds []Kind) []client.Object {
	return Select(kinds, func(k Kind) bool { return k.Watch == ByLabels })
}

// Released are the lists a release from a shared namespace reads: what it deletes and, with
// waited, what it waits for.
func Released(kinds []Kind, waited bool) []client.ObjectList {
	return Lists(kinds, func(k Kind) bool { return k.Release == Deleted || (waited && k.Release == Waited) })
}

// Swept are what the orphan sweeper deletes when a run is gone: in a shared target namespace
// the kinds released one by one, else the run's own namespace.
func Swept(kinds []Kind, sharedTarget bool) []client.Object {
	if sharedTarget {
		return Select(kinds, func(k Kind) bool { return k.Release == Deleted })
	}
	return Select(kinds, func(k Kind) bool { return k.Home == ClusterScoped })
}

// SweptLists are Swept's lists.
func SweptLists(kinds []Kind, sharedTarget bool) []client.ObjectList {
	if sharedTarget {
		return Lists(kinds, func(k Kind) bool { return k.Release == Deleted })
	}
	return Lists(kinds, func(k Kind) bool { return k.Home == ClusterScoped })
}

// Among says whether objs hold an object of obj's Go type.
func Among(obj client.Object, objs []client.Object) bool {
	return slices.ContainsFunc(objs, func(o client.Object) bool { return reflect.TypeOf(o) == reflect.TypeOf(obj) })
}
