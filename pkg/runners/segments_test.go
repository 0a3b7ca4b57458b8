package runners

import "testing"

func TestSegments(t *testing.T) {
	cases := []struct {
		n        int
		segments []string
		sequence string
	}{
		{1, []string{"0:1"}, "0,1"},
		{2, []string{"0:1/2", "1/2:1"}, "0,1/2,1"},
		{4, []string{"0:1/4", "1/4:2/4", "2/4:3/4", "3/4:1"}, "0,1/4,2/4,3/4,1"},
	}
	for _, tc := range cases {
		got := Segments(tc.n)
		if len(got) != tc.n {
			t.Fatalf("n=%d: %d segments", tc.n, len(got))
		}
		for i, s := range got {
			if s.Segment != tc.segments[i] || s.Sequence != tc.sequence {
				t.Errorf("n=%d segment %d = %+v, want %s with sequence %s", tc.n, i, s, tc.segments[i], tc.sequence)
			}
		}
	}
}

func TestDeviceRangesAreDisjointAndCoverAll(t *testing.T) {
	for _, tc := range []struct {
		devices int64
		n       int
	}{{1000, 2}, {1000, 3}, {7, 7}, {3, 5}, {65000, 8}, {1, 1}} {
		ranges := DeviceRanges(tc.devices, tc.n)
		var total int64
		next := int64(0)
		minCount, maxCount := tc.devices, int64(0)
		for _, r := range ranges {
			if r.Count() > 0 && r.First != next {
				t.Fatalf("%d devices / %d: range %+v does not start at %d", tc.devices, tc.n, r, next)
			}
			next = r.Last + 1
			total += r.Count()
			minCount, maxCount = min(minCount, r.Count()), max(maxCount, r.Count())
		}
		if total != tc.devices || next != tc.devices {
			t.Errorf("%d devices / %d runners: ranges cover %d ending at %d", tc.devices, tc.n, total, next)
		}
		if maxCount-minCount > 1 {
			t.Errorf("%d devices / %d runners: uneven split %d..%d", tc.devices, tc.n, minCount, maxCount)
		}
	}
}
