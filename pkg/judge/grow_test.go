package judge

import "testing"

func TestSuggestedParallelism(t *testing.T) {
	cases := []struct {
		name          string
		n             int
		util          float64
		done, dropped uint64
		maxN, want    int
	}{
		{"CPU below the bound: no advice", 4, 0.85, 1000, 0, 1000, 0},
		{"iterations dropped without CPU bound: VUs, not runners", 4, 0.5, 1000, 500, 1000, 0},
		{"saturated, nothing dropped: CPU over the planned share", 4, 0.98, 1000, 0, 1000, 6}, // 4*0.98/0.7 = 5.6
		{"saturated and a third of the load dropped", 4, 1.0, 1000, 500, 1000, 9},             // 4*1.5/0.7 = 8.57
		{"one runner, just over the bound: at least one more", 1, 0.91, 100, 0, 1000, 2},      // 1.3 -> 2
		{"nothing done: CPU alone", 2, 1.0, 0, 100, 1000, 3},                                  // 2/0.7 = 2.86
		{"bounded by the maximum", 800, 1.0, 1000, 1000, 1000, 1000},
		{"separate: bounded by 100", 90, 1.0, 1000, 0, 100, 100},
		{"already at the maximum", 1000, 1.0, 1000, 0, 1000, 1000},
		{"no runners", 0, 1.0, 1000, 0, 1000, 0},
	}
	for _, c := range cases {
		if got := SuggestedParallelism(c.n, c.util, c.done, c.dropped, c.maxN); got != c.want {
			t.Errorf("%s: SuggestedParallelism(%d, %.2f, %d, %d, %d) = %d, want %d", c.name, c.n, c.util, c.done, c.dropped, c.maxN, got, c.want)
		}
	}
}

func TestGrowAdvice(t *testing.T) {
	if got, want := GrowAdvice(4, 9, 1000), "generator-bound: raise parallelism to about 9 (from 4)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := GrowAdvice(4, 0, 1000); got != "" {
		t.Errorf("no suggestion: got %q", got)
	}
	if got := GrowAdvice(100, 100, 100); got == "" || got == GrowAdvice(4, 9, 1000) {
		t.Errorf("at the maximum: got %q", got)
	}
}
