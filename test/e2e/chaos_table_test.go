//go:build e2e && chaos

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// tryResult is what one run through one fault showed.
type tryResult struct {
	outcome string // phase/reason
	// failure is why the run is not what the fault expects, "" when it is.
	failure               string
	withResults           bool // Succeeded with complete results
	dupJobs, secondStarts int
	nsLeft                int
	lostToEnd             time.Duration // from the runner's loss to the terminal phase
}

// chaosTable sums the tries of each fault into hack/chaos/RESULTS.md's table.
type chaosTable struct {
	mu    sync.Mutex
	order []fault
	tries map[string][]tryResult
}

func (c *chaosTable) add(f fault, r tryResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tries == nil {
		c.tries = map[string][]tryResult{}
	}
	if _, ok := c.tries[f.name]; !ok {
		c.order = append(c.order, f)
	}
	c.tries[f.name] = append(c.tries[f.name], r)
}

func (c *chaosTable) markdown() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.WriteString("| fault | expected | runs | as expected | Succeeded with results | duplicate runner Jobs | second starts | namespaces left after TTL | lost runner → terminal | outcomes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range c.order {
		tries := c.tries[f.name]
		var ok, withResults, dup, starts, left int
		var lost []string
		outcomes := map[string]int{}
		for _, r := range tries {
			if r.failure == "" {
				ok++
			}
			if r.withResults {
				withResults++
			}
			dup += r.dupJobs
			starts += r.secondStarts
			left += r.nsLeft
			if r.lostToEnd > 0 {
				lost = append(lost, fmt.Sprintf("%.0f s", r.lostToEnd.Seconds()))
			}
			outcomes[r.outcome]++
		}
		lostCell := "—"
		if len(lost) > 0 {
			lostCell = strings.Join(lost, ", ")
		}
		var outs []string
		for o, n := range outcomes {
			outs = append(outs, fmt.Sprintf("%d× %s", n, o))
		}
		slices.Sort(outs)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %s | %s |\n",
			f.name, f.expect, len(tries), ok, withResults, dup, starts, left, lostCell, strings.Join(outs, ", "))
	}
	return b.String()
}

// matches says whether name matches the regular expression pick.
func matches(pick, name string) bool {
	ok, err := regexp.MatchString(pick, name)
	return err == nil && ok
}
