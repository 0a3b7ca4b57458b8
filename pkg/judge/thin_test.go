package judge

import (
	"slices"
	"testing"
)

// TestThinEvenly: every other point goes, never the first or the last, until at most limit
// stay; the caller's slice is left as it was.
func TestThinEvenly(t *testing.T) {
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	for _, tc := range []struct {
		n, limit int
		want     []int
	}{
		{0, 4, []int{}},
		{5, 5, []int{0, 1, 2, 3, 4}},
		{5, 4, []int{0, 2, 4}},
		{6, 4, []int{0, 2, 4, 5}},
		{10, 3, []int{0, 8, 9}},
		{5, 1, []int{0, 4}}, // below 2 it would never fit: the ends stay
		{5, 0, []int{0, 4}},
	} {
		in := seq(tc.n)
		got := thinEvenly(in, tc.limit)
		if !slices.Equal(got, tc.want) {
			t.Errorf("thinEvenly(%d points, %d) = %v, want %v", tc.n, tc.limit, got, tc.want)
		}
		if !slices.Equal(in, seq(tc.n)) {
			t.Errorf("thinEvenly(%d points, %d) changed its input: %v", tc.n, tc.limit, in)
		}
	}
}
