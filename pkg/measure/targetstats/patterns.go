package targetstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"

	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// The log patterns and the logs are both the tenant's (spec.stability.logPatterns, the target's
// image), and the manager searches the one with the other: what that may cost is bounded here.

// Pattern is one log pattern to count.
type Pattern struct {
	Name  string
	Regex string
}

// Finding counts one pattern's matches and keeps the first matching line.
type Finding struct {
	Pattern string
	Count   int64
	Sample  string
	// Incomplete says why Count does not cover every log line read; "" when it does. A count
	// that covers only part of the logs is never passed off as the whole.
	Incomplete string
}

// Limits bound the search one pattern makes.
type Limits struct {
	// MaxInsts: a pattern whose compiled program has more instructions is not run.
	MaxInsts int
	// Budget bounds the bytes a pattern searches times its program's instructions: the matcher
	// does at most about one step per instruction per byte, so a larger pattern searches fewer
	// bytes, and every pattern's search costs about the same at most.
	Budget int64
}

// DefaultLimits: the built-in patterns (under 30 instructions) search every byte the manager
// reads (32 MiB); a pattern of the largest size searches 1 MiB. Measured: a 200-instruction
// pattern that keeps every thread alive (.{100}.{100}B) takes 3 µs a byte.
var DefaultLimits = Limits{MaxInsts: 1000, Budget: 1 << 30}

// MaxRepeat is the largest count of a counted repetition ({n}, {n,m}) admission takes.
const MaxRepeat = 100

// LargeRepeat matches a pattern with a counted repetition above MaxRepeat: the admission rule
// on spec.stability.logPatterns[].regex is !self.matches(r'LargeRepeat'), verbatim
// (test/admission checks it). The repetition must follow an even number of backslashes (\{ is a
// literal brace); it over-matches a brace in a character class or after \x, which is refused too.
const LargeRepeat = `(^|[^\\])(\\\\)*\{(([1-9][0-9]{3,}|[2-9][0-9]{2}|1[1-9][0-9]|10[1-9])(,[0-9]*)?|[0-9]+,([1-9][0-9]{3,}|[2-9][0-9]{2}|1[1-9][0-9]|10[1-9]))\}`

// Compile compiles a pattern as regexp does (RE2, Perl flags), refusing one whose program has
// more than maxInsts instructions; insts is the program's size.
func Compile(pattern string, maxInsts int) (re *regexp.Regexp, insts int, err error) {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, 0, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, err
	}
	if insts = len(prog.Inst); insts > maxInsts {
		return nil, insts, fmt.Errorf("the pattern compiles to %d instructions, more than the %d the manager runs over target logs: "+
			"make it smaller (fewer or smaller counted repetitions {n}, fewer alternatives)", insts, maxInsts)
	}
	re, err = regexp.Compile(pattern)
	return re, insts, err
}

// search is one pattern's search in progress.
type search struct {
	re       *regexp.Regexp
	insts    int
	limit    int64 // bytes it may search
	searched int64
	cut      bool
}

// CountPatterns counts, per pattern, the lines of logs that match it. It runs off the reconcile
// workers; ctx (its deadline, its run deleted) is checked between lines. A pattern refused by
// lim, or a search cut by lim or ctx, says so in its finding's Incomplete. unread, when not
// empty, says what of the target's logs could not be read: every finding says it too.
func CountPatterns(ctx context.Context, logs [][]byte, patterns []Pattern, lim Limits, unread string) []Finding {
	findings := make([]Finding, len(patterns))
	searches := make([]*search, len(patterns))
	var total int64
	for _, log := range logs {
		total += int64(len(log))
	}
	for i, p := range patterns {
		findings[i].Pattern = p.Name
		re, insts, err := Compile(p.Regex, lim.MaxInsts)
		if err != nil {
			findings[i].Incomplete = "not counted: " + err.Error()
			continue
		}
		searches[i] = &search{re: re, insts: insts, limit: lim.Budget / int64(max(insts, 1))}
	}
	stopped := searchLogs(ctx, logs, searches, findings)
	for i, s := range searches {
		switch {
		case s == nil:
			continue
		case s.cut:
			findings[i].Incomplete = fmt.Sprintf("counted in the first %s of the %s of target logs read: a pattern of %d instructions searches at most %s; a smaller pattern searches more",
				size(s.searched), size(total), s.insts, size(s.limit))
		case stopped != nil:
			why := "ran out of time"
			if !errors.Is(stopped, context.DeadlineExceeded) {
				why = "was stopped (its run ended or was deleted)"
			}
			findings[i].Incomplete = fmt.Sprintf("counted in the first %s of the %s of target logs read: the search %s", size(s.searched), size(total), why)
		}
		if unread != "" {
			findings[i].Incomplete = join(findings[i].Incomplete, unread)
		}
	}
	return findings
}

// searchLogs runs the searches over every line, and returns ctx's error if it ended them.
func searchLogs(ctx context.Context, logs [][]byte, searches []*search, findings []Finding) error {
	for _, log := range logs {
		for len(log) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			line := log
			if i := bytes.IndexByte(log, '\n'); i >= 0 {
				line, log = log[:i], log[i+1:]
			} else {
				log = nil
			}
			for i, s := range searches {
				if s == nil || s.cut {
					continue
				}
				if s.searched+int64(len(line)) > s.limit {
					s.cut = true // the count stays that of the lines before
					continue
				}
				s.searched += int64(len(line))
				if s.re.Match(line) {
					findings[i].Count++
					if findings[i].Sample == "" {
						findings[i].Sample = sample(line)
					}
				}
			}
		}
	}
	return nil
}

// maxSampleLength keeps status small: one line, cut.
const maxSampleLength = 200

// sample is a matching line as status shows it: printable (the target's image wrote it) and short.
func sample(line []byte) string {
	return textsafe.Short(string(bytes.TrimSpace(line)), maxSampleLength)
}

func size(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// DefaultPatterns are counted when a stability test names none, as seed 000 reviewed its
// daemon log for warnings and errors.
var DefaultPatterns = []Pattern{
	{Name: "warning", Regex: `(?i)\bwarn(ing)?\b`},
	{Name: "error", Regex: `(?i)\b(error|fatal|panic)\b`},
}
