package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// An envelope is written by whoever controls a runner pod: its decoded size in memory must not
// follow from its compressed size. A 66 KiB envelope of windows whose histograms name the
// lowest and the highest bucket decoded into 1.1 GiB (each histogram is a dense array over the
// span of its buckets). So an envelope's JSON is first scanned, in constant memory, for what
// decoding it would allocate; one over Limits is rejected before it is decoded, and decodes
// share a process-wide memory budget (DecodeMemory), so concurrent ones cannot add up.

// ErrRejected marks an envelope refused for its size or shape (errors.Is): a runner that
// sends one is hostile or misconfigured, not merely unreadable.
var ErrRejected = errors.New("result envelope rejected")

// Limits bound what decoding one envelope may take.
type Limits struct {
	// MaxBytes bounds the envelope's JSON after gunzip.
	MaxBytes int
	// MaxCost bounds the estimated memory of the decoded envelope, in bytes.
	MaxCost int64
	// MaxString bounds one string (a metric name, a tag value, an error).
	MaxString int
	// MaxDepth bounds JSON nesting; an envelope's own structure is 9 deep.
	MaxDepth int
}

// DefaultLimits fit the largest envelopes runners write with the default collector settings
// (200 series per metric, 60 windows; see budget_test.go for the measured sizes) with room.
var DefaultLimits = Limits{MaxBytes: 16 << 20, MaxCost: 48 << 20, MaxString: 16 << 10, MaxDepth: 12}

// MaxWireBytes bounds an encoded envelope as a runner serves it or a log holds it (gzip and
// base64 of at most DefaultLimits.MaxBytes of JSON compress well below it).
const MaxWireBytes = 8 << 20

// DecodeMemory is the process-wide budget of every envelope decode in flight: the JSON and the
// decoded envelope of each. A decode waits for its share, so N concurrent decodes take at most
// this much together.
var DecodeMemory = NewBudget(DecodeMemoryBytes)

// DecodeMemoryBytes is DecodeMemory's size: one decode at DefaultLimits fits whole.
const DecodeMemoryBytes = 64 << 20

// Budget is a weighted semaphore of bytes. Acquisitions are first come, first served; one
// larger than the budget is cut to its size.
type Budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget is a Budget of size bytes.
func NewBudget(size int64) *Budget { return &Budget{size: size} }

// Acquire takes n bytes of the budget, waiting until they are free or ctx ends; release gives
// them back and must be called once.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	n = min(max(n, 1), b.size)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return b.releaser(n), nil
	}
	w := budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return b.releaser(n), nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.used -= n
			b.grant()
		default:
			for i := range b.waiters {
				if b.waiters[i].ready == w.ready {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grant() // the head may have been this waiter
		}
		return nil, ctx.Err()
	}
}

func (b *Budget) releaser(n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.used -= n
			b.grant()
		})
	}
}

// grant wakes the waiters at the head that now fit; b.mu is held.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// Used is the part of the budget held now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Sizes the scan charges for what json.Unmarshal allocates; slices are charged twice their
// length (append's growth while decoding).
const (
	metricCost    = int64(unsafe.Sizeof(Metric{})) * 2
	seriesCost    = int64(unsafe.Sizeof(Series{})) * 2
	windowCost    = int64(unsafe.Sizeof(Window{})) * 2
	histogramCost = int64(unsafe.Sizeof(Histogram{}))
	mapCost       = 64 // a map's header, charged per map
	entryCost     = 64 // one map entry, besides its strings
	stringCost    = 16 // a string's header, besides its bytes
	elementCost   = 16 // any other array element (a number, a string header)
)

// rejectf is an ErrRejected error saying what was over which limit.
func rejectf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, args...))
}

// scanCost walks the JSON in r without building it and returns what decoding it into an
// Envelope would allocate, or an ErrRejected error as soon as that passes lim.MaxCost.
func scanCost(r io.Reader, lim Limits) (int64, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	s := &costScanner{dec: dec, lim: lim}
	if err := s.value("", "", 1); err != nil {
		return s.cost, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return s.cost, errors.New("envelope json: text after the envelope")
	}
	return s.cost, nil
}

type costScanner struct {
	dec  *json.Decoder
	lim  Limits
	cost int64
}

func (s *costScanner) charge(n int64) error {
	s.cost += n
	if s.cost > s.lim.MaxCost {
		return rejectf("decoding it would take more than %d MiB of memory (the operator's limit per envelope); "+
			"fewer metrics, series (tags) or windows per runner fit", s.lim.MaxCost>>20)
	}
	return nil
}

// value scans one JSON value held under key, in an object held under parent (keys compare as
// encoding/json matches fields: without regard to case).
func (s *costScanner) value(parent, key string, depth int) error {
	if depth > s.lim.MaxDepth {
		return rejectf("nested deeper than %d", s.lim.MaxDepth)
	}
	tok, err := s.dec.Token()
	if err != nil {
		return fmt.Errorf("envelope json: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return s.object(key, depth)
		}
		if strings.EqualFold(parent, "h") && (strings.EqualFold(key, "p") || strings.EqualFold(key, "n")) {
			return s.buckets()
		}
		return s.array(key, depth)
	case string:
		return s.str(t)
	case json.Number:
		if len(t) > 64 {
			return rejectf("a number of %d digits", len(t))
		}
	}
	return nil
}

func (s *costScanner) str(v string) error {
	if len(v) > s.lim.MaxString {
		return rejectf("a string of %d bytes (at most %d)", len(v), s.lim.MaxString)
	}
	return s.charge(stringCost + int64(len(v)))
}

func (s *costScanner) object(key string, depth int) error {
	var err error
	switch {
	case strings.EqualFold(key, "h"):
		err = s.charge(histogramCost)
	case strings.EqualFold(key, "tags") || strings.EqualFold(key, "thresholds"):
		err = s.charge(mapCost)
	}
	if err != nil {
		return err
	}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return fmt.Errorf("envelope json: %w", err)
		}
		k, _ := tok.(string)
		if err := s.str(k); err != nil {
			return err
		}
		if err := s.charge(entryCost); err != nil {
			return err
		}
		if err := s.value(key, k, depth+1); err != nil {
			return err
		}
	}
	_, err = s.dec.Token() // '}'
	return err
}

func (s *costScanner) array(key string, depth int) error {
	per := int64(elementCost)
	switch {
	case strings.EqualFold(key, "metrics"):
		per = metricCost
	case strings.EqualFold(key, "series"):
		per = seriesCost
	case strings.EqualFold(key, "windows"):
		per = windowCost
	}
	for s.dec.More() {
		if err := s.charge(per); err != nil {
			return err
		}
		if err := s.value(key, "", depth+1); err != nil {
			return err
		}
	}
	_, err := s.dec.Token() // ']'
	return err
}

// buckets scans a histogram's [index, count, delta, count, …] pairs: decoding allocates a dense
// array over the span from the lowest to the highest index, whatever the pairs' number.
func (s *costScanner) buckets() error {
	var idx, lo, hi int64
	n := 0
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return fmt.Errorf("envelope json: %w", err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return errors.New("envelope json: a histogram bucket is not a number")
		}
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return fmt.Errorf("envelope json: histogram bucket %q: %w", num, err)
		}
		if n%2 == 0 {
			// Out-of-range indexes are refused by the decode; bound the span as it would.
			if n == 0 {
				idx = v
			} else {
				idx += v
			}
			idx = min(max(idx, int64(minIndex)), int64(maxIndex))
			if n == 0 || idx < lo {
				lo = idx
			}
			if n == 0 || idx > hi {
				hi = idx
			}
		}
		n++
		// The wire form's slice as it grows, and the dense counts.
		if err := s.charge(2 * 8); err != nil {
			return err
		}
	}
	if n > 0 {
		if err := s.charge((hi - lo + 1) * 8); err != nil {
			return err
		}
	}
	_, err := s.dec.Token() // ']'
	return err
}
