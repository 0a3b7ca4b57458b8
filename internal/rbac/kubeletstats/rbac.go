// Package kubeletstats holds only the RBAC marker of the kubelet summary the manager samples
// target CPU and memory from (testrun.APITargetStats.NodeSummary: GET
// /api/v1/nodes/<node>/proxy/stats/summary), generated into config/rbac/kubelet_stats/role.yaml.
// It is a ClusterRole of its own because nodes/proxy reaches every kubelet API the verb
// allows: the chart grants it only where the manager may read the kubelet (targetMetrics auto
// or kubelet), get only (create would be exec into any pod).
//
// +kubebuilder:rbac:groups="",resources=nodes/proxy,verbs=get
package kubeletstats
