package targetstats

import (
	"context"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

func TestCountPatterns(t *testing.T) {
	logs := [][]byte{
		[]byte("level=info msg=started\nlevel=warn msg=\"CFG profile sync delayed\"\nlevel=warn msg=\"push queue above 80%\"\n"),
		[]byte("2023/10/03 ERROR db: deadlock\nwarning: something\nno match here"),
	}
	got := CountPatterns(context.Background(), logs, DefaultPatterns, DefaultLimits, "")
	if got[0].Count != 3 || got[0].Sample != `level=warn msg="CFG profile sync delayed"` || got[0].Incomplete != "" {
		t.Errorf("warnings = %+v", got[0])
	}
	if got[1].Count != 1 || got[1].Sample != "2023/10/03 ERROR db: deadlock" || got[1].Incomplete != "" {
		t.Errorf("errors = %+v", got[1])
	}
}

// TestCountPatternsLimits: the runtime caps on a tenant's pattern, each showing in the finding
// (Incomplete) with the count of what was searched, never a partial count passed off as whole.
func TestCountPatternsLimits(t *testing.T) {
	line := "GET /" + strings.Repeat("a", 1008) + " 404 error" // 1 KiB with its newline
	kib := func(n int) [][]byte { return [][]byte{[]byte(strings.Repeat(line+"\n", n))} }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name     string
		ctx      context.Context
		logs     [][]byte
		pattern  string
		lim      Limits
		unread   string
		count    int64
		complete bool
		says     []string
	}{
		{name: "within every cap", logs: kib(64), pattern: "error", lim: DefaultLimits, count: 64, complete: true},
		{name: "a program beyond MaxInsts is not run", logs: kib(4), pattern: ".{100}.{100}B", lim: Limits{MaxInsts: 150, Budget: 1 << 30},
			says: []string{"not counted", "compiles to 203 instructions, more than the 150"}},
		{name: "the attack's pattern, under the default limits", logs: kib(4), pattern: ".{1000}.{1000}B", lim: DefaultLimits,
			says: []string{"not counted", "2003 instructions, more than the 1000"}},
		// "error" compiles to 7 instructions: 7 KiB×7 lets it search 7 lines of 1 KiB (1023 bytes each without the newline).
		{name: "the search stops at its budget", logs: kib(64), pattern: "error", lim: Limits{MaxInsts: 1000, Budget: 7 * 7 << 10}, count: 7,
			says: []string{"counted in the first 6 KiB of the 64 KiB of target logs read", "a pattern of 7 instructions searches at most 7 KiB"}},
		{name: "a run deleted stops it", ctx: cancelled, logs: kib(64), pattern: "error", lim: DefaultLimits,
			says: []string{"counted in the first 0 KiB", "was stopped (its run ended or was deleted)"}},
		{name: "an invalid pattern admitted before the rule", logs: kib(1), pattern: "(", lim: DefaultLimits,
			says: []string{"not counted", "missing closing )"}},
		{name: "logs not read", logs: kib(2), pattern: "error", lim: DefaultLimits, unread: "the logs of 1 container were not read", count: 2,
			says: []string{"the logs of 1 container were not read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got := CountPatterns(ctx, c.logs, []Pattern{{Name: "p", Regex: c.pattern}}, c.lim, c.unread)[0]
			if got.Count != c.count || (got.Incomplete == "") != c.complete {
				t.Errorf("count %d incomplete %q; want count %d, complete %v", got.Count, got.Incomplete, c.count, c.complete)
			}
			for _, s := range c.says {
				if !strings.Contains(got.Incomplete, s) {
					t.Errorf("incomplete %q does not say %q", got.Incomplete, s)
				}
			}
		})
	}
}

// TestSampleIsPrintable: the sample is a line the target's image wrote; it reaches status.
func TestSampleIsPrintable(t *testing.T) {
	logs := [][]byte{[]byte("\x1b]0;pwned\x07\x1b[2J ERROR \u202e" + strings.Repeat("x", 500) + "\r\n")}
	got := CountPatterns(context.Background(), logs, DefaultPatterns, DefaultLimits, "")[1]
	if got.Count != 1 || len(got.Sample) > maxSampleLength || strings.ContainsAny(got.Sample, "\x1b\x07\r\u202e") ||
		!strings.HasPrefix(got.Sample, `\x1b]0;pwned\x07\x1b[2J ERROR \u202e`) {
		t.Errorf("sample %q", got.Sample)
	}
}

// FuzzLargeRepeat: a pattern admission lets through (LargeRepeat does not match it) repeats
// nothing more than MaxRepeat times, as RE2's own parser reads it.
func FuzzLargeRepeat(f *testing.F) {
	for _, s := range []string{".{1000}.{1000}B", `a{100}`, `a{101}`, `a{5,101}`, `a{101,}`, `\{1000}`, `\\{1000}`, `\\\{1000}`,
		`[{1000}]`, `\x{1000}`, `(ab){99}`, `a{0101}`, `\Q{1000}\E`, `\Q\\E{101}`, `(?i)warn{2,200}`, `x{2}{3}`} {
		f.Add(s)
	}
	large := regexp.MustCompile(LargeRepeat)
	f.Fuzz(func(t *testing.T, pattern string) {
		parsed, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil || large.MatchString(pattern) {
			return
		}
		var walk func(re *syntax.Regexp)
		walk = func(re *syntax.Regexp) {
			if re.Op == syntax.OpRepeat && (re.Min > MaxRepeat || re.Max > MaxRepeat) {
				t.Fatalf("%q: admitted, but repeats {%d,%d}", pattern, re.Min, re.Max)
			}
			for _, sub := range re.Sub {
				walk(sub)
			}
		}
		walk(parsed)
		if _, _, err := Compile(pattern, DefaultLimits.MaxInsts); err != nil && !strings.Contains(err.Error(), "instructions") {
			t.Fatalf("%q: parsed, but Compile failed: %v", pattern, err)
		}
	})
}
