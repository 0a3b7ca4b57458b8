// Package runners builds the runner side of a TestRun: execution segments, device ranges,
// the k6 load configuration and the runner Jobs. It makes objects; it never talks to a cluster.
package runners

import (
	"fmt"
	"strings"
)

// Segment is runner i's share of the test as k6 execution-segment flags.
type Segment struct {
	// Segment is this runner's part, e.g. "1/4:2/4".
	Segment string
	// Sequence is every runner's boundaries, e.g. "0,1/4,2/4,3/4,1". Passing the whole sequence
	// makes k6 split VUs and iterations exactly, with no runner rounding its share up.
	Sequence string
}

// Segments splits a test into n equal execution segments.
func Segments(n int) []Segment {
	if n < 1 {
		n = 1
	}
	bounds := make([]string, n+1)
	for i := 0; i <= n; i++ {
		bounds[i] = fraction(i, n)
	}
	sequence := strings.Join(bounds, ",")
	out := make([]Segment, n)
	for i := range out {
		out[i] = Segment{Segment: bounds[i] + ":" + bounds[i+1], Sequence: sequence}
	}
	return out
}

func fraction(i, n int) string {
	switch i {
	case 0:
		return "0"
	case n:
		return "1"
	default:
		return fmt.Sprintf("%d/%d", i, n)
	}
}

// DeviceRange is the inclusive range of device ids one runner emulates.
type DeviceRange struct{ First, Last int64 }

// Count is how many devices the range holds.
func (r DeviceRange) Count() int64 { return r.Last - r.First + 1 }

// DeviceRanges splits devices 0..devices-1 into n disjoint, contiguous ranges whose sizes
// differ by at most one. A runner with no devices (more runners than devices) gets Last < First.
func DeviceRanges(devices int64, n int) []DeviceRange {
	out := make([]DeviceRange, n)
	for i := range out {
		first := devices * int64(i) / int64(n)
		next := devices * int64(i+1) / int64(n)
		out[i] = DeviceRange{First: first, Last: next - 1}
	}
	return out
}
