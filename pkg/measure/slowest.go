package measure

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A p99 says that something was slow, not what: each runner keeps, per window, its K slowest
// requests (http_req_duration, grpc_req_duration), and the merge keeps the K slowest of their
// union per window, which is exact: a request among the fleet's K slowest of a window is among
// its own runner's K slowest of it.

// Bounds of the slowest requests, on the runner and on decode.
const (
	// DefaultSlowest is K, the requests kept per window, unless the runner is told otherwise.
	DefaultSlowest = 5
	// MaxSlowest bounds K.
	MaxSlowest = 50
	// SlowestOfRun is how many of the run's slowest requests Summary.SlowestOfRun keeps.
	SlowestOfRun = 20
	// String bounds of a SlowRequest, in bytes; the runner cuts, the decoder refuses longer ones.
	MaxSlowName     = 256
	MaxSlowURL      = 512
	MaxSlowMethod   = 32
	MaxSlowStatus   = 16
	MaxSlowScenario = 128
	MaxSlowRunner   = 253
	// MaxSlowTraceID: a W3C trace id is 32 hex digits (16 bytes); other tracers use fewer.
	MaxSlowTraceID = 32
)

// SlowRequest is one slow request: where it went, how long it took and when it started.
type SlowRequest struct {
	// Key is the window the request's sample was counted in (its end), in the envelope's
	// window width; in a Summary, in the summary's.
	Key int64 `json:"k"`
	// DurationMillis is the sample's value: http_req_duration or grpc_req_duration.
	DurationMillis float64 `json:"ms"`
	// StartUnixNano is the sample's time minus its duration.
	StartUnixNano int64  `json:"start"`
	Name          string `json:"name,omitempty"`
	URL           string `json:"url,omitempty"`
	Method        string `json:"method,omitempty"`
	Status        string `json:"status,omitempty"`
	Scenario      string `json:"scenario,omitempty"`
	// TraceID is the trace the request belongs to when the script propagates trace context
	// (k6's tracing instrumentation puts it in the sample's metadata); lower-case hex.
	TraceID string `json:"trace,omitempty"`
	// Runner is the envelope's runner: empty in an envelope (the envelope names it), set by Merge.
	Runner string `json:"runner,omitempty"`
}

// CompareSlow orders slow requests slowest first, then by earlier start, runner, URL and the
// rest: a total order, so merging is deterministic whatever the runners' order.
func CompareSlow(a, b *SlowRequest) int {
	if c := cmp.Compare(b.DurationMillis, a.DurationMillis); c != 0 {
		return c
	}
	if c := cmp.Compare(a.StartUnixNano, b.StartUnixNano); c != 0 {
		return c
	}
	for _, p := range [...][2]string{{a.Runner, b.Runner}, {a.URL, b.URL}, {a.Name, b.Name}, {a.Method, b.Method},
		{a.Status, b.Status}, {a.Scenario, b.Scenario}, {a.TraceID, b.TraceID}} {
		if c := strings.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Key, b.Key)
}

// TopSlow sorts rs slowest first and keeps at most k of them.
func TopSlow(rs []SlowRequest, k int) []SlowRequest {
	slices.SortFunc(rs, func(a, b SlowRequest) int { return CompareSlow(&a, &b) })
	return rs[:min(len(rs), max(k, 0))]
}

// CutSlow returns r with every string cut to its bound (on a character boundary) and a trace
// id that is not hex dropped: what a runner keeps.
func CutSlow(r SlowRequest) SlowRequest {
	r.Name = cutText(r.Name, MaxSlowName)
	r.URL = cutText(r.URL, MaxSlowURL)
	r.Method = cutText(r.Method, MaxSlowMethod)
	r.Status = cutText(r.Status, MaxSlowStatus)
	r.Scenario = cutText(r.Scenario, MaxSlowScenario)
	r.Runner = cutText(r.Runner, MaxSlowRunner)
	if !ValidTraceID(r.TraceID) {
		r.TraceID = ""
	}
	return r
}

// ValidTraceID says whether id is a trace id a report may put in a link: 1 to MaxSlowTraceID
// lower-case hex digits, not all zero (W3C's invalid id).
func ValidTraceID(id string) bool {
	if id == "" || len(id) > MaxSlowTraceID {
		return false
	}
	zero := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
		zero = zero && c == '0'
	}
	return !zero
}

// cutText cuts s to at most n bytes without splitting a UTF-8 sequence.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 { // a continuation byte: back to the sequence's start
		i--
	}
	return s[:i]
}

// validateSlowest checks the envelope's slowest requests: at most SlowestPerWindow (itself at
// most MaxSlowest) per window, keys ascending, at most SlowestOfRun of the run, each request
// valid. The JSON scan bounds their memory; this keeps the lists the merge and a report take
// from a hostile runner as small as an honest one's.
func (e *Envelope) validateSlowest() error {
	if e.SlowestPerWindow < 0 || e.SlowestPerWindow > MaxSlowest {
		return fmt.Errorf("slowest requests per window %d is not in [0, %d]", e.SlowestPerWindow, MaxSlowest)
	}
	if len(e.SlowestRun) > SlowestOfRun {
		return fmt.Errorf("%d slowest requests of the run (at most %d)", len(e.SlowestRun), SlowestOfRun)
	}
	run := 0
	for i := range e.Slowest {
		r := &e.Slowest[i]
		switch {
		case i > 0 && r.Key < e.Slowest[i-1].Key:
			return fmt.Errorf("slowest request %d: window keys not ascending", i)
		case i > 0 && r.Key == e.Slowest[i-1].Key:
			run++
		default:
			run = 1
		}
		if run > e.SlowestPerWindow {
			return fmt.Errorf("slowest requests: more than %d in window %d", e.SlowestPerWindow, r.Key)
		}
		if err := r.validate(); err != nil {
			return fmt.Errorf("slowest request %d: %w", i, err)
		}
	}
	for i := range e.SlowestRun {
		if err := e.SlowestRun[i].validate(); err != nil {
			return fmt.Errorf("slowest request %d of the run: %w", i, err)
		}
	}
	return nil
}

func (r *SlowRequest) validate() error {
	if math.IsNaN(r.DurationMillis) || math.IsInf(r.DurationMillis, 0) || r.DurationMillis < 0 {
		return fmt.Errorf("duration %g ms", r.DurationMillis)
	}
	if r.TraceID != "" && !ValidTraceID(r.TraceID) {
		return fmt.Errorf("trace id is not 1 to %d lower-case hex digits", MaxSlowTraceID)
	}
	for _, f := range [...]struct {
		what string
		v    string
		max  int
	}{{"name", r.Name, MaxSlowName}, {"url", r.URL, MaxSlowURL}, {"method", r.Method, MaxSlowMethod},
		{"status", r.Status, MaxSlowStatus}, {"scenario", r.Scenario, MaxSlowScenario}, {"runner", r.Runner, MaxSlowRunner}} {
		if len(f.v) > f.max {
			return fmt.Errorf("%s of %d bytes (at most %d)", f.what, len(f.v), f.max)
		}
	}
	return nil
}

// mergeSlowest is the K slowest requests per window (of width wide) of the envelopes, where K
// is the largest any envelope kept, and the run's n slowest: the top n of the runners' own top
// n (SlowestRun), or of their windows' where an envelope has none.
func mergeSlowest(envs []Envelope, wide int64, n int) (perWindow, run []SlowRequest) {
	k := 0
	var all []SlowRequest
	for i := range envs {
		e := &envs[i]
		k = max(k, e.SlowestPerWindow)
		name := cutText(e.Runner, MaxSlowRunner)
		for _, r := range e.Slowest {
			r.Key = floorDiv(r.Key*e.WindowNanos, wide)
			r.Runner = cmp.Or(r.Runner, name)
			all = append(all, r)
			if len(e.SlowestRun) == 0 {
				run = append(run, r)
			}
		}
		for _, r := range e.SlowestRun {
			r.Key = floorDiv(r.Key*e.WindowNanos, wide)
			r.Runner = cmp.Or(r.Runner, name)
			run = append(run, r)
		}
	}
	// Window first, slowest first within it: then each window's first k are its top k.
	slices.SortFunc(all, func(a, b SlowRequest) int {
		if c := cmp.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return CompareSlow(&a, &b)
	})
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].Key == all[i].Key {
			j++
		}
		perWindow = append(perWindow, all[i:min(j, i+k)]...)
		i = j
	}
	return perWindow, TopSlow(run, n)
}

// slowHeap is a min-heap of at most k requests by CompareSlow: its root is the least slow kept,
// the one a slower request replaces.
type slowHeap []SlowRequest

// less says a ranks below b (is less slow).
func slowLess(a, b *SlowRequest) bool { return CompareSlow(a, b) > 0 }

func (h slowHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !slowLess(&h[i], &h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h slowHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && slowLess(&h[r], &h[l]) {
			m = r
		}
		if !slowLess(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// admits says whether a request of ms milliseconds may enter a heap of k: cheap, for the hot
// path (a tie on the duration is decided by offer).
func (h slowHeap) admits(ms float64, k int) bool {
	return len(h) < k || k > 0 && ms >= h[0].DurationMillis
}

// offer keeps r if it is among the k slowest; h must have been made with capacity k.
func (h *slowHeap) offer(r SlowRequest, k int) {
	if len(*h) < k {
		*h = append(*h, r)
		h.up(len(*h) - 1)
		return
	}
	if k == 0 || !slowLess(&(*h)[0], &r) {
		return
	}
	(*h)[0] = r
	h.down(0)
}
