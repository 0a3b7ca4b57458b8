// Package measure holds fleetbench's runner result envelope and the pure
// logic that merges the envelopes of N k6 runners into exact totals,
// mergeable percentiles, checks and globally evaluated thresholds.
//
// It deliberately depends on the standard library only, so the operator and
// the k6 runner can both use it.
package measure

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Version is the envelope format this build writes and reads.
const Version = 1

// Marker lines delimit an envelope in a log. The version in the marker lets
// a reader tell an envelope it cannot read from one that is missing.
const (
	markerPrefix = "--- fleetbench-result v"
	BeginMarker  = "--- fleetbench-result v1 begin ---"
	EndMarker    = "--- fleetbench-result v1 end ---"
)

// Encodings of the envelope body.
const (
	EncodingJSON       = "json"
	EncodingGzipBase64 = "gzip+base64"
)

// Limits that keep decoding of hostile or corrupt input cheap (see also Limits).
const (
	maxDecodedBytes = 64 << 20 // bounds a header's byte count and a log line; DefaultLimits is lower
	plainJSONLimit  = 2 << 10  // larger bodies are gzipped
	base64LineWidth = 120      // short lines survive log line splitting
)

// Envelope is everything one runner reports about its run.
type Envelope struct {
	Version   int    `json:"version"`
	Runner    string `json:"runner,omitempty"` // pod or host name
	K6Version string `json:"k6,omitempty"`
	// Final is false for periodic checkpoints; a reader prefers the last
	// final envelope but a checkpoint is what is left when a runner dies.
	Final   bool   `json:"final"`
	Aborted bool   `json:"aborted,omitempty"`
	Error   string `json:"error,omitempty"`

	StartUnixNano int64 `json:"start"`
	EndUnixNano   int64 `json:"end"`
	// WindowNanos is the width of the time windows. Window keys are
	// unixNano/WindowNanos, so windows of all runners line up.
	WindowNanos int64 `json:"window"`
	// Accuracy is the histograms' relative accuracy.
	Accuracy float64 `json:"accuracy"`

	Metrics []Metric `json:"metrics"`
	CPU     CPU      `json:"cpu"`
	// Thresholds are the script's own thresholds, metric name to
	// expressions, so they can be evaluated on merged data.
	Thresholds map[string][]string `json:"thresholds,omitempty"`
	// AbortOnFail are the script's thresholds marked abortOnFail: the operator stops the whole
	// fleet when the merged data fails one.
	AbortOnFail []AbortThreshold `json:"abortOnFail,omitempty"`
	// OverflowSamples counts samples folded into an "_overflow" series
	// because a metric hit the runner's series limit.
	OverflowSamples uint64 `json:"overflow,omitempty"`
	// Overflows names, per metric that hit the limit, the tag whose many values did it.
	Overflows []Overflow `json:"overflows,omitempty"`
	// Tags are the tag keys this runner split series by: KeptTags plus those thresholds name.
	Tags []string `json:"tags,omitempty"`
	// SlowestPerWindow is K, the most requests Slowest holds per window; 0: none kept (an
	// older runner, or turned off).
	SlowestPerWindow int `json:"slowestK,omitempty"`
	// Slowest are the K slowest requests of each window, ascending by window key and slowest
	// first within one (slowest.go).
	Slowest []SlowRequest `json:"slowest,omitempty"`
	// SlowestRun are the runner's SlowestOfRun slowest requests of the whole run, slowest
	// first: the run's top list is exact even when its slowest requests crowd one window.
	SlowestRun []SlowRequest `json:"slowestRun,omitempty"`
}

// Overflow says which tag of a metric had more values than the runner keeps series for.
type Overflow struct {
	Metric string `json:"metric"`
	// Tag has the most distinct values among the metric's series when the limit was hit.
	Tag string `json:"tag"`
	// Series is the limit: tag combinations kept before samples fold into "_overflow".
	Series int `json:"series"`
}

// Message tells the user what overflowed and what to change.
func (o Overflow) Message() string {
	return fmt.Sprintf("metric %s had more than %d tag combinations, most of them from tag %q: samples beyond are "+
		"counted in totals but not in sub-metrics; give such requests a fixed name tag (e.g. tags: {name: 'orders'}) "+
		"or drop %q from the thresholds", o.Metric, o.Series, o.Tag, o.Tag)
}

// Metric is one k6 metric, split into series by the kept tags.
type Metric struct {
	Name     string     `json:"name"`
	Type     MetricType `json:"type"`
	Contains string     `json:"contains,omitempty"` // "time", "data" or empty
	Series   []Series   `json:"series"`
}

// Series is the data of one tag combination.
type Series struct {
	Tags    map[string]string `json:"tags,omitempty"`
	Total   Agg               `json:"total"`
	Windows []Window          `json:"windows,omitempty"` // ascending keys
}

// Window is the data of one time window of a series.
type Window struct {
	Key int64 `json:"k"`
	Agg
}

// CPU describes the runner's own resource use, to tell whether the load
// generator rather than the target was the limit.
type CPU struct {
	UserSeconds   float64     `json:"user"`
	SystemSeconds float64     `json:"system"`
	Cores         float64     `json:"cores"` // usable cores (cgroup quota or CPU count)
	MaxRSSBytes   int64       `json:"maxRSS,omitempty"`
	Windows       []CPUWindow `json:"windows,omitempty"`
}

// CPUWindow is the CPU time (user+system) spent in one window, and the runner's resident
// memory at its last sample in that window: one point per window of the runner's own memory
// over time, so a generator's leak can be told from the target's (pkg/judge RunnersMemory).
type CPUWindow struct {
	Key     int64   `json:"k"`
	Seconds float64 `json:"s"`
	// RSSBytes is the resident memory then; 0: not sampled (an older runner).
	RSSBytes int64 `json:"rss,omitempty"`
}

// Start and End return the envelope's time span.
func (e *Envelope) Start() time.Time { return time.Unix(0, e.StartUnixNano) }

// End returns the time the runner stopped collecting.
func (e *Envelope) End() time.Time { return time.Unix(0, e.EndUnixNano) }

// Validate checks the invariants merge relies on and names the first
// violation.
func (e *Envelope) Validate() error {
	if e.Version != Version {
		return fmt.Errorf("unsupported envelope version %d (this build reads %d)", e.Version, Version)
	}
	if e.WindowNanos <= 0 {
		return fmt.Errorf("window width %d ns is not positive", e.WindowNanos)
	}
	if e.EndUnixNano < e.StartUnixNano {
		return fmt.Errorf("end %d is before start %d", e.EndUnixNano, e.StartUnixNano)
	}
	if math.IsNaN(e.Accuracy) || e.Accuracy <= 0 || e.Accuracy >= 1 {
		return fmt.Errorf("histogram accuracy %g is not in (0, 1)", e.Accuracy)
	}
	seen := make(map[string]bool, len(e.Metrics))
	for i := range e.Metrics {
		m := &e.Metrics[i]
		if m.Name == "" {
			return fmt.Errorf("metric %d has no name", i)
		}
		if seen[m.Name] {
			return fmt.Errorf("metric %q appears twice", m.Name)
		}
		seen[m.Name] = true
		if !m.Type.valid() {
			return fmt.Errorf("metric %q has unknown type %q", m.Name, m.Type)
		}
		for j := range m.Series {
			s := &m.Series[j]
			if err := s.Total.validate(m.Type); err != nil {
				return fmt.Errorf("metric %q series %d total: %w", m.Name, j, err)
			}
			for k := range s.Windows {
				w := &s.Windows[k]
				if k > 0 && w.Key <= s.Windows[k-1].Key {
					return fmt.Errorf("metric %q series %d: window keys not ascending at %d", m.Name, j, k)
				}
				if err := w.validate(m.Type); err != nil {
					return fmt.Errorf("metric %q series %d window %d: %w", m.Name, j, w.Key, err)
				}
			}
		}
	}
	return e.validateSlowest()
}

// Encode writes e between marker lines. Small bodies are plain JSON, larger
// ones gzip+base64 in short lines. A header line carries the body's length
// and SHA-256 so a truncated or damaged envelope is detected, not misread.
func Encode(w io.Writer, e *Envelope) error {
	if e.Version == 0 {
		e.Version = Version
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode envelope: %w", err)
	}
	sum := sha256.Sum256(raw)
	var b bytes.Buffer
	b.WriteString(BeginMarker + "\n")
	if len(raw) <= plainJSONLimit {
		fmt.Fprintf(&b, "encoding=%s bytes=%d sha256=%s\n", EncodingJSON, len(raw), hex.EncodeToString(sum[:]))
		b.Write(raw)
		b.WriteByte('\n')
	} else {
		fmt.Fprintf(&b, "encoding=%s bytes=%d sha256=%s\n", EncodingGzipBase64, len(raw), hex.EncodeToString(sum[:]))
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(raw) //nolint:errcheck // writes to a bytes.Buffer do not fail
		zw.Close()
		enc := base64.StdEncoding.EncodeToString(z.Bytes())
		for len(enc) > 0 {
			n := min(base64LineWidth, len(enc))
			b.WriteString(enc[:n])
			b.WriteByte('\n')
			enc = enc[n:]
		}
	}
	b.WriteString(EndMarker + "\n")
	// One Write, so a concurrent writer to the same stream cannot split it.
	_, err = w.Write(b.Bytes())
	return err
}

// ErrNoEnvelope is returned when a log holds no envelope begin marker.
var ErrNoEnvelope = errors.New("no fleetbench result envelope found")

// Decode reads exactly one envelope: begin marker, header, body, end marker.
// Surrounding text is not allowed; use ExtractEnvelope for logs.
func Decode(data []byte) (Envelope, error) { return DecodeWithin(data, DefaultLimits) }

// DecodeWithin is Decode of an envelope whose decoding must stay within lim.
func DecodeWithin(data []byte, lim Limits) (Envelope, error) {
	lines := splitLines(data)
	if len(lines) == 0 || lines[0] != BeginMarker {
		if len(lines) > 0 && strings.HasPrefix(lines[0], markerPrefix) {
			return Envelope{}, fmt.Errorf("unsupported envelope marker %q (this build reads version %d)", lines[0], Version)
		}
		return Envelope{}, ErrNoEnvelope
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if lines[i] == EndMarker {
			end = i
			break
		}
	}
	if end < 0 {
		return Envelope{}, errors.New("envelope truncated: end marker missing")
	}
	if end != len(lines)-1 {
		return Envelope{}, fmt.Errorf("unexpected text after the end marker (%d lines)", len(lines)-1-end)
	}
	return decodeBody(lines[1:end], lim)
}

// ExtractEnvelope finds the last complete envelope in a log tail, preferring
// a final envelope over a later checkpoint. Log lines that other writers
// interleave inside an envelope and kubelet timestamps are tolerated; the
// checksum decides. If no envelope decodes, the error of the last candidate
// says why.
func ExtractEnvelope(logTail []byte) (Envelope, error) {
	return ExtractEnvelopeWithin(logTail, DefaultLimits)
}

// ExtractEnvelopeWithin is ExtractEnvelope where decoding each envelope must stay within lim.
func ExtractEnvelopeWithin(logTail []byte, lim Limits) (Envelope, error) {
	lines := splitLines(logTail)
	var (
		best    *Envelope
		lastErr error
		found   bool
	)
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(stripTimestamp(lines[i]), markerPrefix) || !strings.HasSuffix(lines[i], "begin ---") {
			continue
		}
		found = true
		if stripTimestamp(lines[i]) != BeginMarker {
			lastErr = fmt.Errorf("unsupported envelope marker %q (this build reads version %d)", stripTimestamp(lines[i]), Version)
			continue
		}
		var body []string
		closed := false
		j := i + 1
		for ; j < len(lines); j++ {
			l := stripTimestamp(lines[j])
			if l == EndMarker {
				closed = true
				break
			}
			if l == BeginMarker {
				break // a new envelope started: this one was cut off
			}
			body = append(body, l)
		}
		if !closed {
			lastErr = errors.New("envelope truncated: end marker missing")
			i = j - 1
			continue
		}
		i = j
		env, err := decodeBody(filterBody(body), lim)
		if err != nil {
			lastErr = err
			continue
		}
		if best == nil || env.Final || !best.Final {
			best = &env
		}
	}
	switch {
	case best != nil:
		return *best, nil
	case !found:
		return Envelope{}, ErrNoEnvelope
	default:
		return Envelope{}, lastErr
	}
}

func splitLines(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	// No bigger than the data: 5,000 runners' live envelopes are read at once, and a 64 KiB
	// buffer each was 320 MB for envelopes of a few KiB.
	sc.Buffer(make([]byte, 0, min(len(data)+1, 64<<10)), maxDecodedBytes)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	if sc.Err() != nil {
		// A single absurdly long line: fall back to a plain split.
		out = out[:0]
		for _, l := range strings.Split(string(data), "\n") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// stripTimestamp removes a leading RFC 3339 timestamp as added by
// `kubectl logs --timestamps`.
func stripTimestamp(l string) string {
	ts, rest, ok := strings.Cut(l, " ")
	if !ok || len(ts) < 20 || ts[4] != '-' {
		return l
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		return l
	}
	return strings.TrimSpace(rest)
}

// filterBody drops lines that cannot belong to an envelope body (log lines
// of other writers, which may come before the header too) while keeping the
// header and the body lines. Without an "encoding=" line the first line stays,
// so the header error names what was there.
func filterBody(body []string) []string {
	start := slices.IndexFunc(body, func(l string) bool { return strings.HasPrefix(l, "encoding=") })
	if start < 0 {
		start = 0
	}
	out := make([]string, 0, len(body)-start)
	for k, l := range body[start:] {
		if k == 0 || strings.HasPrefix(l, "encoding=") || strings.HasPrefix(l, "{") || isBase64(l) {
			out = append(out, l)
		}
	}
	return out
}

func isBase64(l string) bool {
	if l == "" {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		base64Char := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
		if !base64Char {
			return false
		}
	}
	return true
}

type header struct {
	encoding string
	bytes    int
	sha256   []byte
}

func parseHeader(l string) (header, error) {
	var h header
	h.bytes = -1
	for _, f := range strings.Fields(l) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return h, fmt.Errorf("envelope header: field %q is not key=value", f)
		}
		switch k {
		case "encoding":
			if v != EncodingJSON && v != EncodingGzipBase64 {
				return h, fmt.Errorf("envelope header: unknown encoding %q", v)
			}
			h.encoding = v
		case "bytes":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxDecodedBytes {
				return h, fmt.Errorf("envelope header: bad byte count %q", v)
			}
			h.bytes = n
		case "sha256":
			s, err := hex.DecodeString(v)
			if err != nil || len(s) != sha256.Size {
				return h, fmt.Errorf("envelope header: bad sha256 %q", v)
			}
			h.sha256 = s
		}
	}
	switch {
	case h.encoding == "":
		return h, errors.New("envelope header: encoding missing")
	case h.bytes < 0:
		return h, errors.New("envelope header: bytes missing")
	case h.sha256 == nil:
		return h, errors.New("envelope header: sha256 missing")
	}
	return h, nil
}

func decodeBody(lines []string, lim Limits) (Envelope, error) {
	if len(lines) == 0 {
		return Envelope{}, errors.New("envelope empty: header missing")
	}
	h, err := parseHeader(lines[0])
	if err != nil {
		return Envelope{}, err
	}
	if h.bytes > lim.MaxBytes {
		return Envelope{}, rejectf("%d bytes of JSON (at most %d)", h.bytes, lim.MaxBytes)
	}
	body := strings.Join(lines[1:], "")
	// open gives the JSON, as many times as asked: once to scan, once to decode.
	var open func() (io.Reader, error)
	switch h.encoding {
	case EncodingJSON:
		open = func() (io.Reader, error) { return strings.NewReader(body), nil }
	case EncodingGzipBase64:
		z, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return Envelope{}, fmt.Errorf("envelope body: invalid base64: %w", err)
		}
		open = func() (io.Reader, error) {
			zr, err := gzip.NewReader(bytes.NewReader(z))
			if err != nil {
				return nil, fmt.Errorf("envelope body: invalid gzip: %w", err)
			}
			return zr, nil
		}
	}
	cost, err := scanWithin(open, h, lim)
	if err != nil {
		return Envelope{}, err
	}
	// The JSON and what it decodes into, within the process-wide budget.
	release, err := DecodeMemory.Acquire(WithTenant(context.Background(), lim.Tenant), int64(h.bytes)+cost)
	if err != nil {
		return Envelope{}, err
	}
	defer release()
	r, err := open()
	if err != nil {
		return Envelope{}, err
	}
	// Read at most one byte more than announced: enough to detect a mismatch, never a bomb; into
	// a buffer of that size, not one grown by half at a time.
	raw := make([]byte, h.bytes+1)
	n, err := io.ReadFull(r, raw)
	raw = raw[:n]
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	if err != nil && len(raw) < h.bytes {
		return Envelope{}, fmt.Errorf("envelope truncated: decompressed %d of %d bytes: %w", len(raw), h.bytes, err)
	}
	if len(raw) != h.bytes { // the scan checked the same bytes' length and checksum
		return Envelope{}, fmt.Errorf("envelope truncated or padded: body has %d bytes, header says %d", len(raw), h.bytes)
	}
	var e Envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return Envelope{}, fmt.Errorf("envelope json: %w", err)
	}
	if err := e.Validate(); err != nil {
		return Envelope{}, fmt.Errorf("invalid envelope: %w", err)
	}
	return e, nil
}

// scanWithin scans the JSON open gives (at most h.bytes of it) for its decoded cost, holding
// as much of DecodeMemory as the scan's buffers take (gunzip's window, the read buffer).
func scanWithin(open func() (io.Reader, error), h header, lim Limits) (int64, error) {
	release, err := DecodeMemory.Acquire(WithTenant(context.Background(), lim.Tenant), scanMemory)
	if err != nil {
		return 0, err
	}
	defer release()
	r, err := open()
	if err != nil {
		return 0, err
	}
	// The body is checked first (length, checksum), so a damaged one says so, not "malformed".
	sum := sha256.New()
	counted := &countingReader{r: io.TeeReader(io.LimitReader(r, int64(h.bytes)+1), sum)}
	cost, _, scanErr := scanCost(counted, lim)
	if errors.Is(scanErr, ErrRejected) {
		return cost, scanErr
	}
	_, err = io.Copy(io.Discard, counted)
	switch {
	case err != nil && counted.n < int64(h.bytes):
		return 0, fmt.Errorf("envelope truncated: decompressed %d of %d bytes: %w", counted.n, h.bytes, err)
	case counted.n != int64(h.bytes):
		return 0, fmt.Errorf("envelope truncated or padded: body has %d bytes, header says %d", counted.n, h.bytes)
	case !bytes.Equal(sum.Sum(nil), h.sha256):
		return 0, errors.New("envelope corrupt: sha256 mismatch")
	}
	return cost, scanErr
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// scanMemory is what one scan holds: gunzip's state and the scanner's buffer.
const scanMemory = 128 << 10

// sortedTagKey renders tags deterministically, for grouping and display.
func sortedTagKey(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte(':')
		b.WriteString(tags[k])
	}
	return b.String()
}

// LivePath is where a runner serves its envelope so far, in Encode's form, while the load runs.
const LivePath = "/v1/fleetbench/envelope"

// ReleasePath ends a runner started with --linger once the operator ran teardown() through
// k6's REST API: POST makes the runner interrupt itself once, as Ctrl+C would, and k6 then
// flushes its outputs and exits. (k6's REST API cannot end a linger.)
const ReleasePath = "/v1/fleetbench/release"

// A runner given ReachEnv (comma-separated host:port) waits, while k6 loads the script, until
// each accepts a TCP connection from its pod, for at most ReachTimeoutEnv (a Go duration); it
// answers ReadyPath only after that. If one never does, it exits with ExitTargetUnreachable,
// saying which, before any load.
const (
	ReachEnv              = "FLEETBENCH_REACH"
	ReachTimeoutEnv       = "FLEETBENCH_REACH_TIMEOUT"
	ExitTargetUnreachable = 90
)

// ReadyPath answers a GET on the live port with 200 once the runner reached its target
// (ReachEnv) and 503 until then: with k6's own /v1/status, the runner's readiness, for the
// kubelet's probe and the operator's start.
const ReadyPath = "/v1/fleetbench/ready"

// FinalPath answers a GET, held open until the runner's output stops, with the final envelope
// (the one the log ends with): the operator learns a runner's end and its results the moment
// k6 has them, instead of after the container's exit reaches pod status.
const FinalPath = "/v1/fleetbench/final"

// AbortThreshold is a threshold whose failure ends the whole test, as k6's abortOnFail does.
type AbortThreshold struct {
	Metric     string `json:"metric"`
	Expression string `json:"expr"`
	// DelayNanos is k6's delayAbortEval: the threshold is not judged before the test ran this long.
	DelayNanos int64 `json:"delay,omitempty"`
}
