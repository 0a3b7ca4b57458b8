package measure

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// RelativeAccuracy is the guaranteed relative error of every value a
// Histogram returns for a rank: a value v is reported as some v' with
// |v'-v| <= RelativeAccuracy*|v|. Quantiles interpolate between two such
// values, so they carry the same bound. 0.5 % leaves room under the 1 %
// the project promises.
const RelativeAccuracy = 0.005

// Values closer to zero than minIndexable are counted as zero and values
// beyond maxIndexable are clamped to the last bucket. The range covers
// nanoseconds to ~30 years in milliseconds, which keeps a dense bucket
// array bounded (~6,200 slots) whatever the input is.
const (
	minIndexable = 1e-9
	maxIndexable = 1e18
)

var (
	gamma    = (1 + RelativeAccuracy) / (1 - RelativeAccuracy)
	logGamma = math.Log(gamma)
	minIndex = bucketIndex(minIndexable)
	maxIndex = bucketIndex(maxIndexable)
)

// bucketIndex maps v > 0 to i with gamma^(i-1) < v <= gamma^i.
func bucketIndex(v float64) int {
	return int(math.Ceil(math.Log(v) / logGamma))
}

// bucketValue is the point of bucket i whose relative distance to both bucket
// edges equals RelativeAccuracy.
func bucketValue(i int) float64 {
	return math.Exp(float64(i)*logGamma) * 2 / (gamma + 1)
}

// Histogram is a mergeable, log-bucketed distribution of float64 values (the
// DDSketch idea with a fixed, unbounded-free index range). Merging two
// histograms adds their bucket counts, so splitting a stream and merging the
// parts gives exactly the histogram of the whole stream.
type Histogram struct {
	pos, neg buckets // neg holds |v| for v < 0
	zero     uint64
}

// buckets holds the counts of a range of bucket indexes in one of two forms, whichever takes
// less memory for the data (both give the same results; only non-zero counts matter):
//
//   - dense (packed == nil): counts[k] is the count of index offset+k; what Add grows, O(1)
//     per value, 8 bytes per index of the span between the lowest and the highest bucket;
//   - packed (packed != nil): the non-zero buckets in ascending order as uvarint pairs (index
//     delta, count), the first delta counted from minIndex: two to four bytes per non-zero
//     bucket, whatever the span; read in order only.
//
// A histogram decoded or merged takes the smaller form, so its memory follows its data, not
// the distance between its extreme values (one value near zero and one near 1e18 made a dense
// array of ~6,200 slots); Add unpacks a packed histogram first. The index range is bounded by
// minIndex..maxIndex, so memory is in either form too.
type buckets struct {
	offset int
	counts []uint64
	packed []byte
}

// denseSlotBytes is the memory of one index of the dense form.
const denseSlotBytes = 8

// uvarintLen is the length of v as a uvarint.
func uvarintLen(v uint64) int64 {
	n := int64(1)
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// bucketIter reads buckets' non-zero counts in ascending index order.
type bucketIter struct {
	b    *buckets
	k    int    // the next slot (dense) or byte (packed)
	i    int    // the current index
	c    uint64 // its count
	done bool
}

func (b *buckets) iter() bucketIter {
	it := bucketIter{b: b, i: minIndex}
	it.next()
	return it
}

func (it *bucketIter) next() {
	b := it.b
	if b.packed != nil {
		if it.k >= len(b.packed) {
			it.done = true
			return
		}
		d, n := binary.Uvarint(b.packed[it.k:])
		c, m := binary.Uvarint(b.packed[it.k+n:])
		it.k += n + m
		it.i += int(d)
		it.c = c
		return
	}
	for it.k < len(b.counts) && b.counts[it.k] == 0 {
		it.k++
	}
	if it.k == len(b.counts) {
		it.done = true
		return
	}
	it.i, it.c = b.offset+it.k, b.counts[it.k]
	it.k++
}

// packer builds buckets from non-zero counts in ascending index order, in the form its
// sizing pass (put with out unset) found smaller.
type packer struct {
	nnz, packedLen int64
	lo, hi, prev   int
	building       bool
	out            buckets
}

func (p *packer) put(i int, c uint64) {
	from := p.prev
	if p.nnz == 0 {
		p.lo, from = i, minIndex
	}
	p.hi, p.prev = i, i
	p.nnz++
	if !p.building {
		p.packedLen += uvarintLen(uint64(i-from)) + uvarintLen(c)
		return
	}
	if p.out.packed != nil {
		p.out.packed = binary.AppendUvarint(p.out.packed, uint64(i-from))
		p.out.packed = binary.AppendUvarint(p.out.packed, c)
	} else {
		p.out.counts[i-p.out.offset] = c
	}
}

// start allocates the smaller form for what the sizing pass saw in p.out and readies the
// building pass.
func (p *packer) start() {
	var out buckets
	if p.nnz > 0 {
		if span := int64(p.hi-p.lo) + 1; span*denseSlotBytes <= p.packedLen {
			out.offset, out.counts = p.lo, make([]uint64, span)
		} else {
			out.packed = make([]byte, 0, p.packedLen)
		}
	}
	*p = packer{building: true, out: out}
}

func (b *buckets) add(i int, n uint64) {
	if b.packed != nil {
		b.unpack()
	}
	if len(b.counts) == 0 {
		b.offset = i
		b.counts = append(b.counts, n)
		return
	}
	if i < b.offset {
		grown := make([]uint64, len(b.counts)+b.offset-i)
		copy(grown[b.offset-i:], b.counts)
		b.counts, b.offset = grown, i
	} else if i >= b.offset+len(b.counts) {
		b.counts = append(b.counts, make([]uint64, i-b.offset-len(b.counts)+1)...)
	}
	b.counts[i-b.offset] += n
}

// unpack turns packed buckets into the dense form.
func (b *buckets) unpack() {
	var lo, hi int
	first := true
	for it := b.iter(); !it.done; it.next() {
		if first {
			lo, first = it.i, false
		}
		hi = it.i
	}
	out := buckets{}
	if !first {
		out = buckets{offset: lo, counts: make([]uint64, hi-lo+1)}
		for it := b.iter(); !it.done; it.next() {
			out.counts[it.i-lo] = it.c
		}
	}
	*b = out
}

// merge adds o's counts to b's. Within b's dense span it adds in place; otherwise b is
// rebuilt, once, in the smaller form of the union.
func (b *buckets) merge(o *buckets) {
	it := o.iter()
	if it.done {
		return
	}
	if b.packed == nil && len(b.counts) > 0 && it.i >= b.offset {
		hi := it.i
		if o.packed == nil {
			hi = o.offset + len(o.counts) - 1 // zeros included: it only makes this path rarer
		} else {
			for j := it; !j.done; j.next() {
				hi = j.i
			}
		}
		if hi < b.offset+len(b.counts) {
			for ; !it.done; it.next() {
				b.counts[it.i-b.offset] += it.c
			}
			return
		}
	}
	var p packer
	union(b, o, p.put)
	p.start()
	union(b, o, p.put)
	*b = p.out
}

// union calls f with each index whose count in a or b is not zero, ascending, and the sum of
// its counts.
func union(a, b *buckets, f func(i int, c uint64)) {
	x, y := a.iter(), b.iter()
	for !x.done || !y.done {
		switch {
		case y.done || !x.done && x.i < y.i:
			f(x.i, x.c)
			x.next()
		case x.done || y.i < x.i:
			f(y.i, y.c)
			y.next()
		default:
			f(x.i, x.c+y.c)
			x.next()
			y.next()
		}
	}
}

func (b *buckets) total() uint64 {
	var n uint64
	for it := b.iter(); !it.done; it.next() {
		n += it.c
	}
	return n
}

// Add records one value.
func (h *Histogram) Add(v float64) {
	h.AddN(v, 1)
}

// AddN records n occurrences of v. NaN is ignored: it has no rank.
func (h *Histogram) AddN(v float64, n uint64) {
	switch {
	case math.IsNaN(v) || n == 0:
	case v >= minIndexable:
		h.pos.add(clampIndex(v), n)
	case v <= -minIndexable:
		h.neg.add(clampIndex(-v), n)
	default:
		h.zero += n
	}
}

func clampIndex(v float64) int {
	if v >= maxIndexable {
		return maxIndex
	}
	return max(bucketIndex(v), minIndex)
}

// Merge adds all counts of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.zero += o.zero
	h.pos.merge(&o.pos)
	h.neg.merge(&o.neg)
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 {
	if h == nil {
		return 0
	}
	return h.zero + h.pos.total() + h.neg.total()
}

// ValueAtRank returns the (approximate) value of the element with 0-based
// rank r in ascending order. r must be below Count.
func (h *Histogram) ValueAtRank(r uint64) float64 {
	// Negative values ascend as their indexes descend: rank r among them is rank neg-1-r in
	// ascending index order.
	if neg := h.neg.total(); r < neg {
		r = neg - 1 - r
		for it := h.neg.iter(); !it.done; it.next() {
			if r < it.c {
				return -bucketValue(it.i)
			}
			r -= it.c
		}
	} else {
		r -= neg
	}
	if r < h.zero {
		return 0
	}
	r -= h.zero
	for it := h.pos.iter(); !it.done; it.next() {
		if r < it.c {
			return bucketValue(it.i)
		}
		r -= it.c
	}
	return math.NaN() // rank out of range
}

// CountBelowAbove returns how many values lie below and above x, judging
// each bucket by its representative value. Only values within
// RelativeAccuracy of x can be misclassified.
func (h *Histogram) CountBelowAbove(x float64) (below, above uint64) {
	classify := func(v float64, n uint64) {
		if v < x {
			below += n
		} else if v > x {
			above += n
		}
	}
	for it := h.neg.iter(); !it.done; it.next() {
		classify(-bucketValue(it.i), it.c)
	}
	classify(0, h.zero)
	for it := h.pos.iter(); !it.done; it.next() {
		classify(bucketValue(it.i), it.c)
	}
	return below, above
}

// histogramJSON is the wire form: sparse buckets as flattened
// [indexDelta, count, indexDelta, count, ...] pairs, where the first delta
// is the absolute index. It compresses well and cannot describe a bucket
// outside the allowed index range without being rejected.
type histogramJSON struct {
	Zero uint64  `json:"z,omitempty"`
	Pos  []int64 `json:"p,omitempty"`
	Neg  []int64 `json:"n,omitempty"`
}

func (b *buckets) wire() []int64 {
	var out []int64
	prev := 0
	first := true
	for it := b.iter(); !it.done; it.next() {
		idx, c := it.i, it.c
		if first {
			out = append(out, int64(idx))
			first = false
		} else {
			out = append(out, int64(idx-prev))
		}
		out = append(out, int64(c))
		prev = idx
	}
	return out
}

// fromWire decodes s, the wire form, into b, in the smaller of the two forms; every pair is
// checked before anything is allocated.
func (b *buckets) fromWire(name string, s []int64) error {
	if len(s)%2 != 0 {
		return fmt.Errorf("histogram %s buckets: odd length %d, want index/count pairs", name, len(s))
	}
	idx := int64(0)
	for k := 0; k < len(s); k += 2 {
		if k == 0 {
			idx = s[0]
		} else {
			if s[k] <= 0 {
				return fmt.Errorf("histogram %s buckets: index delta %d at pair %d is not positive", name, s[k], k/2)
			}
			idx += s[k]
		}
		if idx < int64(minIndex) || idx > int64(maxIndex) {
			return fmt.Errorf("histogram %s buckets: index %d outside [%d, %d]", name, idx, minIndex, maxIndex)
		}
		if s[k+1] <= 0 {
			return fmt.Errorf("histogram %s buckets: count %d at index %d is not positive", name, s[k+1], idx)
		}
	}
	// Twice: to size the smaller form, then to fill it.
	var p packer
	each := func() {
		for k := 0; k < len(s); k += 2 {
			if k == 0 {
				idx = s[0]
			} else {
				idx += s[k]
			}
			p.put(int(idx), uint64(s[k+1]))
		}
	}
	each()
	p.start()
	each()
	*b = p.out
	return nil
}

// MarshalJSON implements json.Marshaler.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	return json.Marshal(histogramJSON{Zero: h.zero, Pos: h.pos.wire(), Neg: h.neg.wire()})
}

// UnmarshalJSON implements json.Unmarshaler and rejects malformed buckets.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var w histogramJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*h = Histogram{zero: w.Zero}
	if err := h.pos.fromWire("positive", w.Pos); err != nil {
		return err
	}
	return h.neg.fromWire("negative", w.Neg)
}
