// Package runnerproxy holds only the RBAC marker of the runners' REST API reached through the
// API server's pod proxy (testrun.NewProxyRunnerAPI: GET, POST, PATCH and PUT become get,
// create, patch and update on pods/proxy), generated into config/rbac/runner_proxy/role.yaml.
// Only a manager outside the cluster (make run, --runner-access=proxy) uses it; in the cluster
// the manager reaches runner pod IPs directly and the chart grants none of it (value
// runnerAccess: proxy grants it, in the watched namespaces only for a namespaced install).
// pods/proxy create reaches any port of any pod in its scope.
//
// +kubebuilder:rbac:groups="",resources=pods/proxy,verbs=get;create;patch;update
package runnerproxy
