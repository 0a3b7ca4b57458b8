package measure

import (
	"testing"
	"time"
)

// TestCollectorKeepsMemoryPerWindow: each window keeps the runner's latest resident memory;
// when the run outgrows MaxWindows and windows merge, the later level wins (memory is a level,
// not an amount to add), and a window with memory but no CPU time is still written.
func TestCollectorKeepsMemoryPerWindow(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := NewCollector(CollectorConfig{Window: time.Second, MaxWindows: 4}, start)
	at := func(sec float64) int64 { return start.Add(time.Duration(sec * float64(time.Second))).UnixNano() }
	c.AddMemory(at(0.2), 100)
	c.AddMemory(at(0.8), 110) // the window keeps its latest
	c.AddCPU(at(0.9), 0.5)
	c.AddMemory(at(1.5), 120)
	c.AddMemory(at(3.5), 140)
	e := c.Envelope(start.Add(4 * time.Second))
	first := start.Unix()
	want := map[int64]CPUWindow{first: {Seconds: 0.5, RSSBytes: 110}, first + 1: {RSSBytes: 120}, first + 3: {RSSBytes: 140}}
	if len(e.CPU.Windows) != len(want) {
		t.Fatalf("windows %+v, want %d", e.CPU.Windows, len(want))
	}
	for _, w := range e.CPU.Windows {
		if g := want[w.Key]; w.Seconds != g.Seconds || w.RSSBytes != g.RSSBytes {
			t.Errorf("window %d: %+v, want %+v", w.Key-first, w, g)
		}
	}

	c.AddMemory(at(4.5), 150) // a fifth window: 2 s windows from here
	e = c.Envelope(start.Add(5 * time.Second))
	if e.WindowNanos != int64(2*time.Second) {
		t.Fatalf("window %d ns, want coarsened to 2 s", e.WindowNanos)
	}
	got := map[int64]int64{}
	for _, w := range e.CPU.Windows {
		got[w.Key*2-first] = w.RSSBytes
	}
	if got[0] != 120 || got[2] != 140 || got[4] != 150 {
		t.Errorf("coarsened memory %v, want 0s:120 (the later of 110, 120), 2s:140, 4s:150", got)
	}
}
