// Package memlimit derives the manager's soft memory limit (runtime/debug.SetMemoryLimit) from
// its container's memory limit, when GOMEMLIMIT does not set one.
//
// Why: with GOGC=100 alone the Go heap grows to twice its live size before a collection. At
// 5,000 runners the manager's live heap is 74–104 MiB, yet the heap in use reached 301–342 MiB
// between two collections and the peak RSS 542–557 MiB, above the 512Mi the chart gives the
// container: the kernel would kill it for garbage the GC had not yet collected. A soft limit
// makes the GC collect sooner as the heap nears it (GOMEMLIMIT=340MiB measured 383 MiB peak;
// hack/bench/BASELINES.md, "Scale").
package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// The container's memory limit as the kernel shows it inside the container: cgroup v2's
// memory.max ("max": none), or cgroup v1's memory.limit_in_bytes (a huge number: none).
const (
	V2File = "/sys/fs/cgroup/memory.max"
	V1File = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// Percent of the container's limit the soft limit is set to. The Go runtime counts its heap,
// goroutine stacks and its own metadata against the soft limit, but the GC can only shrink the
// heap: stacks (100–114 MiB at 5,000 runners) and memory the scavenger has not yet returned
// stay. RSS also holds what the runtime does not count (the binary's pages, memory the kernel
// keeps for the process). Measured: 383 MiB peak RSS under a 340 MiB soft limit, 43 MiB (13 %)
// above it. 80 % leaves 20 % of the container (102 MiB of 512Mi) for that overshoot.
const Percent = 80

// unlimitedV1 is where cgroup v1 values mean "no limit": v1 shows an unlimited cgroup as the
// largest page-aligned int64 (9223372036854771712), and no real limit is near 2^62 bytes.
const unlimitedV1 = int64(1) << 62

// ReadFile reads a whole file; os.ReadFile in the manager, a map in tests.
type ReadFile func(name string) ([]byte, error)

// Decision is what the manager does about its soft memory limit.
type Decision struct {
	// Set: call debug.SetMemoryLimit(Soft). False when GOMEMLIMIT set it, or the container has
	// no limit (or none could be read).
	Set bool
	// Soft is the soft limit in bytes (when Set).
	Soft int64
	// Container is the container's limit in bytes, 0 when none was found.
	Container int64
	// Source is the file the container's limit came from, or "GOMEMLIMIT".
	Source string
	// Err is why the container's limit could not be read (then nothing is set).
	Err error
}

// Decide says what soft limit to set: none when GOMEMLIMIT is set (the user's choice wins, the
// runtime already applied it), else Percent of the container's cgroup limit when there is one.
func Decide(gomemlimit string, read ReadFile) Decision {
	if gomemlimit != "" {
		return Decision{Source: "GOMEMLIMIT"}
	}
	limit, source, err := ContainerLimit(read)
	if err != nil || limit == 0 {
		return Decision{Source: source, Err: err}
	}
	return Decision{Set: true, Soft: Soft(limit), Container: limit, Source: source}
}

// String says what was decided, for the manager's start-up log.
func (d Decision) String() string {
	switch {
	case d.Source == "GOMEMLIMIT":
		return "soft memory limit from GOMEMLIMIT"
	case d.Err != nil:
		return fmt.Sprintf("no soft memory limit: the container's memory limit could not be read: %v", d.Err)
	case !d.Set:
		return "no soft memory limit: the container has no memory limit"
	}
	return fmt.Sprintf("soft memory limit %s: %d %% of the container's memory limit %s (%s)", mib(d.Soft), Percent, mib(d.Container), d.Source)
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// Soft is Percent of a container limit of limit bytes.
func Soft(limit int64) int64 { return limit / 100 * Percent }

// ContainerLimit reads the container's memory limit in bytes: cgroup v2 first, then v1. 0
// (and no error) means no limit: the file says so, or neither file exists (not in a
// container, or not on Linux). source is the file that answered.
func ContainerLimit(read ReadFile) (limit int64, source string, err error) {
	for _, f := range []struct {
		name  string
		parse func(string) (int64, error)
	}{{V2File, parseV2}, {V1File, parseV1}} {
		b, err := read(f.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, f.name, err
		}
		limit, err := f.parse(strings.TrimSpace(string(b)))
		if err != nil {
			return 0, f.name, fmt.Errorf("%s: %w", f.name, err)
		}
		return limit, f.name, nil
	}
	return 0, "", nil
}

// parseV2 reads memory.max: "max" or a number of bytes.
func parseV2(s string) (int64, error) {
	if s == "max" {
		return 0, nil
	}
	return parseBytes(s)
}

// parseV1 reads memory.limit_in_bytes: a number of bytes, huge when unlimited.
func parseV1(s string) (int64, error) {
	n, err := parseBytes(s)
	if err != nil || n >= unlimitedV1 {
		return 0, err
	}
	return n, nil
}

func parseBytes(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number of bytes: %q", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("not a positive number of bytes: %q", s)
	}
	return n, nil
}
