package judge

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestGapText: each stage of a lost runner in the words status and the report use.
func TestGapText(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 11, 26, 10, 0, s, 0, time.UTC)} }
	for _, tc := range []struct {
		name string
		gap  v1alpha1.RunnerGap
		want string
	}{
		{"too late to replace", v1alpha1.RunnerGap{Runner: 1, Cause: "Deleted", EstimatedUnobserved: 40},
			"runner 1 (Deleted) unobserved from the start to the end, about 40 requests; too late in the load to replace"},
		{"replacement starting", v1alpha1.RunnerGap{Runner: 1, Cause: "Evicted", ObservedUntil: at(5), Job: "r-runner-1-r1", Remaining: "50s"},
			"runner 1 (Evicted) unobserved from 2026-11-26T10:00:05Z; r-runner-1-r1 takes over its segment for the remaining 50s"},
		{"replaced", v1alpha1.RunnerGap{Runner: 1, Cause: "Deleted", ObservedUntil: at(5), ReplacedAt: at(8), Job: "r-runner-1-r1", Remaining: "50s", EstimatedUnobserved: 30},
			"runner 1 (Deleted) unobserved from 2026-11-26T10:00:05Z to 2026-11-26T10:00:08Z, about 30 requests; r-runner-1-r1 ran the remaining 50s"},
		{"observed until after the replacement took over", v1alpha1.RunnerGap{Runner: 1, Cause: "Deleted", ObservedUntil: at(9), ReplacedAt: at(8), Job: "r-runner-1-r1", Remaining: "50s"},
			"runner 1 (Deleted) observed until 2026-11-26T10:00:09Z, when r-runner-1-r1 took over for the remaining 50s"},
	} {
		if got := GapText(tc.gap, "runner %d (%s) "); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if s := GapsSummary([]v1alpha1.RunnerGap{{Runner: 1, Cause: "Deleted", EstimatedUnobserved: 7}}, 5); !strings.Contains(s, "but 1 gap, about 7 requests") {
		t.Errorf("one gap in words: %s", s)
	}
}
