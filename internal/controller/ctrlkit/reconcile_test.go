package ctrlkit

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestSetSummaryConditions(t *testing.T) {
	cases := []struct {
		name     string
		standing Standing
		// want is "Status/Reason" for Ready, Reconciling, Stalled, Complete.
		want [4]string
		// message every condition carries; the run's own message when empty here.
		message string
	}{
		{"in progress", Standing{Phase: "Provisioning", Reason: "WaitingForTarget", Message: "not Ready"},
			[4]string{"False/InProgress", "True/WaitingForTarget", "False/InProgress", "False/InProgress"}, "Provisioning: not Ready"},
		{"passed", Standing{Ended: true, Verdict: v1alpha1.VerdictPassed, Phase: "Succeeded", Reason: "Completed", Message: "verdict PASSED"},
			[4]string{"True/Passed", "False/Completed", "False/Passed", "True/Completed"}, "verdict PASSED"},
		{"verdict failed", Standing{Ended: true, Verdict: v1alpha1.VerdictFailed, Reason: "Completed"},
			[4]string{"False/Failed", "False/Completed", "True/VerdictFailed", "True/Completed"}, ""},
		{"inconclusive", Standing{Ended: true, Verdict: v1alpha1.VerdictInconclusive, Reason: "Completed"},
			[4]string{"False/Inconclusive", "False/Completed", "True/VerdictInconclusive", "True/Completed"}, ""},
		{"regressed", Standing{Ended: true, Verdict: v1alpha1.VerdictRegressed, Reason: "Completed"},
			[4]string{"False/Regressed", "False/Completed", "True/VerdictRegressed", "True/Completed"}, ""},
		{"ended failed", Standing{Ended: true, Failed: true, Verdict: v1alpha1.VerdictFailed, Reason: "RunnerOOMKilled"},
			[4]string{"False/Failed", "False/RunnerOOMKilled", "True/RunnerOOMKilled", "True/RunnerOOMKilled"}, ""},
		// A Failed phase with a PASSED verdict cannot be Ready: failing wins.
		{"failed phase, passed verdict", Standing{Ended: true, Failed: true, Verdict: v1alpha1.VerdictPassed, Reason: "RunTimeout"},
			[4]string{"False/Failed", "False/RunTimeout", "True/RunTimeout", "True/RunTimeout"}, ""},
	}
	types := [4]string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled, v1alpha1.ConditionComplete}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var conds []metav1.Condition
			SetSummaryConditions(&conds, 7, tc.standing)
			msg := tc.message
			if msg == "" {
				msg = tc.standing.Message
			}
			for i, typ := range types {
				c := meta.FindStatusCondition(conds, typ)
				if c == nil {
					t.Fatalf("no %s", typ)
				}
				if got := string(c.Status) + "/" + c.Reason; got != tc.want[i] || c.ObservedGeneration != 7 || c.Message != msg {
					t.Errorf("%s = %s gen %d msg %q, want %s gen 7 msg %q", typ, got, c.ObservedGeneration, c.Message, tc.want[i], msg)
				}
			}
		})
	}
}

func TestDeadlines(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		deadline time.Time
		poll     time.Duration
		expired  bool
		after    time.Duration
	}{
		{"far", now.Add(time.Minute), 0, false, time.Minute},
		{"polled sooner", now.Add(time.Minute), 10 * time.Second, false, 10 * time.Second},
		{"deadline before the poll", now.Add(time.Second), 10 * time.Second, false, time.Second},
		{"now", now, 0, true, time.Millisecond},
		{"past", now.Add(-time.Hour), 10 * time.Second, true, time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expired(now, tc.deadline); got != tc.expired {
				t.Errorf("Expired = %v, want %v", got, tc.expired)
			}
			if got := WaitUntil(now, tc.deadline, tc.poll).RequeueAfter; got != tc.after {
				t.Errorf("WaitUntil requeues after %s, want %s", got, tc.after)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	for spec, want := range map[v1alpha1.Duration]time.Duration{"": time.Minute, "2s": 2 * time.Second, "1h30m": 90 * time.Minute, "bogus": time.Minute} {
		if got := Timeout(spec, time.Minute); got != want {
			t.Errorf("Timeout(%q) = %s, want %s", spec, got, want)
		}
	}
}

func TestTTLLeft(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	done := now.Add(-30 * time.Second)
	cases := []struct {
		name       string
		completion *time.Time
		ttl        *int32
		left       time.Duration
		expired    bool
	}{
		{"no TTL", &done, nil, 0, false},
		{"not finished", nil, ptr.To[int32](10), 0, false},
		{"due later", &done, ptr.To[int32](60), 30 * time.Second, false},
		{"due now", &done, ptr.To[int32](30), time.Millisecond, true},
		{"overdue", &done, ptr.To[int32](0), time.Millisecond, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			left, expired := TTLLeft(tc.completion, tc.ttl, now)
			if left != tc.left || expired != tc.expired {
				t.Errorf("TTLLeft = %s, %v; want %s, %v", left, expired, tc.left, tc.expired)
			}
		})
	}
}

func TestTruncateKeepsMessagesWithinTheAPILimits(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6,000 bytes, 2 bytes a character
	for _, tc := range []struct {
		in    string
		limit int
		cut   bool
	}{
		{"short", MaxStatusMessage, false},
		{strings.Repeat("a", MaxStatusMessage), MaxStatusMessage, false},
		{strings.Repeat("a", MaxStatusMessage+1), MaxStatusMessage, true},
		{long, MaxStatusMessage, true},
	} {
		got := Truncate(tc.in, tc.limit)
		if len(got) > tc.limit || !utf8.ValidString(got) || strings.HasSuffix(got, "(cut)") != tc.cut {
			t.Errorf("Truncate(%d bytes, %d) = %d bytes, valid %v, cut %v; want ≤ limit, valid, cut %v",
				len(tc.in), tc.limit, len(got), utf8.ValidString(got), strings.HasSuffix(got, "(cut)"), tc.cut)
		}
	}
}
