package measure

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

// Sizes the scan charges for what json.Unmarshal allocates; slices as encoding/json grows them
// (sliceBytes).
const (
	// histogramCost: a Histogram, rounded up to its size class.
	histogramCost = (int64(unsafe.Sizeof(Histogram{})) + 15) &^ 15
	// mapCost: a map's header and its first group of 8 slots, charged per map.
	mapCost = 320
	// entryCost: one map entry's slot in a table at its lowest load, besides its strings;
	// entryGrowth: the tables the map outgrew while decoding, per entry.
	entryCost, entryGrowth = 80, 80
	stringCost             = 16 // a string's header, besides its bytes
	elementCost            = 16 // any other array element (a number, a string header)
	// decoderCost: what a Histogram's UnmarshalJSON allocates besides its buckets (a
	// json.Unmarshal of its own: the decode state, the wire struct); garbage once it returns.
	decoderCost = 384
)

// Element sizes of the slices an envelope decodes into, by the key they are under (matched as
// encoding/json matches keys); under any other key an array of objects decodes into nothing,
// but is charged as the largest.
var (
	elemSizes = map[string]int64{
		"metrics":     int64(unsafe.Sizeof(Metric{})),
		"series":      int64(unsafe.Sizeof(Series{})),
		"windows":     max(int64(unsafe.Sizeof(Window{})), int64(unsafe.Sizeof(CPUWindow{}))),
		"abortonfail": int64(unsafe.Sizeof(AbortThreshold{})),
		"overflows":   int64(unsafe.Sizeof(Overflow{})),
		"slowest":     int64(unsafe.Sizeof(SlowRequest{})),
		"slowestrun":  int64(unsafe.Sizeof(SlowRequest{})),
	}
	largestElem = func() int64 {
		n := int64(0)
		for _, v := range elemSizes {
			n = max(n, v)
		}
		return n
	}()
)

// elemSize is the element size of an array of objects under key k.
func elemSize(k string) int64 {
	for name, n := range elemSizes {
		if strings.EqualFold(k, name) {
			return n
		}
	}
	return largestElem
}

// sliceBytes is what a slice of n elements of size sz that encoding/json grows one element at
// a time (reflect.Value.Grow(1): append's growth) takes at the end (held) and left behind on
// the way (garbage), as the runtime rounds each allocation up to its size class; noscan says
// the elements hold no pointers.
func sliceBytes(n, sz int64, noscan bool) (held, garbage int64) {
	for c := int64(0); c < n; {
		// runtime.nextslicecap for one element more than c.
		next := 2 * c
		if c+1 > next {
			next = c + 1
		} else if c >= 256 {
			for next = c; next < c+1; {
				next += (next + 3*256) >> 2
			}
		}
		size, taken := allocSize(next*sz, noscan)
		garbage += held
		c, held = size/sz, taken
	}
	return held, garbage
}

// sizeClasses are the runtime's small allocation sizes (internal/runtime/gc.SizeClassToSize).
var sizeClasses = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288,
	320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688,
	3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336,
	16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocSize is runtime.roundupsize: what an allocation of size bytes may use, and what it takes
// with its malloc header.
func allocSize(size int64, noscan bool) (usable, taken int64) {
	const header, headerFrom, page = 8, 512, 8192
	if size <= 32768-header {
		req := size
		if !noscan && size > headerFrom {
			req += header
		}
		for _, c := range sizeClasses {
			if c >= req {
				return c - (req - size), c
			}
		}
	}
	n := (size + page - 1) &^ (page - 1)
	return n, n
}

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
	s.held = int64(unsafe.Sizeof(Envelope{}))
	c, err := s.next()
	if err != nil {
		return 0, 0, errSyntax
	}
	if err := s.value(c, false, 1); err != nil {
		return s.cost + s.cost/16, s.held, err
	}
	if _, err := s.next(); !errors.Is(err, io.EOF) {
		return s.cost + s.cost/16, s.held, errors.New("envelope json: text after the envelope")
	}
	return s.cost + s.cost/16, s.held, nil
}

type costScanner struct {
	r     *bufio.Reader
	lim   Limits
	cost  int64  // all the decode allocates
	held  int64  // what the decoded envelope holds
	key   []byte // the last key read, unescaped, up to maxKey bytes
	plain bool   // the last string read is ASCII text without escapes
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
	if s.cost+s.cost/16 > s.lim.MaxCost { // a sixteenth more for what the model misses
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
		return s.array(depth, largestElem)
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
			if errors.Is(err, io.EOF) {
				return nil // the text ends with the literal; a misspelt one is the decoder's to refuse
			}
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
	s.key, s.plain = s.key[:0], true
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return n, errSyntax
		}
		if c == '"' {
			return n, nil
		}
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			s.plain = false
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
		if b != '-' && b != '+' && b != '.' && b != 'e' && b != 'E' && (b < '0' || b > '9') {
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
		if inMap {
			if err = s.charge(entryCost + stringCost + n); err == nil {
				err = s.garbage(entryGrowth)
			}
		} else {
			// A field's name is not kept; encoding/json copies it only to unescape it.
			if !s.plain {
				err = s.garbage(stringCost + n)
			}
		}
		if err != nil {
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
		switch {
		case c == '{' && strings.EqualFold(k, "h"):
			// A histogram: allocated, and decoded by a decoder of its own.
			if err := s.charge(histogramCost); err != nil {
				return err
			}
			if err := s.garbage(decoderCost); err != nil {
				return err
			}
			err = s.value(c, false, depth+1)
		case c == '[' && depth+1 <= s.lim.MaxDepth:
			err = s.array(depth+1, elemSize(k))
		default:
			err = s.value(c, childMap, depth+1)
		}
		if err != nil {
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

// array scans an array whose objects, if any, decode into elements of size elem. Its integers
// are charged as histogram buckets: [index, count, delta, count, …] decodes into the smaller of
// a dense array over the span of the indexes and the packed pairs (see buckets), the []int64
// of the wire form being garbage.
func (s *costScanner) array(depth int, elem int64) error {
	var idx, lo, hi, packed int64
	var n, ints, charged, size int64 // elements, of them integers, held charged so far, element size
	c, err := s.next()
	if err != nil {
		return errSyntax
	}
	if c == ']' {
		return nil
	}
	for {
		n++
		switch {
		case c == '{':
			size = max(size, elem)
			charged += elem
			if err := s.charge(elem); err != nil {
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
				ints++
				size = max(size, 8)
				err = s.garbage(8)
			} else {
				size = max(size, elementCost)
				charged += elementCost
				err = s.charge(elementCost)
			}
			if err != nil {
				return err
			}
		default:
			size = max(size, elementCost)
			charged += elementCost
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
			held, garbage := sliceBytes(n, size, ints == n)
			if ints == n {
				// The wire form of a histogram's buckets, dropped once they are built; the
				// smaller of the two forms, and what rounding to an allocation size adds.
				if err := s.garbage(held + garbage - 8*n); err != nil {
					return err
				}
				_, taken := allocSize(min((hi-lo+1)*denseSlotBytes, packed), true)
				return s.charge(taken)
			}
			if err := s.charge(max(held-charged, 0)); err != nil {
				return err
			}
			return s.garbage(garbage)
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
		h := a.Hist
		if h == nil {
			return 0
		}
		return histogramCost + 8*int64(cap(h.pos.counts)+cap(h.neg.counts)) + int64(cap(h.pos.packed)+cap(h.neg.packed))
	}
	n += int64(cap(e.Metrics)) * int64(unsafe.Sizeof(Metric{}))
	for i := range e.Metrics {
		m := &e.Metrics[i]
		n += 2*stringCost + int64(len(m.Name)+len(m.Type)+len(m.Contains)) + int64(cap(m.Series))*int64(unsafe.Sizeof(Series{}))
		for j := range m.Series {
			s := &m.Series[j]
			n += agg(&s.Total) + int64(cap(s.Windows))*int64(unsafe.Sizeof(Window{}))
			if s.Tags != nil {
				n += mapCost
			}
			for k, v := range s.Tags {
				n += entryCost + 2*stringCost + int64(len(k)+len(v))
			}
			for k := range s.Windows {
				n += agg(&s.Windows[k].Agg)
			}
		}
	}
	n += int64(cap(e.CPU.Windows)) * int64(unsafe.Sizeof(CPUWindow{}))
	n += int64(cap(e.AbortOnFail)) * int64(unsafe.Sizeof(AbortThreshold{}))
	for _, a := range e.AbortOnFail {
		n += 2*stringCost + int64(len(a.Metric)+len(a.Expression))
	}
	n += int64(cap(e.Overflows)) * int64(unsafe.Sizeof(Overflow{}))
	for _, o := range e.Overflows {
		n += 2*stringCost + int64(len(o.Metric)+len(o.Tag))
	}
	if e.Thresholds != nil {
		n += mapCost
	}
	for k, v := range e.Thresholds {
		n += entryCost + stringCost + int64(len(k)) + int64(cap(v))*stringCost
		for _, x := range v {
			n += stringCost + int64(len(x))
		}
	}
	for _, list := range [][]SlowRequest{e.Slowest, e.SlowestRun} {
		n += int64(cap(list)) * int64(unsafe.Sizeof(SlowRequest{}))
		for i := range list {
			r := &list[i]
			n += 7*stringCost + int64(len(r.Name)+len(r.URL)+len(r.Method)+len(r.Status)+len(r.Scenario)+len(r.TraceID)+len(r.Runner))
		}
	}
	n += int64(cap(e.Tags)) * stringCost
	for _, t := range e.Tags {
		n += stringCost + int64(len(t))
	}
	return n
}
