package runners

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// maxLCD bounds the striping table; fleetbench's equal segments have an LCD of parallelism (≤ 1000).
const maxLCD = 1 << 20

// SplitInt splits value among the execution segments of sequence (e.g. "0,1/3,2/3,1") the way
// k6 scales a scenario's VUs when every runner gets the whole sequence: lib.ExecutionTuple's
// ScaleInt64, whose striping (NewExecutionSegmentSequenceWrapper) hands the elements of each
// LCD-sized block to the segments in turn, biggest segment first. The shares sum to value.
func SplitInt(value int64, sequence string) ([]int64, error) {
	bounds := strings.Split(sequence, ",")
	if len(bounds) < 2 {
		return nil, fmt.Errorf("execution segment sequence %q: want at least two boundaries", sequence)
	}
	rats := make([]*big.Rat, len(bounds))
	for i, b := range bounds {
		r, ok := new(big.Rat).SetString(strings.TrimSpace(b))
		if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 || (i > 0 && r.Cmp(rats[i-1]) <= 0) {
			return nil, fmt.Errorf("execution segment sequence %q: %q is not an increasing fraction in [0, 1]", sequence, b)
		}
		rats[i] = r
	}
	if rats[0].Sign() != 0 || rats[len(rats)-1].Cmp(big.NewRat(1, 1)) != 0 {
		return nil, fmt.Errorf("execution segment sequence %q: must run from 0 to 1", sequence)
	}
	n := len(rats) - 1
	if n == 1 {
		return []int64{value}, nil // no segmentation: k6 returns the value itself
	}
	lengths := make([]*big.Rat, n)
	lcd := int64(1)
	for i := range lengths {
		lengths[i] = new(big.Rat).Sub(rats[i+1], rats[i])
		d := lengths[i].Denom().Int64()
		lcd = lcd / gcd(lcd, d) * d
		if lcd > maxLCD {
			return nil, fmt.Errorf("execution segment sequence %q: denominators too large", sequence)
		}
	}
	offsets := stripes(lengths, lcd)
	out := make([]int64, n)
	for i := range out {
		out[i] = scaleStriped(offsets[i], lcd, value)
	}
	return out, nil
}

// stripes is k6's striping: for each segment, the first element of an LCD block it owns, then
// the distance to each next one (the last wraps into the next block).
func stripes(lengths []*big.Rat, lcd int64) [][]int64 {
	type norm struct {
		numerator int64
		index     int
	}
	sorted := make([]norm, len(lengths))
	offsets := make([][]int64, len(lengths))
	for i, l := range lengths {
		sorted[i] = norm{l.Num().Int64() * (lcd / l.Denom().Int64()), i}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].numerator > sorted[j].numerator })
	prev := make([]int64, len(lengths))
	chosen := make([]int64, len(lengths))
	for i := range lcd {
		for si := range chosen {
			num, denom := chosen[si]*lcd, sorted[si].numerator
			if i > num/denom || (i == num/denom && num%denom == 0) {
				chosen[si]++
				idx := sorted[si].index
				offsets[idx] = append(offsets[idx], i-prev[idx])
				prev[idx] = i
				if int64(len(offsets[idx])) == denom {
					offsets[idx] = append(offsets[idx], offsets[idx][0]+lcd-i)
				}
				break
			}
		}
	}
	return offsets
}

// scaleStriped is ExecutionSegmentSequenceWrapper.ScaleInt64 for one segment's offsets.
func scaleStriped(offsets []int64, lcd, value int64) int64 {
	if len(offsets) == 0 {
		return 0
	}
	start, steps := offsets[0], offsets[1:]
	result := (value / lcd) * int64(len(steps))
	for gi, i := 0, start; i < value%lcd; gi, i = gi+1, i+steps[gi] {
		result++
	}
	return result
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
