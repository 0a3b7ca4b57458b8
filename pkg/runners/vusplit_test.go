package runners

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected shares are worked by hand from k6's striping (lib/execution_segment.go): equal
// segments of 1/n have an LCD of n and segment k owns element k of every block, so it gets
// value/n plus one when k < value%n. The unequal case is the table in k6's own doc comment
// of ExecutionTuple (segments 1/2, 1/4, 1/4 over the values 1 to 12).
func TestSplitIntIsK6sScaleInt64(t *testing.T) {
	for _, tc := range []struct {
		value    int64
		sequence string
		want     []int64
	}{
		{7, "0,1", []int64{7}},
		{2, "0,1/3,2/3,1", []int64{1, 1, 0}},
		{1, "0,1/3,2/3,1", []int64{1, 0, 0}},
		{0, "0,1/3,2/3,1", []int64{0, 0, 0}},
		{7, "0,1/3,2/3,1", []int64{3, 2, 2}},
		{10, "0,1/4,2/4,3/4,1", []int64{3, 3, 2, 2}},
		{3, "0,1/5,2/5,3/5,4/5,1", []int64{1, 1, 1, 0, 0}},
		{100, "0,1/2,1", []int64{50, 50}},
	} {
		got, err := SplitInt(tc.value, tc.sequence)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitInt(%d, %s) = %v, %v; want %v", tc.value, tc.sequence, got, err, tc.want)
		}
	}
	doc := [3][]int64{
		{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6},
		{0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3},
		{0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3},
	}
	for v := int64(1); v <= 12; v++ {
		got, err := SplitInt(v, "0,1/2,3/4,1")
		want := []int64{doc[0][v-1], doc[1][v-1], doc[2][v-1]}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitInt(%d, 0,1/2,3/4,1) = %v, %v; want %v (k6's doc table)", v, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0,1/2", "1/2,1", "0,2/3,1/3,1", "0,x,1", "0,3/2"} {
		if _, err := SplitInt(1, bad); err == nil {
			t.Errorf("SplitInt(1, %q) accepted a sequence that is not k6's", bad)
		}
	}
}

// Shares always sum to the value and never differ by more than one over equal segments.
func TestSplitIntSumsToTheValue(t *testing.T) {
	for n := 1; n <= 12; n++ {
		seq := Segments(n)[0].Sequence
		for v := int64(0); v <= 40; v++ {
			got, err := SplitInt(v, seq)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, x := range got {
				sum += x
			}
			if sum != v || slices.Max(got)-slices.Min(got) > 1 {
				t.Errorf("SplitInt(%d) over %d runners = %v", v, n, got)
			}
		}
	}
}

func TestScenariosFromOptions(t *testing.T) {
	inspect := `time="2026-01-01T00:00:00Z" level=warning msg="something k6 says first"
{
  "paused": null,
  "scenarios": {
    "default": {"executor": "shared-iterations", "vus": 1, "iterations": 5, "maxDuration": "10m0s"},
    "push": {"executor": "constant-arrival-rate", "rate": 10, "timeUnit": "1s", "duration": "30s", "preAllocatedVUs": 2, "maxVUs": 10},
    "rar": {"executor": "ramping-arrival-rate", "preAllocatedVUs": 4, "stages": [{"target": 5, "duration": "1s"}]},
    "ramp": {"executor": "ramping-vus", "startVUs": 0, "stages": [{"target": 7, "duration": "1s"}, {"target": 2, "duration": "1s"}]},
    "ext": {"executor": "externally-controlled", "vus": 1, "maxVUs": 3}
  },
  "totalDuration": "10m30s",
  "maxVUs": 10
}
trailing log line`
	got, ok := ScenariosFromOptions([]byte(inspect))
	want := []ScenarioVUs{
		{Name: "default", Executor: "shared-iterations", VUs: 1},
		{Name: "push", Executor: "constant-arrival-rate", VUs: 2, MaxVUs: 10},
		{Name: "ramp", Executor: "ramping-vus", VUs: 7},
		{Name: "rar", Executor: "ramping-arrival-rate", VUs: 4, MaxVUs: 4},
	}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("ScenariosFromOptions ok=%v (-want +got):\n%s", ok, diff)
	}
	for _, raw := range []string{"", "no json here", `{"scenarios": `, `{"vus": 3}`} {
		if _, ok := ScenariosFromOptions([]byte(raw)); ok {
			t.Errorf("ScenariosFromOptions(%q) found options", raw)
		}
	}
}

func TestZeroVUWarnings(t *testing.T) {
	name := func(i int) string { return fmt.Sprintf("run-%d", i) }
	for _, tc := range []struct {
		name        string
		scenarios   []ScenarioVUs
		parallelism int
		// want are substrings of each warning, one slice per warning; none when empty.
		want [][]string
	}{
		{"the issue's arrival rate: 2 pre-allocated VUs over 3 runners", []ScenarioVUs{{Name: "push", Executor: "constant-arrival-rate", VUs: 2, MaxVUs: 10}}, 3,
			[][]string{{`scenario "push"`, "runner 2 (run-2)", "0 of its 2 pre-allocated VUs", "1,1,0", "drop iterations",
				"preAllocatedVUs to at least 3", "spec.parallelism to at most 2"}}},
		{"maxVUs as small: the runner idles", []ScenarioVUs{{Name: "push", Executor: "constant-arrival-rate", VUs: 2, MaxVUs: 2}}, 3,
			[][]string{{`scenario "push"`, "runner 2 (run-2)", "0 of its 2 VUs", "run none of it", "maxVUs to at least 3"}}},
		{"one VU on five runners", []ScenarioVUs{{Name: "default", Executor: "shared-iterations", VUs: 1}}, 5,
			[][]string{{`scenario "default"`, "runners 1 to 4 (run-1 to run-4)", "1,0,0,0,0", "vus to at least 5", "spec.parallelism to at most 1"}}},
		{"enough VUs", []ScenarioVUs{{Name: "a", Executor: "constant-vus", VUs: 3}, {Name: "b", Executor: "constant-arrival-rate", VUs: 3, MaxVUs: 3}}, 3, nil},
		{"one runner", []ScenarioVUs{{Name: "a", Executor: "constant-vus", VUs: 1}}, 1, nil},
	} {
		got := ZeroVUWarnings(tc.scenarios, tc.parallelism, name)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d warnings %q, want %d", tc.name, len(got), got, len(tc.want))
			continue
		}
		for i, parts := range tc.want {
			for _, p := range parts {
				if !strings.Contains(got[i], p) {
					t.Errorf("%s: warning %q does not say %q", tc.name, got[i], p)
				}
			}
		}
	}
}
