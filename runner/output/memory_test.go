package output

import (
	"os"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestParseStatm: statm's second field is the resident pages; a line that is not statm is 0,
// never a wrong figure.
func TestParseStatm(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"4136 1015 712 1 0 232 0\n", 1015 * 4096},
		{"4136", 0},
		{"", 0},
		{"4136 -5 1", 0},
		{"4136 lots 1", 0},
	} {
		if got := parseStatm(tc.in, 4096); got != tc.want {
			t.Errorf("parseStatm(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestEnvelopeCarriesResidentMemoryPerWindow: the runner's envelope has its resident memory at
// each window it sampled, the points its own leak verdict is fitted to. Before, it had only
// the peak (ru_maxrss), which never falls and so cannot be fitted.
func TestEnvelopeCarriesResidentMemoryPerWindow(t *testing.T) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc/self/statm on this system")
	}
	o, stdout, start, clock := startedOnClock(t)
	for i := range 3 {
		*clock = start.Add(time.Duration(i)*time.Second + 500*time.Millisecond)
		o.mu.Lock()
		o.sampleCPU()
		o.mu.Unlock()
	}
	*clock = start.Add(3 * time.Second)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	e, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	first := start.UnixNano() / int64(time.Second)
	seen := map[int64]bool{}
	for _, w := range e.CPU.Windows {
		if w.RSSBytes <= 0 || w.RSSBytes > e.CPU.MaxRSSBytes {
			t.Errorf("window %d: resident %d bytes, want within (0, max RSS %d]", w.Key, w.RSSBytes, e.CPU.MaxRSSBytes)
		}
		seen[w.Key-first] = true
	}
	for i := range int64(4) {
		if !seen[i] {
			t.Errorf("no memory in window %d: %+v", i, e.CPU.Windows)
		}
	}
}
