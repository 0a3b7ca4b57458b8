package collect

import (
	"bytes"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

func encoded(t *testing.T, runner string, requests int) []byte {
	t.Helper()
	e := tw.Envelope(tw.RunnerLoad{Runner: runner, Requests: requests, Start: time.Unix(1_800_000_000, 0), Duration: 10 * time.Second, CPUSeconds: 0.5})
	var b bytes.Buffer
	if err := measure.Encode(&b, &e); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodeZones: a zone's envelopes merge with its numbers; one with fewer runners' results
// than runners makes the result partial, naming it; one with none, refused ones, or one whose
// report could not be used is lost.
func TestDecodeZones(t *testing.T) {
	full := zoneRunReport{zoneToRead: zoneToRead{zone: "a", runners: 2}, phase: v1alpha1.PhaseSucceeded,
		envelopes: [][]byte{encoded(t, "a-0", 100), encoded(t, "a-1", 100)}}
	short := zoneRunReport{zoneToRead: zoneToRead{zone: "b", runners: 2}, phase: v1alpha1.PhaseFailed, message: "runner lost",
		envelopes: [][]byte{encoded(t, "b-0", 70)}}
	none := zoneRunReport{zoneToRead: zoneToRead{zone: "c", runners: 1}, phase: v1alpha1.PhaseFailed, message: "aborted"}
	refused := zoneRunReport{zoneToRead: zoneToRead{zone: "d", runners: 1}, envelopes: [][]byte{[]byte("--- fleetbench-result v1 begin ---\nnot an envelope")}}
	unusable := zoneRunReport{zoneToRead: zoneToRead{zone: "e", runners: 1}, unusable: "its zone run reported no results"}

	got := decodeZones([]zoneRunReport{full, short, none, refused, unusable}, 8, "team")
	if len(got.envelopes) != 3 {
		t.Fatalf("%d envelopes merged, want a's 2 and b's 1", len(got.envelopes))
	}
	if got.numbers["a"].requests != 200 || got.numbers["b"].requests != 70 || got.numbers["a"].latency.P95 == "" {
		t.Errorf("numbers %+v", got.numbers)
	}
	for _, zone := range []string{"c", "d", "e"} {
		if got.lost[zone] == "" {
			t.Errorf("zone %s not lost: %v", zone, got.lost)
		}
	}
	if _, ok := got.lost["b"]; ok {
		t.Errorf("zone b, with one runner's results, lost: its results still count")
	}
	all := strings.Join(got.problems, "\n")
	for _, want := range []string{"zone b: 1 of its 2 runners' results (its run ended Failed: runner lost)", "zone c was lost", "zone d was lost: its results were refused", "zone e was lost"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}
