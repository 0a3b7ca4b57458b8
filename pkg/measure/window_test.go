package measure

import (
	"testing"
	"time"
)

// Every run of 2 s to 400 s gets 20 to 40 windows (at least 20 points on its charts, and room
// under the collector's cap of 60 for the paused start and the linger), in widths that divide
// a minute; longer runs start at DefaultWindow and the collector's doubling keeps 30 to 60.
func TestWindowForGivesTwentyToFortyWindows(t *testing.T) {
	for length := 2 * time.Second; length < 400*time.Second; length += 250 * time.Millisecond {
		w := WindowFor(length)
		n := length / w
		if n < WindowsPerRun/2 || n > WindowsPerRun || time.Minute%w != 0 || w < MinWindow {
			t.Fatalf("WindowFor(%s) = %s: %d windows, want %d to %d of a width that divides a minute", length, w, n, WindowsPerRun/2, WindowsPerRun)
		}
	}
	for _, length := range []time.Duration{0, -time.Second, 400 * time.Second, 48 * time.Hour} {
		if w := WindowFor(length); w != DefaultWindow {
			t.Errorf("WindowFor(%s) = %s, want %s", length, w, DefaultWindow)
		}
	}
	if DefaultCollectorConfig.MaxWindows < WindowsPerRun*3/2 {
		t.Errorf("a cap of %d windows leaves too little room for the start and the linger", DefaultCollectorConfig.MaxWindows)
	}
}

// A collector that starts at OpenEndedWindow (a run whose length only a limit bounds) keeps 20
// to 60 windows from 2.5 s of samples on, however long the run: the width doubles at the cap.
func TestOpenEndedWindowsDoubleToFit(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, length := range []time.Duration{2500 * time.Millisecond, 10 * time.Second, 7 * time.Minute, 30 * time.Hour} {
		c := NewCollector(CollectorConfig{Window: OpenEndedWindow, MaxWindows: DefaultCollectorConfig.MaxWindows}, start)
		step := max(length/1000, time.Millisecond)
		for at := time.Duration(0); at < length; at += step {
			c.Series("http_reqs", Counter, "", nil).Add(start.Add(at).UnixNano(), 1)
		}
		e := c.Envelope(start.Add(length))
		n := len(e.Metrics[0].Series[0].Windows)
		if n < 20 || n > DefaultCollectorConfig.MaxWindows {
			t.Errorf("a %s run from %s windows: %d windows of %s, want 20 to %d", length, OpenEndedWindow, n,
				time.Duration(e.WindowNanos), DefaultCollectorConfig.MaxWindows)
		}
		if time.Duration(e.WindowNanos)%OpenEndedWindow != 0 {
			t.Errorf("width %s is not a multiple of %s: runners' windows would not line up", time.Duration(e.WindowNanos), OpenEndedWindow)
		}
	}
}
