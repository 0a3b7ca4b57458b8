package plugin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport"
)

var chartData = regexp.MustCompile(`(?s)<script type="application/json" id="fleetbench-data">(.*?)</script>`)

// reportCharts writes the run's HTML report with the plugin and returns the page and its charts.
func reportCharts(t *testing.T, ns, name string) (string, []htmlreport.Chart) {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".html")
	if res := plugin(t, ns, "report", name, "-o", out); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := chartData.FindSubmatch(raw)
	if m == nil {
		t.Fatal("no chart data in the report")
	}
	var data struct{ Charts []htmlreport.Chart }
	if err := json.Unmarshal(m[1], &data); err != nil {
		t.Fatal(err)
	}
	return string(raw), data.Charts
}

// baselineValues are the values of the throughput chart's series labelled "baseline v1".
func baselineValues(charts []htmlreport.Chart) []float64 {
	var out []float64
	for _, c := range charts {
		if c.Name != "throughput" {
			continue
		}
		for _, s := range c.Series {
			if s.Label == "baseline v1" {
				for _, v := range s.Values {
					if b, _ := json.Marshal(v); string(b) != "null" {
						out = append(out, float64(v))
					}
				}
			}
		}
	}
	return out
}

// TestReportReadsTheKeptBaseline: `report` of a compared run reads its baseline's kept record
// (one ConfigMap, by the name the controller gives it) and draws its series; once the record is
// gone, or a look-alike holds its name, the report is still written and says why.
func TestReportReadsTheKeptBaseline(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictPassed)
	const uid = "5e1f0c3a-aaaa-bbbb-cccc-000000000001"
	setStatus(t, ns, "stab", func(s *v1alpha1.TestRunStatus) {
		done := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s.Comparison = tw.MakeTestRun("x", ns).Compared("v1", uid, tw.ThroughputDrop()).Obj().Status.Comparison
		s.Comparison.Baseline.Source, s.Comparison.Baseline.CompletionTime = "Kept", &done
	})
	rps := []float64{7, 7.5, 6.5, 7}
	data, err := compare.EncodeRecord(compare.Record{Run: compare.RunRef{Name: "v1", UID: uid}, WindowSeconds: 150,
		Series: []compare.Series{{Name: compare.SeriesThroughput, Unit: "req/s", Whole: 7, Windows: rps}}})
	if err != nil {
		t.Fatal(err)
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.KeptResults("v1", uid), Namespace: ns,
		Labels:      map[string]string{naming.LabelKeptResults: "true"},
		Annotations: map[string]string{naming.AnnotationKeptName: "v1", naming.AnnotationKeptUID: uid}},
		BinaryData: map[string][]byte{naming.KeptRecordKey: data}}
	if err := env.Client.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}

	page, charts := reportCharts(t, ns, "stab")
	if got := baselineValues(charts); !slices.Equal(got, rps) {
		t.Errorf("baseline series %v, want the kept record's %v", got, rps)
	}
	for _, s := range []string{"Compared with v1", "Regressed", "71.20"} {
		if !strings.Contains(page, s) {
			t.Errorf("the report does not show %q", s)
		}
	}
	if strings.Contains(page, "baseline series not available") {
		t.Error("the report says the baseline series are not available")
	}

	// A look-alike under the record's name (another UID) is not read.
	kept.Annotations[naming.AnnotationKeptUID] = "someone-else"
	if err := env.Client.Update(ctx, kept); err != nil {
		t.Fatal(err)
	}
	page, charts = reportCharts(t, ns, "stab")
	if got := baselineValues(charts); len(got) != 0 || !strings.Contains(page, "is not the kept record of v1") {
		t.Errorf("a look-alike was drawn (%v) or not named", got)
	}

	// Deleted by retention: the table is still there, with a note.
	if err := env.Client.Delete(ctx, kept); err != nil {
		t.Fatal(err)
	}
	page, charts = reportCharts(t, ns, "stab")
	if got := baselineValues(charts); len(got) != 0 {
		t.Errorf("baseline series %v drawn without a record", got)
	}
	for _, s := range []string{"baseline series not available: its kept record (ConfigMap " + kept.Name + ") is gone", "71.20"} {
		if !strings.Contains(page, s) {
			t.Errorf("the report does not show %q", s)
		}
	}
}

// TestReportWithoutReadOnTheKeptRecord: a user who may read the run and its full result but
// not the baseline's kept record still gets the report, with the table and why the baseline's
// series are missing.
func TestReportWithoutReadOnTheKeptRecord(t *testing.T) {
	ns := namespace(t)
	finishedRun(t, ns, v1alpha1.VerdictPassed)
	const uid = "5e1f0c3a-aaaa-bbbb-cccc-000000000002"
	setStatus(t, ns, "stab", func(s *v1alpha1.TestRunStatus) {
		s.Comparison = tw.MakeTestRun("x", ns).Compared("v1", uid, tw.ThroughputDrop()).Obj().Status.Comparison
	})
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "report-reader", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"testruns"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"stab-results"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "report-reader", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "report-reader"}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := testenv.WaitAllowed(env.Client, "report-reader", ns, role.Rules); err != nil {
		t.Fatal(err)
	}
	user, err := env.AddUser(envtest.User{Name: "report-reader"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, out := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "stab.html")
	if err := os.WriteFile(cfg, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"report", "stab", "-o", out, "--kubeconfig", cfg, "-n", ns},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"baseline series not available: you may not read its kept record", "needs get on configmaps", "71.20"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("the report does not show %q", s)
		}
	}
}
