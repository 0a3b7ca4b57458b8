package results

import (
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

// buckets is a dense array of counts for indexes offset..offset+len-1; the
// index range is bounded by minIndex..maxIndex so memory is too.
type buckets struct {
	offset int
	counts []uint64
}

func (b *buckets) add(i int, n uint64) {
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

func (b *buckets) total() uint64 {
	var n uint64
	for _, c := range b.counts {
		n += c
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
	for i, c := range o.pos.counts {
		if c != 0 {
			h.pos.add(o.pos.offset+i, c)
		}
	}
	for i, c := range o.neg.counts {
		if c != 0 {
			h.neg.add(o.neg.offset+i, c)
		}
	}
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
	for i := len(h.neg.counts) - 1; i >= 0; i-- {
		if c := h.neg.counts[i]; r < c {
			return -bucketValue(h.neg.offset + i)
		} else {
			r -= c
		}
	}
	if r < h.zero {
		return 0
	}
	r -= h.zero
	for i, c := range h.pos.counts {
		if r < c {
			return bucketValue(h.pos.offset + i)
		}
		r -= c
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
	for i, n := range h.neg.counts {
		classify(-bucketValue(h.neg.offset+i), n)
	}
	classify(0, h.zero)
	for i, n := range h.pos.counts {
		classify(bucketValue(h.pos.offset+i), n)
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

func (b *buckets) sparse() []int64 {
	var out []int64
	prev := 0
	first := true
	for i, c := range b.counts {
		if c == 0 {
			continue
		}
		idx := b.offset + i
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

func (b *buckets) fromSparse(name string, s []int64) error {
	if len(s)%2 != 0 {
		return fmt.Errorf("histogram %s buckets: odd length %d, want index/count pairs", name, len(s))
	}
	if len(s) >= 2 {
		// Indexes ascend: the dense array is allocated once, over the span the pairs cover
		// (growing it bucket by bucket made three times its size in garbage).
		last := s[0]
		for k := 2; k < len(s); k += 2 {
			last += max(s[k], 0)
		}
		if s[0] >= int64(minIndex) && last <= int64(maxIndex) && last >= s[0] {
			b.offset, b.counts = int(s[0]), make([]uint64, 0, last-s[0]+1)
		}
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
		b.add(int(idx), uint64(s[k+1]))
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	return json.Marshal(histogramJSON{Zero: h.zero, Pos: h.pos.sparse(), Neg: h.neg.sparse()})
}

// UnmarshalJSON implements json.Unmarshaler and rejects malformed buckets.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var w histogramJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*h = Histogram{zero: w.Zero}
	if err := h.pos.fromSparse("positive", w.Pos); err != nil {
		return err
	}
	return h.neg.fromSparse("negative", w.Neg)
}
