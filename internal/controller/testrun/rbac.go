package testrun

// The operator's permissions, generated into config/rbac/role.yaml and the chart: exactly the
// verbs the manager's code uses, each listed with the code that needs it in
// internal/rbac/verbs_test.go. What only some installs need has a role of its own, generated
// from internal/rbac/...: leader election (a Role in the manager's namespace: leases and their
// events), the kubelet summary (tokens of the kubelet-stats ServiceAccount, which may get
// nodes/stats; none with targetMetrics metrics-api) and the runners' REST API through the API
// server (pods/proxy; only a manager outside the cluster).
//
// A kind read only through the cache (Profiles, CapacityPlans, ResourceQuotas) needs list and
// watch, not get: the cached client never asks the API server for one object.
//
// Pods: create and delete only the pod that charges a target to its run's namespace quota
// (provision.ReconcileTargetCharge): never scheduled, owned by the run. The Job and Deployment
// creates this role holds make pods anyway; no pod is updated.
//
// Secrets: get reads a run's imagePullSecrets from its own namespace to copy them into the
// target namespace. RBAC cannot narrow get to those names cluster-wide (they are the users');
// the manager never lists or watches Secrets, so it can read only one it is named. get with
// create could mint any ServiceAccount's token (a service-account-token Secret naming it, read
// back): the ValidatingAdmissionPolicy config/rbac/secrets_policy.yaml lets the manager create
// and delete only registry credentials labelled as a target's copy, in a target namespace.
//
// The finalizers subresources are updated by no call: an API server with the
// OwnerReferencesPermissionEnforcement admission plugin asks for them to set an owner
// reference with blockOwnerDeletion (the script and result ConfigMaps and the Jobs on a
// TestRun, a plan's TestRuns on their CapacityPlan).
//
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=fleetbench.dev,resources=capacityplans,verbs=list;watch;update
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns/status;capacityplans/status,verbs=patch
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns/finalizers;capacityplans/finalizers,verbs=update
// +kubebuilder:rbac:groups=fleetbench.dev,resources=profiles,verbs=list;watch
// +kubebuilder:rbac:groups=fleetbench.dev,resources=zonestarts,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=list
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
