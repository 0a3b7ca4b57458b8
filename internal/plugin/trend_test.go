package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// keptRecord writes a kept record as the controller does (admit.CreateKeptRecord): the run's
// labels plus the kept-results ones, the annotations, the gzipped Record; and a seal the
// plugin, which has no key, does not check.
func keptRecord(t *testing.T, ns string, rec compare.Record) *corev1.ConfigMap {
	t.Helper()
	data, err := compare.EncodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	lbl := map[string]string{naming.LabelKeptResults: "true", naming.LabelKeptRun: rec.Run.Name}
	for k, v := range rec.Run.Labels {
		lbl[k] = v
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.KeptResults(rec.Run.Name, rec.Run.UID), Namespace: ns, Labels: lbl,
		Annotations: map[string]string{naming.AnnotationKeptName: rec.Run.Name, naming.AnnotationKeptUID: rec.Run.UID,
			naming.AnnotationKeptCompletion: rec.Run.CompletionTime.UTC().Format(time.RFC3339), naming.AnnotationKeptVerdict: rec.Run.Verdict,
			seal.Annotation: "not-checked-by-the-plugin"}},
		BinaryData: map[string][]byte{naming.KeptRecordKey: data}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// trendRuns keeps 12 runs of test=ingest, releases v1.0.0 to v1.11.0, completed out of release
// order (a rerun of an old release completes later). Throughput falls 20 % from v1.6.0 on;
// latency stays. Around them: another test's record, a look-alike and a record that does not
// decode, which the trend must leave out.
func trendRuns(t *testing.T, ns string) {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	completed := []int{3, 0, 1, 2, 11, 4, 5, 10, 6, 7, 9, 8} // hours after t0, by release
	for i := range 12 {
		rps := 1000 + float64(i%3)*5
		if i >= 6 {
			rps = 800 + float64(i%3)*4
		}
		rec := compare.Record{Run: compare.RunRef{Name: fmt.Sprintf("ingest-%d", i), UID: fmt.Sprintf("%08d-uid", i),
			CompletionTime: t0.Add(time.Duration(completed[i]) * time.Hour), Verdict: "PASSED",
			Labels: map[string]string{"test": "ingest", "release": fmt.Sprintf("v1.%d.0", i)}},
			Series: []compare.Series{{Name: compare.SeriesThroughput, Unit: "req/s", Whole: rps},
				{Name: compare.SeriesLatencyP95, Stat: "p95", Unit: "ms", Whole: 40 + float64(i%2)}}}
		if i == 9 {
			rec.Run.Verdict = "REGRESSED"
		}
		keptRecord(t, ns, rec)
	}
	other := compare.Record{Run: compare.RunRef{Name: "export-1", UID: "99999999-uid", CompletionTime: t0, Verdict: "PASSED",
		Labels: map[string]string{"test": "export"}}, Series: []compare.Series{{Name: compare.SeriesThroughput, Whole: 1}}}
	keptRecord(t, ns, other)
	fake := other
	fake.Run.Name, fake.Run.Labels = "tenant-config", map[string]string{"test": "ingest", "release": "v9.0.0"}
	cm := keptRecord(t, ns, fake)
	cm.Annotations[naming.AnnotationKeptUID] = "bbbbbbbb-y" // its name says 99999999
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	broken := other
	broken.Run.Name, broken.Run.UID, broken.Run.Labels = "ingest-broken", "77777777-uid", map[string]string{"test": "ingest", "release": "v1.5.1"}
	cm = keptRecord(t, ns, broken)
	cm.BinaryData[naming.KeptRecordKey] = []byte("not gzip")
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

func TestTrendTable(t *testing.T) {
	ns := namespace(t)
	trendRuns(t, ns)
	r := plugin(t, ns, "trend", "-l", "test=ingest", "--order-by", "label:release")
	if r.code != ExitPassed {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout
	for _, want := range []string{
		"12 kept runs matching test=ingest", "E-Divisive means", "199 permutations, smallest p 0.005",
		"not readable: ingest-broken-kept-77777777", // named, left out
		"REGRESSED", // every kept run, its verdict shown
		"THROUGHPUT (REQ/S)", "LATENCYP95 (MS)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"export-1", "tenant-config", "v9.0.0"} {
		if strings.Contains(out, bad) {
			t.Errorf("the table shows %q, which is not a kept run of the test:\n%s", bad, out)
		}
	}
	// Release order, not completion order or text order (v1.10.0 after v1.9.0).
	if i, j, k := strings.Index(out, "v1.2.0"), strings.Index(out, "v1.9.0"), strings.Index(out, "v1.10.0"); i < 0 || i >= j || j >= k {
		t.Errorf("runs not in release order:\n%s", out)
	}
	_, cps, ok := strings.Cut(out, "Change points:")
	if !ok {
		t.Fatalf("no change points section:\n%s", out)
	}
	if !strings.Contains(cps, "throughput (req/s)") || !strings.Contains(cps, "ingest-6") || !strings.Contains(cps, "-20.0 %") || !strings.Contains(cps, "worse") {
		t.Errorf("want throughput's change at ingest-6, about -20 %% worse:\n%s", cps)
	}
	if strings.Contains(cps, "latencyP95") {
		t.Errorf("latency did not shift:\n%s", cps)
	}
}

func TestTrendJSONAndHTML(t *testing.T) {
	ns := namespace(t)
	trendRuns(t, ns)
	r := plugin(t, ns, "trend", "-l", "test=ingest", "--order-by", "label:release", "--format", "json", "--metrics", "throughput")
	if r.code != ExitPassed {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	var doc TrendDocument
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if doc.Kind != TrendKind || len(doc.Runs) != 12 || len(doc.Metrics) != 1 || doc.Options.PValue != 0.01 || doc.SmallestP != 0.005 {
		t.Fatalf("document %+v", doc)
	}
	m := doc.Metrics[0]
	if len(m.ChangePoints) != 1 || doc.Runs[m.ChangePoints[0].Index].Name != "ingest-6" || m.ChangePoints[0].Direction != "worse" {
		t.Errorf("change points %+v, want one at ingest-6, worse", m.ChangePoints)
	}

	r = plugin(t, ns, "trend", "-l", "test=ingest", "--order-by", "label:release", "--test", "ttest", "--p-value", "0.001")
	if _, cps, _ := strings.Cut(r.stdout, "Change points:"); r.code != ExitPassed || !strings.Contains(r.stdout, "Student's t-test") || !strings.Contains(cps, "ingest-6") {
		t.Errorf("Otava's test: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	file := filepath.Join(t.TempDir(), "trend.html")
	r = plugin(t, ns, "trend", "-l", "test=ingest", "--format", "html", "-o", file)
	if r.code != ExitPassed || !strings.Contains(r.stderr, "wrote "+file) {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-figure="trend-0"`, `data-figure="trend-1"`, `class="peak change"`, "ingest-6"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestTrendRefusals(t *testing.T) {
	ns := namespace(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trend"}, "-l SELECTOR is required"},
		{[]string{"trend", "-l", "test=ingest", "--order-by", "release"}, "--order-by"},
		{[]string{"trend", "-l", "test=ingest", "--format", "csv"}, "--format"},
		{[]string{"trend", "-l", "test in (", "--format", "json"}, "-l"},
		{[]string{"trend", "-l", "test=ingest", "--test", "ks"}, "--test"},
	} {
		r := plugin(t, ns, tc.args...)
		if r.code != ExitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", tc.args, r.code, r.stderr, ExitError, tc.want)
		}
	}
	r := plugin(t, ns, "trend", "-l", "test=none")
	if r.code != ExitPassed || !strings.Contains(r.stdout, "no kept record in namespace "+ns+" matches test=none") {
		t.Errorf("no records: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}
