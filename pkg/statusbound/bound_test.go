package statusbound

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testwrappers/hostile"
)

// TestCutEndsOnACharacter: a cut string is valid UTF-8, within the bound, and says it was cut.
func TestCutEndsOnACharacter(t *testing.T) {
	s := strings.Repeat("a日😀é", 50)
	for max := 0; max < len(s)+2; max++ {
		got := Cut(s, max)
		if len(got) > max && len(s) > max || !utf8.ValidString(got) {
			t.Fatalf("Cut(%d) = %d bytes, valid %v", max, len(got), utf8.ValidString(got))
		}
		if len(s) > max && max >= 8 && !strings.HasSuffix(got, "…") {
			t.Fatalf("Cut(%d) = %q does not say it was cut", max, got)
		}
	}
}

// TestTestRunCutsAndSaysWhat: lists are cut to their bound, the failed thresholds stay listed,
// strings end on a character, and one warning (with room made for it) says what was cut.
func TestTestRunCutsAndSaysWhat(t *testing.T) {
	r := &v1alpha1.Results{}
	for i := range 17 { // 16 overflows and the metrics warning: judge.Build's own worst case
		r.Warnings = append(r.Warnings, fmt.Sprintf("warning %d", i))
	}
	for i := range 300 {
		r.Thresholds = append(r.Thresholds, v1alpha1.ThresholdResult{Metric: fmt.Sprintf("m%03d", i), Expression: "rate<0.01", Passed: i%30 != 29})
	}
	r.Checks = &v1alpha1.CheckCounts{ByName: []v1alpha1.NamedCheck{{Name: strings.Repeat("é", 6000)}}}
	st := v1alpha1.TestRunStatus{Results: r, Message: strings.Repeat("x", 5000) + "\xff"}
	notes := TestRun(&st)
	if len(r.Thresholds) != MaxThresholds || len(r.Warnings) != MaxWarnings {
		t.Fatalf("%d thresholds, %d warnings: want %d and %d", len(r.Thresholds), len(r.Warnings), MaxThresholds, MaxWarnings)
	}
	failed := 0
	for _, th := range r.Thresholds {
		if !th.Passed {
			failed++
		}
	}
	if failed != 10 {
		t.Errorf("%d failed thresholds listed, want all 10", failed)
	}
	if n := len(r.Checks.ByName[0].Name); n > MaxCheckName || !utf8.ValidString(r.Checks.ByName[0].Name) {
		t.Errorf("check name %d bytes, valid UTF-8 %v", n, utf8.ValidString(r.Checks.ByName[0].Name))
	}
	last := r.Warnings[MaxWarnings-1]
	for _, want := range []string{WarningPrefix, "44 of 300 thresholds", "2 of 17 warnings", "a check's name cut", "status.message cut"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last warning does not say %q: %s", want, last)
		}
	}
	if len(notes) == 0 || r.Warnings[0] != "warning 0" {
		t.Errorf("notes %v; the first warnings must stay: %v", notes, r.Warnings[:2])
	}
}

// TestCutOutsideResultsIsStillSaid: what is cut while the load runs (abortOnFail thresholds)
// is said in a warning even before there are results, and the warning survives the results
// being rebuilt at collection.
func TestCutOutsideResultsIsStillSaid(t *testing.T) {
	st := v1alpha1.TestRunStatus{AbortOnFail: &v1alpha1.AbortWatch{}}
	for i := range 100 {
		st.AbortOnFail.Thresholds = append(st.AbortOnFail.Thresholds, fmt.Sprintf("m%d rate<0.1", i))
	}
	TestRun(&st)
	if len(st.AbortOnFail.Thresholds) != MaxAbortThresholds || st.Results == nil || len(st.Results.Warnings) != 1 ||
		!strings.Contains(st.Results.Warnings[0], "36 of 100 abortOnFail thresholds") {
		t.Fatalf("abortOnFail %d, results %+v", len(st.AbortOnFail.Thresholds), st.Results)
	}
	rebuilt := &v1alpha1.Results{Warnings: []string{"from the merge"}}
	CarryWarning(st.Results, rebuilt)
	if len(rebuilt.Warnings) != 2 || !strings.HasPrefix(rebuilt.Warnings[1], WarningPrefix) {
		t.Errorf("warnings after the rebuild: %v", rebuilt.Warnings)
	}
}

// FuzzTestRunStatus: a status built from hostile runners' results (thousands of metrics,
// thresholds and checks, names of kilobytes, unicode, control characters, bytes that are not
// UTF-8), merged and mapped as the controller does (hostile.Status), and then cut, holds to
// every bound of the generated CRD's status schema; cutting again changes nothing. The same
// statuses are written to a real API server in internal/controller/testrun (TestHostileStatusesAreAccepted).
func FuzzTestRunStatus(f *testing.F) {
	s := statusSchema(f, "fleetbench.dev_testruns.yaml")
	for seed := range int64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		st := hostile.Status(rand.New(rand.NewSource(seed)))
		TestRun(&st)
		raw, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if errs := validate(v, s, "status"); len(errs) > 0 {
			t.Fatalf("seed %d: the cut status breaks the CRD's schema:\n%s", seed, strings.Join(errs[:min(len(errs), 10)], "\n"))
		}
		again := *st.DeepCopy()
		if notes := TestRun(&again); len(notes) > 0 || !reflect.DeepEqual(again, st) {
			t.Fatalf("seed %d: cutting twice cut more: %v", seed, notes)
		}
	})
}

// TestAdmissionIsCutToItsBounds: status.admission beyond its bounds (the controller refuses
// such an admission, FlavorUnusable) is still cut, so the status write stays possible.
func TestAdmissionIsCutToItsBounds(t *testing.T) {
	ps := v1alpha1.AdmittedPodSet{Name: "runners", NodeSelector: map[string]string{strings.Repeat("k", 400): "v", "pool": strings.Repeat("v", 100)}}
	for i := range MaxAdmittedFlavors + 1 {
		ps.Flavors = append(ps.Flavors, fmt.Sprintf("f%d", i))
	}
	for range MaxAdmittedTolerations + 1 {
		ps.Tolerations = append(ps.Tolerations, v1alpha1.SnapshotToleration{Key: "spot", Effect: strings.Repeat("e", 40)})
	}
	st := v1alpha1.TestRunStatus{Admission: &v1alpha1.QueueAdmission{ClusterQueue: "cq", PodSets: []v1alpha1.AdmittedPodSet{ps}}}
	notes := TestRun(&st)
	got := st.Admission.PodSets[0]
	if len(got.Flavors) != MaxAdmittedFlavors || len(got.Tolerations) != MaxAdmittedTolerations || len(got.NodeSelector) != 1 ||
		len(got.NodeSelector["pool"]) != MaxLabelValue || len(got.Tolerations[0].Effect) != MaxTaintEffect {
		t.Errorf("admission not cut to its bounds: %d flavors, %d tolerations, nodeSelector %v", len(got.Flavors), len(got.Tolerations), got.NodeSelector)
	}
	if len(notes) == 0 {
		t.Error("nothing says the admission was cut")
	}
}

// TestSlowestRequestsAreCutToTheirBounds: more than MaxSlowest slow requests, strings beyond
// their bounds and a trace id that is not hex (status written by an older or buggy controller)
// are cut to what the CRD admits.
func TestSlowestRequestsAreCutToTheirBounds(t *testing.T) {
	r := &v1alpha1.Results{}
	for range MaxSlowest + 3 {
		r.SlowestRequests = append(r.SlowestRequests, v1alpha1.SlowRequest{Duration: "1.25s", URL: strings.Repeat("ü", 400),
			Method: strings.Repeat("M", 40), TraceID: "<b>"})
	}
	st := v1alpha1.TestRunStatus{Results: r}
	notes := TestRun(&st)
	if len(r.SlowestRequests) != MaxSlowest {
		t.Fatalf("%d slowest requests", len(r.SlowestRequests))
	}
	for _, s := range r.SlowestRequests {
		if len(s.URL) > 512 || !utf8.ValidString(s.URL) || len(s.Method) > 32 || s.TraceID != "" {
			t.Fatalf("not cut: url %d bytes, method %q, trace id %q", len(s.URL), s.Method, s.TraceID)
		}
	}
	raw, _ := json.Marshal(st)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if errs := validate(v, statusSchema(t, "fleetbench.dev_testruns.yaml"), "status"); len(errs) > 0 {
		t.Fatalf("the cut status breaks the CRD's schema: %v", errs)
	}
	if w := r.Warnings[len(r.Warnings)-1]; !strings.Contains(w, "3 of 13 slowest requests") {
		t.Errorf("the warning does not say what was cut: %s", w)
	}
	if !slices.Contains(notes, "10 slow requests' trace ids that are not hex dropped") {
		t.Errorf("notes do not say the trace ids were dropped: %v", notes)
	}
}
