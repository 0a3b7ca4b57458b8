// Package kubelettoken holds only the RBAC marker that lets the manager request tokens of the
// kubelet-stats ServiceAccount (kubelet.Summaries: TokenRequest, 10 minutes, renewed at half),
// generated into config/rbac/kubelet_token/role.yaml: a Role in the manager's own namespace
// (the chart puts it in the release's, naming its <fullname>-kubelet-stats), for that one
// ServiceAccount by name. Only installs that read kubelets (targetMetrics auto or kubelet) have it.
//
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create,resourceNames=fleetbench-kubelet-stats,namespace=fleetbench-system
package kubelettoken
