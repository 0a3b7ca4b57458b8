package testrun

// The operator's permissions, generated into config/rbac/role.yaml and the chart.
// It provisions a target namespace per TestRun (with quota, network policy, workloads and
// services), runs runner Jobs, reads runner logs for results, reaches runners' REST API
// through pods/proxy when it runs outside the cluster, and samples target CPU and memory
// from the kubelet summary API through nodes/proxy, or from metrics.k8s.io.
//
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns;capacityplans,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns/status;capacityplans/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=fleetbench.dev,resources=testruns/finalizers;capacityplans/finalizers,verbs=update
// +kubebuilder:rbac:groups=fleetbench.dev,resources=profiles,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces;configmaps;services;resourcequotas;pods,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/log;nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=pods/proxy;nodes/proxy,verbs=get;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete;deletecollection
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods;nodes,verbs=get;list
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
