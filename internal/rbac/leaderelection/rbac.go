// Package leaderelection holds only the RBAC markers of the manager's leader election,
// generated into config/rbac/leader_election/role.yaml: a Role in the manager's own namespace
// (the chart puts it in the release's), never leases cluster-wide. client-go's lease lock gets,
// creates and updates one Lease; controller-runtime's elector records its events (core/v1)
// next to it.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=fleetbench-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=fleetbench-system
package leaderelection
