// Package rbac's test lists every permission the manager is granted with the code that needs
// it. The roles are generated from +kubebuilder:rbac markers (internal/controller/testrun/rbac.go
// and the packages below this one); a rule with no entry here, or an entry no rule grants,
// fails: a verb is added or removed with its reason.
package rbac

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Which role grants a permission.
const (
	manager  = "role.yaml"                      // the manager's ClusterRole, every install
	election = "leader_election/role.yaml"      // a Role in the manager's own namespace
	token    = "kubelet_token/role.yaml"        // a Role there, targetMetrics auto or kubelet
	stats    = "kubelet_stats/role.yaml"        // not the manager's: the kubelet-stats ServiceAccount's
	proxy    = "runner_proxy/role.yaml"         // runnerAccess proxy (outside the cluster)
	reader   = "metrics_reader_role.yaml"       // not the manager's: whoever scrapes it
	cached   = "the manager's cache (informer)" // list and watch of a kind read through mgr.GetClient()
)

// roleFiles are every generated role, in config/rbac.
var roleFiles = []string{manager, election, token, stats, proxy, reader}

// need is why a permission is granted: the role and the code path.
type need struct{ role, why string }

// verbs maps "group/resource verb" to what needs it.
var verbs = map[string]need{
	"fleetbench.dev/testruns get":          {manager, "testrun.Reconciler.Reconcile: apiReader.Get of the TestRun"},
	"fleetbench.dev/testruns list":         {manager, cached + ": For(&TestRun{}), capacityplan Owns(&TestRun{}), phaseCollector.Collect"},
	"fleetbench.dev/testruns watch":        {manager, cached + ": For(&TestRun{}), capacityplan Owns(&TestRun{})"},
	"fleetbench.dev/testruns create":       {manager, "capacityplan.Reconciler: rc.CreateOrGetCreated of a cell's TestRun; provision.ReconcileZones: a zoned run's zone runs"},
	"fleetbench.dev/testruns update":       {manager, "testrun.Reconciler.Reconcile / reconcileDelete: add and remove the target-cleanup finalizer"},
	"fleetbench.dev/testruns delete":       {manager, "testrun.reconcileFinished: ttlSecondsAfterFinished; capacityplan reconcileDelete: its children; collect.DeleteZones: a zoned run's zone runs"},
	"fleetbench.dev/zonestarts get":        {manager, "drive.ensureZoneStarts: apiReader.Get of a ZoneStart made a moment ago, whose time every zone shares"},
	"fleetbench.dev/zonestarts list":       {manager, cached + ": Watches(&ZoneStart{}); drive.holdForZoneStart: r.Get (cached); collect.DeleteZones"},
	"fleetbench.dev/zonestarts watch":      {manager, cached + ": Watches(&ZoneStart{})"},
	"fleetbench.dev/zonestarts create":     {manager, "drive.ensureZoneStarts: a zoned run's start of each other zone"},
	"fleetbench.dev/zonestarts delete":     {manager, "collect.DeleteZones: once the zoned run ended, and on its deletion"},
	"fleetbench.dev/testruns/status patch": {manager, "rc.PatchStatus from testrun.Reconciler.Reconcile"},
	"fleetbench.dev/testruns/finalizers update": {manager, "controllerutil.SetControllerReference (blockOwnerDeletion) on the script/result " +
		"ConfigMaps and Jobs, under the OwnerReferencesPermissionEnforcement admission plugin"},
	"fleetbench.dev/capacityplans list":                {manager, cached + ": For(&CapacityPlan{}); capacityplan.Reconciler.Reconcile: r.Get (cached, so no get)"},
	"fleetbench.dev/capacityplans watch":               {manager, cached + ": For(&CapacityPlan{})"},
	"fleetbench.dev/capacityplans update":              {manager, "capacityplan.Reconciler: add and remove its finalizer"},
	"fleetbench.dev/capacityplans/status patch":        {manager, "rc.PatchStatus from capacityplan.Reconciler.Reconcile"},
	"fleetbench.dev/capacityplans/finalizers update":   {manager, "controllerutil.SetControllerReference (blockOwnerDeletion) on a plan's TestRuns"},
	"fleetbench.dev/profiles list":                     {manager, cached + ": Watches(&Profile{}); testrun load and capacityplan: r.Get (cached, so no get)"},
	"fleetbench.dev/profiles watch":                    {manager, cached + ": Watches(&Profile{})"},
	"/namespaces get":                                  {manager, "reconcilePermission, provisionNamespace, reconcileSharedNamespace: apiReader.Get"},
	"/namespaces list":                                 {manager, cached + ": capacityplan Watches(&Namespace{}) and r.Get; rc.CreateOrGet of the target namespace"},
	"/namespaces watch":                                {manager, cached + ": as list"},
	"/namespaces create":                               {manager, "provisionNamespace: rc.CreateOrGet of fb-<ns>-<name>"},
	"/namespaces delete":                               {manager, "releaseTarget: the run's own target namespace"},
	"/configmaps get":                                  {manager, "reconcileScript: apiReader.Get of the user's script; recordTargetPoint, storeResult: apiReader.Get"},
	"/configmaps list":                                 {manager, cached + ": Owns(&ConfigMap{})"},
	"/configmaps watch":                                {manager, cached + ": Owns(&ConfigMap{})"},
	"/configmaps create":                               {manager, "reconcileScript: rc.CreateOrGet; recordTargetPoint, storeResult: r.Create"},
	"/configmaps update":                               {manager, "recordTargetPoint, storeResult: r.Update of the result ConfigMap"},
	"/configmaps delete":                               {manager, "reconcileDelete: the script and result ConfigMaps"},
	"/services get":                                    {manager, "orphans.Sweeper.sweep: apiReader.Get before a delete in a shared namespace"},
	"/services list":                                   {manager, cached + "; releaseTarget: apiReader.List in a shared namespace"},
	"/services watch":                                  {manager, cached},
	"/services create":                                 {manager, "provisionTarget: the target's Services"},
	"/services delete":                                 {manager, "releaseTarget: a run's Services in a shared namespace"},
	"/resourcequotas list":                             {manager, cached + ": provisionTarget's rc.CreateOrGetCreated reads the cache (so no get)"},
	"/resourcequotas watch":                            {manager, cached},
	"/resourcequotas create":                           {manager, "provisionTarget: the target namespace's quota"},
	"/pods list":                                       {manager, cached + ": scope load of runner and target pods, preflight; releaseTarget: apiReader.List"},
	"/pods watch":                                      {manager, cached + ": Watches(&Pod{}) in testrun and capacityplan"},
	"/pods create":                                     {manager, "createTargetCharge: the never-scheduled pod charging a target to its run's namespace quota"},
	"/pods delete":                                     {manager, "ReconcileTargetCharge, releaseCharge: that pod (owned by the run, UID precondition)"},
	"/pods/log get":                                    {manager, "testrun.APILogReader.Tail: runner envelopes, target log findings"},
	"/nodes list":                                      {manager, "testrun runners.go: apiReader.List of nodes for spec.separate"},
	"/secrets get":                                     {manager, "copyPullSecrets: apiReader.Get of a spec.target.imagePullSecrets entry in the run's namespace"},
	"/secrets create":                                  {manager, "copyPullSecrets: target.PullSecret copy in the target namespace (only such copies: config/rbac/secrets_policy.yaml)"},
	"/secrets delete":                                  {manager, "releaseTarget: the copies in a shared namespace (only such copies: config/rbac/secrets_policy.yaml)"},
	"events.k8s.io/events create":                      {manager, "mgr.GetEventRecorder(\"fleetbench\").Eventf (events.k8s.io/v1)"},
	"events.k8s.io/events patch":                       {manager, "the same recorder, for a repeated event (series)"},
	"batch/jobs get":                                   {manager, "runenv.ReadUnseen: apiReader.Get of a Job the cache does not show (createRunnerJobs, reconcilePreflight)"},
	"batch/jobs list":                                  {manager, cached + ": Owns(&Job{}), scope load"},
	"batch/jobs watch":                                 {manager, cached + ": Owns(&Job{})"},
	"batch/jobs create":                                {manager, "createRunnerJobs, reconcilePreflight"},
	"batch/jobs delete":                                {manager, "deleteActiveJobs, reconcilePreflight: a pre-flight Job done"},
	"policy/poddisruptionbudgets get":                  {manager, "deleteBudgets: apiReader.Get, the budget proved the run's before it is deleted"},
	"policy/poddisruptionbudgets create":               {manager, "createDisruptionBudgets: the runners' and the target's while the load runs"},
	"policy/poddisruptionbudgets delete":               {manager, "deleteBudgets: when the run ends"},
	"kueue.x-k8s.io/workloads get":                     {manager, "testrun.reconcileQueue, finishWorkload: r.Get (cached); createWorkload: apiReader.Get of one that exists"},
	"kueue.x-k8s.io/workloads list":                    {manager, cached + ": Owns(&Workload{}), only when Kueue is installed"},
	"kueue.x-k8s.io/workloads watch":                   {manager, cached + ": as list"},
	"kueue.x-k8s.io/workloads create":                  {manager, "testrun.createWorkload: the queued run's Workload"},
	"kueue.x-k8s.io/workloads patch":                   {manager, "testrun.adoptPrebuilt: the worker's copy of a dispatched run takes MultiKueue's Workload as its own (owner reference, labels)"},
	"kueue.x-k8s.io/workloads/status patch":            {manager, "testrun.finishWorkload: Finished, as the run ends, so Kueue frees the quota"},
	"kueue.x-k8s.io/localqueues get":                   {manager, "testrun.chooseQueue: apiReader.Get of the namespace's LocalQueue named default (not cached), for a run naming no queue; provision.zoneRun: the LocalQueue zone-<cluster> before a zone run is made"},
	"kueue.x-k8s.io/resourceflavors get":               {manager, "admit.Stage.admission: apiReader.Get of each ResourceFlavor an admitted run's Workload was assigned (not cached), once per admission"},
	"apps/deployments get":                             {manager, "orphans.Sweeper.sweep: apiReader.Get before a delete in a shared namespace"},
	"apps/deployments list":                            {manager, cached + "; releaseTarget: apiReader.List in a shared namespace"},
	"apps/deployments watch":                           {manager, cached + ": Watches(&Deployment{})"},
	"apps/deployments create":                          {manager, "provisionTarget: the target's components"},
	"apps/deployments patch":                           {manager, "splitProfileEvenly: where the API server drops pod-level resources"},
	"apps/deployments delete":                          {manager, "releaseTarget: a run's Deployments in a shared namespace"},
	"networking.k8s.io/networkpolicies get":            {manager, "orphans.Sweeper.sweep: apiReader.Get before a delete in a shared namespace"},
	"networking.k8s.io/networkpolicies list":           {manager, cached + "; releaseTarget: apiReader.List in a shared namespace"},
	"networking.k8s.io/networkpolicies watch":          {manager, cached},
	"networking.k8s.io/networkpolicies create":         {manager, "provisionTarget: the target's NetworkPolicy"},
	"networking.k8s.io/networkpolicies delete":         {manager, "releaseTarget: a run's NetworkPolicy in a shared namespace"},
	"metrics.k8s.io/pods list":                         {manager, "testrun.APITargetStats.PodMetrics: GET /apis/metrics.k8s.io/v1beta1/namespaces/<ns>/pods"},
	"authentication.k8s.io/tokenreviews create":        {manager, "cmd/manager metricsOptions: filters.WithAuthenticationAndAuthorization, a scraper's token"},
	"authorization.k8s.io/subjectaccessreviews create": {manager, "cmd/manager metricsOptions: the same filter, may the scraper get /metrics"},

	"coordination.k8s.io/leases get":    {election, "client-go leaselock (ctrl.Options.LeaderElection): read the Lease"},
	"coordination.k8s.io/leases create": {election, "client-go leaselock: the first manager makes the Lease"},
	"coordination.k8s.io/leases update": {election, "client-go leaselock: acquire and renew"},
	"/events create":                    {election, "controller-runtime's leader elector records core/v1 events on its Lease"},
	"/events patch":                     {election, "the same recorder, for a repeated event"},

	"/serviceaccounts/token create [fleetbench-kubelet-stats]": {token, "kubelet.Summaries.bearer: TokenRequest for the kubelet-stats ServiceAccount"},
	"/nodes/stats get": {stats, "the kubelet's authorization of kubelet.Summaries.Summary: GET https://<node>:<port>/stats/summary"},

	"/pods/proxy get":    {proxy, "testrun.NewProxyRunnerAPI: GET /v1/status, the readiness, the live and final envelopes"},
	"/pods/proxy create": {proxy, "testrun.NewProxyRunnerAPI: POST /v1/setup, /v1/teardown, release"},
	"/pods/proxy patch":  {proxy, "testrun.NewProxyRunnerAPI: PATCH /v1/status (resume, stop)"},
	"/pods/proxy update": {proxy, "testrun.NewProxyRunnerAPI: PUT /v1/setup (setup data to every runner)"},

	"nonResourceURL /metrics get": {reader, "Prometheus: the manager's metrics behind the authn/authz filter"},
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// grants lists a role's rules as "group/resource verb" keys, "group/resource verb [names]"
// where the rule names its objects.
func grants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		names := ""
		if len(r.ResourceNames) > 0 {
			names = " [" + strings.Join(r.ResourceNames, ",") + "]"
		}
		for _, v := range r.Verbs {
			for _, url := range r.NonResourceURLs {
				out = append(out, "nonResourceURL "+url+" "+v)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out = append(out, g+"/"+res+" "+v+names)
				}
			}
		}
	}
	return out
}

func readRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	var role struct{ Rules []rbacv1.PolicyRule }
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatalf("config/rbac/%s: %v", file, err)
	}
	return role.Rules
}

// TestEveryVerbHasItsCodePath compares the generated roles with the table, both ways.
func TestEveryVerbHasItsCodePath(t *testing.T) {
	granted := map[string]string{}
	for _, file := range roleFiles {
		for _, key := range grants(readRules(t, file)) {
			if other, dup := granted[key]; dup {
				t.Errorf("%s is granted by both %s and %s", key, other, file)
			}
			granted[key] = file
			n, ok := verbs[key]
			switch {
			case !ok:
				t.Errorf("config/rbac/%s grants %s, which no code path in this table needs: remove its marker, or add the code that needs it here", file, key)
			case n.role != file:
				t.Errorf("config/rbac/%s grants %s; the table wants it in %s (%s)", file, key, n.role, n.why)
			}
		}
	}
	for key, n := range verbs {
		if _, ok := granted[key]; !ok {
			t.Errorf("%s (%s) is needed by %s but config/rbac/%s does not grant it: add its +kubebuilder:rbac marker", key, n.role, n.why, n.role)
		}
	}
}

// TestManagerClusterRoleIsNotAdmin pins what the issue found: no pod updates (pods are created
// and deleted only as a target's charge, which Job and Deployment creates could make anyway),
// no StatefulSets, no namespace updates, no leases or proxies cluster-wide, no wildcard.
func TestManagerClusterRoleIsNotAdmin(t *testing.T) {
	keys := grants(readRules(t, manager))
	for _, bad := range []string{"/pods update", "/pods patch", "/namespaces update", "/namespaces patch",
		"apps/statefulsets create", "coordination.k8s.io/leases get", "/nodes/proxy get", "/nodes/proxy create", "/pods/proxy create",
		"/secrets list", "/secrets watch", "/pods/exec create", "/nodes/stats get", "/serviceaccounts/token create", "batch/jobs deletecollection"} {
		if slices.Contains(keys, bad) {
			t.Errorf("the manager's ClusterRole grants %s", bad)
		}
	}
	for _, k := range keys {
		if strings.Contains(k, "*") {
			t.Errorf("the manager's ClusterRole holds a wildcard: %s", k)
		}
	}
}

// TestChartGrantsTheTable renders the chart (bin/helm, `make tool-helm`) in each mode and
// checks, through its bindings, that the manager's ServiceAccount gets the table's permissions
// for that mode and no other, and the kubelet-stats ServiceAccount nodes/stats get alone.
func TestChartGrantsTheTable(t *testing.T) {
	if _, err := os.Stat(helmPath()); err != nil {
		t.Skip("no bin/helm: `make tool-helm` (hack/test-chart.sh checks the same)")
	}
	for _, c := range []struct {
		name  string
		set   []string
		roles []string // the table's roles this mode grants the manager
		stats bool     // and whether the kubelet-stats ServiceAccount exists with its role
	}{
		{"default", nil, []string{manager, election, token}, true},
		{"metrics-api", []string{"targetMetrics=metrics-api"}, []string{manager, election}, false},
		{"runner proxy", []string{"runnerAccess=proxy"}, []string{manager, election, token, proxy}, true},
		{"no leader election", []string{"leaderElect=false", "targetMetrics=metrics-api"}, []string{manager}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bound := chartGrants(t, c.set...)
			got := bound["fb-fleetbench"]
			for key, n := range verbs {
				want := slices.Contains(c.roles, n.role)
				if got[key] != want {
					t.Errorf("%s: granted the manager %v, want %v (%s: %s)", key, got[key], want, n.role, n.why)
				}
				delete(got, key)
			}
			for key := range got {
				t.Errorf("the chart grants the manager %s, which is not in the table", key)
			}
			want := map[string]bool{}
			if c.stats {
				want["/nodes/stats get"] = true
			}
			if g := bound["fb-fleetbench-kubelet-stats"]; !maps.Equal(g, want) {
				t.Errorf("the kubelet-stats ServiceAccount is granted %v, want %v", g, want)
			}
			for sa, g := range bound {
				if sa != "fb-fleetbench" && sa != "fb-fleetbench-kubelet-stats" {
					t.Errorf("the chart binds ServiceAccount %s to %v", sa, g)
				}
			}
		})
	}
}

func helmPath() string { return filepath.Join(repoRoot(), "bin", "helm") }

// chartGrants renders the chart with set and returns, per ServiceAccount a (Cluster)RoleBinding
// names, the grants of the roles bound to it; the chart's names (fb-fleetbench-…) in resource
// names read as config/rbac's (fleetbench-…).
func chartGrants(t *testing.T, set ...string) map[string]map[string]bool {
	t.Helper()
	args := []string{"template", "fb", filepath.Join(repoRoot(), "charts", "fleetbench"), "--namespace", "fleetbench-system"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(helmPath(), args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Rules    []rbacv1.PolicyRule
		RoleRef  rbacv1.RoleRef `json:"roleRef"`
		Subjects []rbacv1.Subject
	}
	roles := map[string][]rbacv1.PolicyRule{}
	var bindings []object
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var obj object
		if yaml.Unmarshal([]byte(doc), &obj) != nil {
			continue
		}
		switch obj.Kind {
		case "ClusterRole", "Role":
			roles[obj.Kind+"/"+obj.Metadata.Name] = obj.Rules
		case "ClusterRoleBinding", "RoleBinding":
			bindings = append(bindings, obj)
		}
	}
	bound := map[string]map[string]bool{}
	for _, b := range bindings {
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			if bound[s.Name] == nil {
				bound[s.Name] = map[string]bool{}
			}
			rules, ok := roles[b.RoleRef.Kind+"/"+b.RoleRef.Name]
			if !ok {
				t.Errorf("%s %s binds %s %s, which the chart does not render", b.Kind, b.Metadata.Name, b.RoleRef.Kind, b.RoleRef.Name)
			}
			for _, k := range grants(rules) {
				bound[s.Name][strings.ReplaceAll(k, "fb-fleetbench-", "fleetbench-")] = true
			}
		}
	}
	return bound
}
