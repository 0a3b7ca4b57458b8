package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Sizes the scan charges for what json.Unmarshal allocates; slices are charged twice their
// length (append's growth while decoding).
const (
	// objectCost: the largest struct an array holds (Metric, Series, Window, CPUWindow, …).
	objectCost    = max(int64(unsafe.Sizeof(Metric{})), int64(unsafe.Sizeof(Series{})), int64(unsafe.Sizeof(Window{}))) * 2
	histogramCost = int64(unsafe.Sizeof(Histogram{}))
	mapCost       = 64 // a map's header, charged per map
	entryCost     = 64 // one map entry, besides its strings
	stringCost    = 16 // a string's header, besides its bytes
	elementCost   = 16 // any other array element (a number, a string header)
	// decoderCost: what a Histogram's UnmarshalJSON allocates besides its buckets (a
	// json.Unmarshal of its own: the decode state, the wire struct); garbage once it returns.
	decoderCost = 320
)

// rejectf is an ErrRejected error saying what was over which limit.
func rejectf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, args...))
}

// sizeText says n bytes in MiB, or KiB below one MiB.
func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// errSyntax: the JSON is malformed; the decode would say how, so the scan does not.
var errSyntax = errors.New("envelope json: malformed")

// scanCost walks the JSON in r byte by byte, in constant memory (no token is built), and
// returns what decoding it into an Envelope would allocate (cost, garbage included) and what
// the decoded envelope holds once the garbage is gone (held, at least what SizeOf says of it),
// or an ErrRejected error as soon as cost passes lim.MaxCost or held lim.MaxHeld. It charges by
// structure, not by field names a sender may disguise: every object in an array as the largest
// element struct (held, and the garbage of the slice's growth), every object under a key as a
// histogram and its own decoder, every array of integers as the histogram buckets it may be
// (held: the smaller of a dense array over the span of its indexes and its pairs packed;
// garbage: the []int64 of the wire form), every string and key its bytes; objects under a key
// that decodes into a map (tags, thresholds, matched as encoding/json matches: unescaped,
// without regard to case) also their entries.
func scanCost(r io.Reader, lim Limits) (cost, held int64, err error) {
	s := &costScanner{r: bufio.NewReaderSize(r, 16<<10), lim: lim}
	if s.lim.MaxHeld <= 0 {
		s.lim.MaxHeld = s.lim.MaxCost
	}
	c, err := s.next()
	if err != nil {
		return 0, 0, errSyntax
	}
	if err := s.value(c, false, 1); err != nil {
		return s.cost, s.held, err
	}
	if _, err := s.next(); err != io.EOF {
		return s.cost, s.held, errors.New("envelope json: text after the envelope")
	}
	return s.cost, s.held, nil
}

type costScanner struct {
	r    *bufio.Reader
	lim  Limits
	cost int64  // all the decode allocates
	held int64  // what the decoded envelope holds
	key  []byte // the last key read, unescaped, up to maxKey bytes
}

const maxKey = 32

// charge counts n bytes the decoded envelope holds.
func (s *costScanner) charge(n int64) error {
	s.held += n
	if s.held > s.lim.MaxHeld {
		return rejectf("holding it decoded would take more than %s of memory, the limit per envelope of a run "+
			"of this many runners (a run of more runners gets less per runner); fewer metrics, series (tags), "+
			"windows or histogram buckets per runner fit", sizeText(s.lim.MaxHeld))
	}
	return s.garbage(n)
}

// garbage counts n bytes the decode allocates and drops.
func (s *costScanner) garbage(n int64) error {
	s.cost += n
	if s.cost > s.lim.MaxCost {
		return rejectf("decoding it would take more than %s of memory, the limit of any envelope; fewer metrics, "+
			"series (tags), windows or histogram buckets per runner fit", sizeText(s.lim.MaxCost))
	}
	return nil
}

// next is the next byte that is not white space.
func (s *costScanner) next() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// value scans the value that begins with c; inMap says it is a map's (its object's entries
// are map entries).
func (s *costScanner) value(c byte, inMap bool, depth int) error {
	if depth > s.lim.MaxDepth {
		return rejectf("nested deeper than %d", s.lim.MaxDepth)
	}
	switch {
	case c == '{':
		return s.object(inMap, depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		n, err := s.str(false)
		if err != nil {
			return err
		}
		return s.charge(stringCost + n)
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := s.number(c)
		return err
	case c >= 'a' && c <= 'z': // true, false, null
		for i := 0; i < 5; i++ {
			b, err := s.r.ReadByte()
			if err != nil {
				return errSyntax
			}
			if b < 'a' || b > 'z' {
				return s.r.UnreadByte()
			}
		}
		return errSyntax
	}
	return errSyntax
}

// str reads a string's rest after its opening quote and returns its length as written (at
// least its decoded length); with key set it keeps its first maxKey bytes, unescaped, in s.key.
func (s *costScanner) str(key bool) (int64, error) {
	var n int64
	s.key = s.key[:0]
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return n, errSyntax
		}
		if c == '"' {
			return n, nil
		}
		if n++; n > int64(s.lim.MaxString) {
			return n, rejectf("a string longer than %d bytes", s.lim.MaxString)
		}
		if c != '\\' {
			if key && len(s.key) < maxKey {
				s.key = append(s.key, c)
			}
			continue
		}
		e, err := s.r.ReadByte()
		if err != nil {
			return n, errSyntax
		}
		n++
		var r rune
		switch e {
		case 'u':
			var hex [4]byte
			if _, err := io.ReadFull(s.r, hex[:]); err != nil {
				return n, errSyntax
			}
			n += 4
			v, err := strconv.ParseUint(string(hex[:]), 16, 32)
			if err != nil {
				return n, errSyntax
			}
			r = rune(v)
		case 'n':
			r = '\n'
		case 't':
			r = '\t'
		case 'r':
			r = '\r'
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		default:
			r = rune(e)
		}
		if key && len(s.key) < maxKey {
			s.key = utf8.AppendRune(s.key, r)
		}
	}
}

// number reads a number that begins with c; integer says it is one, its value in v.
func (s *costScanner) number(c byte) (v int64, integer bool, err error) {
	var digits [24]byte
	n, long := 0, false
	for {
		if n < len(digits) {
			digits[n] = c
		} else {
			long = true
		}
		n++
		if n > 64 {
			return 0, false, rejectf("a number of more than 64 characters")
		}
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				break
			}
			return 0, false, errSyntax
		}
		if !(b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E' || b >= '0' && b <= '9') {
			if err := s.r.UnreadByte(); err != nil {
				return 0, false, err
			}
			break
		}
		c = b
	}
	if long {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(string(digits[:n]), 10, 64)
	return v, perr == nil, nil
}

func (s *costScanner) object(inMap bool, depth int) error {
	if inMap {
		if err := s.charge(mapCost); err != nil {
			return err
		}
	}
	c, err := s.next()
	if err != nil {
		return errSyntax
	}
	if c == '}' {
		return nil
	}
	for {
		if c != '"' {
			return errSyntax
		}
		n, err := s.str(true)
		if err != nil {
			return err
		}
		per := stringCost + n
		if inMap {
			per += entryCost
		}
		if err := s.charge(per); err != nil {
			return err
		}
		k := string(s.key)
		childMap := strings.EqualFold(k, "tags") || strings.EqualFold(k, "thresholds")
		if c, err = s.next(); err != nil || c != ':' {
			return errSyntax
		}
		if c, err = s.next(); err != nil {
			return errSyntax
		}
		if c == '{' && !childMap {
			// A struct under a key may be a histogram: allocated, and decoded by a decoder of
			// its own.
			if err := s.charge(histogramCost); err != nil {
				return err
			}
			if err := s.garbage(decoderCost); err != nil {
				return err
			}
		}
		if err := s.value(c, childMap, depth+1); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return errSyntax
		}
		switch c {
		case '}':
			return nil
		case ',':
			if c, err = s.next(); err != nil {
				return errSyntax
			}
		default:
			return errSyntax
		}
	}
}

// array scans an array. Its integers are charged as histogram buckets: [index, count, delta,
// count, …] decodes into the smaller of a dense array over the span of the indexes and the
// packed pairs (see buckets).
func (s *costScanner) array(depth int) error {
	var idx, lo, hi, packed int64
	ints := 0
	c, err := s.next()
	if err != nil {
		return errSyntax
	}
	if c == ']' {
		return nil
	}
	for {
		switch {
		case c == '{':
			// The slice holds up to twice its length; its growth by half at a time left up to
			// as much again behind.
			if err := s.charge(objectCost); err != nil {
				return err
			}
			if err := s.garbage(objectCost); err != nil {
				return err
			}
			if err := s.value(c, false, depth+1); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			v, integer, err := s.number(c)
			if err != nil {
				return err
			}
			if integer && ints%2 == 0 {
				if ints == 0 {
					idx = v
					packed += uvarintLen(uint64(v - int64(minIndex)))
				} else {
					idx += v
					packed += uvarintLen(uint64(v))
				}
				// The decode refuses indexes out of range; it has allocated up to them.
				idx = min(max(idx, int64(minIndex)), int64(maxIndex))
				if ints == 0 || idx < lo {
					lo = idx
				}
				if ints == 0 || idx > hi {
					hi = idx
				}
			}
			if integer && ints%2 == 1 {
				packed += uvarintLen(uint64(v))
			}
			if integer {
				// The wire form of a histogram's buckets, dropped once they are built.
				ints++
				err = s.garbage(2 * elementCost)
			} else {
				err = s.charge(2 * elementCost)
			}
			if err != nil {
				return err
			}
		default:
			if err := s.charge(elementCost); err != nil {
				return err
			}
			if err := s.value(c, false, depth+1); err != nil {
				return err
			}
		}
		if c, err = s.next(); err != nil {
			return errSyntax
		}
		switch c {
		case ']':
			if ints > 0 {
				// The smaller of the two forms, and what rounding to an allocation size adds.
				return s.charge(min((hi-lo+1)*denseSlotBytes, packed) + 16)
			}
			return nil
		case ',':
			if c, err = s.next(); err != nil {
				return errSyntax
			}
		default:
			return errSyntax
		}
	}
}

// SizeOf estimates what a decoded envelope takes in memory, as the scan prices what it holds
// (at most that): what a caller that keeps envelopes charges to its own budget.
func SizeOf(e *Envelope) int64 {
	n := int64(unsafe.Sizeof(*e)) + int64(len(e.Runner)+len(e.K6Version)+len(e.Error))
	agg := func(a *Agg) int64 {
		if a.Hist == nil {
			return 0
		}
		h := a.Hist
		return histogramCost + 8*int64(cap(h.pos.counts)+cap(h.neg.counts)) + int64(cap(h.pos.packed)+cap(h.neg.packed))
	}
	for i := range e.Metrics {
		m := &e.Metrics[i]
		n += objectCost + int64(len(m.Name)+len(m.Contains))
		for j := range m.Series {
			s := &m.Series[j]
			n += objectCost + agg(&s.Total)
			if s.Tags != nil {
				n += mapCost
			}
			for k, v := range s.Tags {
				n += entryCost + 2*stringCost + int64(len(k)+len(v))
			}
			for k := range s.Windows {
				n += objectCost + agg(&s.Windows[k].Agg)
			}
		}
	}
	n += objectCost * int64(len(e.CPU.Windows)+len(e.AbortOnFail)+len(e.Overflows))
	for k, v := range e.Thresholds {
		n += entryCost + stringCost + int64(len(k))
		for _, x := range v {
			n += stringCost + int64(len(x))
		}
	}
	for _, t := range e.Tags {
		n += stringCost + int64(len(t))
	}
	return n
}
