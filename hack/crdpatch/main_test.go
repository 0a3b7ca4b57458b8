package main

import (
	"regexp"
	"testing"
	"time"
)

// durationRule is the syntax half of v1alpha1.Duration's CEL rule; the other half is > 0.
var durationRule = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

// FuzzPositiveDurationHint: below the untyped spec.cleanup, keepFor's pattern admits exactly
// what Duration's CEL rule does elsewhere: its syntax, and more than zero.
func FuzzPositiveDurationHint(f *testing.F) {
	for _, s := range []string{"2h", "1h30m", "0.5s", "250ms", "0s", "0h0m", "0.0h", "0h30m", "00m", "1.", "h", "", "24h", "0.05m", "forever"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(PositiveDurationHint)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := time.ParseDuration(s)
		if durationRule.MatchString(s) && err != nil {
			return // beyond Go's (and CEL's) range: the rule errs, so it refuses too
		}
		want := durationRule.MatchString(s) && d > 0
		if got := pattern.MatchString(s); got != want {
			t.Fatalf("%q: the pattern admits %v, Duration's rule %v", s, got, want)
		}
	})
}
