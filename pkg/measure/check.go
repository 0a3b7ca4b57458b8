package measure

import (
	"encoding/json"
	"strings"
)

// CheckReport is what the runner's pre-flight (`fleetbench-runner check run ...`) prints, on one
// line, when k6 run accepted the test: k6's own consolidated and derived options, as the
// runners will see them.
type CheckReport struct {
	// Check is "passed"; it marks the line.
	Check string `json:"fleetbenchCheck"`
	// NoSetup and NoTeardown are k6's consolidated values: whether `k6 run` would skip them.
	NoSetup    bool `json:"noSetup"`
	NoTeardown bool `json:"noTeardown"`
	// TotalDuration is the longest the load may take, gracefulStop included (Go duration).
	TotalDuration string `json:"totalDuration"`
	// Segments are the runners' shares in the order of the segment sequence; left out of a
	// termination message that would pass the kubelet's 4 KiB.
	Segments []CheckSegment `json:"segments,omitempty"`
}

// CheckSegment is one execution segment of the sequence, one runner's share.
type CheckSegment struct {
	Segment   string          `json:"segment"`
	MaxVUs    uint64          `json:"maxVUs"`
	Scenarios []CheckScenario `json:"scenarios"`
}

// CheckScenario is one scenario's VUs in one segment.
type CheckScenario struct {
	Name     string `json:"name"`
	Executor string `json:"executor"`
	// VUs are those the segment initialises (preAllocatedVUs of an arrival-rate scenario);
	// MaxVUs also counts those it may add while running.
	VUs    uint64 `json:"vus"`
	MaxVUs uint64 `json:"maxVUs"`
}

// CheckPassed is CheckReport.Check of a passed check.
const CheckPassed = "passed"

// checkPrefix starts a report's line.
const checkPrefix = `{"fleetbenchCheck"`

// ParseCheckReport finds the report in a check's output or termination message (at most
// 64 KiB of it are read: the text may come from a hostile tenant's image).
func ParseCheckReport(out string) (CheckReport, bool) {
	if len(out) > 64<<10 {
		out = out[:64<<10]
	}
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, checkPrefix) {
			continue
		}
		var r CheckReport
		if json.Unmarshal([]byte(line), &r) == nil && r.Check == CheckPassed {
			return r, true
		}
	}
	return CheckReport{}, false
}
