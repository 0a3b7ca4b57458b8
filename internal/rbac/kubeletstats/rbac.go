// Package kubeletstats holds only the RBAC marker of the kubelet summary target CPU and memory
// are sampled from (kubelet.Summaries: GET https://<node>:<kubelet port>/stats/summary, which
// the kubelet authorizes as get on nodes/stats), generated into
// config/rbac/kubelet_stats/role.yaml. This ClusterRole is not the manager's: it is bound to a
// ServiceAccount of its own (fleetbench-kubelet-stats) whose short-lived tokens the manager
// requests (internal/rbac/kubelettoken), so the token a kubelet sees can read node stats and
// nothing else. The chart grants it only where the manager reads kubelets (targetMetrics auto or
// kubelet). nodes/proxy, which the summary took through the API server before, is not granted:
// its get also opens the kubelet's exec and attach endpoints.
//
// +kubebuilder:rbac:groups="",resources=nodes/stats,verbs=get
package kubeletstats
