package measure

import (
	"bytes"
	"runtime"
	"testing"
)

// A small envelope costs little to read: the manager reads every runner's live envelope at
// once (5,000 of them at the scale benchmark), so a fixed 64 KiB line buffer per read was
// 320 MB for envelopes of a few hundred bytes.
func TestReadingASmallEnvelopeAllocatesLittle(t *testing.T) {
	env := Envelope{Runner: "r", K6Version: "v", StartUnixNano: 1, EndUnixNano: 2, WindowNanos: 1e9,
		Accuracy: RelativeAccuracy, Metrics: []Metric{}, Final: true}
	var b bytes.Buffer
	if err := Encode(&b, &env); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if _, err := ExtractEnvelopeWithin(data, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	const reads = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range reads {
		if _, err := ExtractEnvelopeWithin(data, DefaultLimits); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / reads
	t.Logf("%d-byte envelope: %d bytes allocated per read", len(data), per)
	if per > 48<<10 {
		t.Errorf("reading a %d-byte envelope allocates %d bytes", len(data), per)
	}
}
