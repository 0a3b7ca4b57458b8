package measure

import (
	"bytes"
	"testing"
)

// FuzzDecode: any input either decodes into a valid envelope that merges and
// re-encodes, or returns an error; it never panics. Run briefly in CI with
// `go test -run=^$ -fuzz=FuzzDecode -fuzztime=20s ./pkg/measure`.
func FuzzDecode(f *testing.F) {
	full := encode(f, smallEnvelope("r", true))
	f.Add(full)
	f.Add(full[:len(full)/2])
	slow := smallEnvelope("r", true)
	slow.SlowestPerWindow = 2
	slow.Slowest = []SlowRequest{{Key: 1, DurationMillis: 9, URL: "http://x/<a>", TraceID: "4bf92f3577b34da6"}, {Key: 1, DurationMillis: 3}}
	slow.SlowestRun = slow.Slowest[:1]
	f.Add(encode(f, slow))
	f.Add(encode(f, Envelope{Version: Version, WindowNanos: 1, Accuracy: RelativeAccuracy}))
	f.Add([]byte(BeginMarker + "\nencoding=json bytes=2 sha256=44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\n{}\n" + EndMarker + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) (Envelope, error){Decode, ExtractEnvelope} {
			e, err := decode(data)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error message")
				}
				continue
			}
			if _, err := Merge(e, e); err != nil {
				t.Fatalf("decoded envelope does not merge: %v", err)
			}
			var b bytes.Buffer
			if err := Encode(&b, &e); err != nil {
				t.Fatalf("decoded envelope does not re-encode: %v", err)
			}
			if _, err := Decode(b.Bytes()); err != nil {
				t.Fatalf("re-encoded envelope does not decode: %v", err)
			}
		}
	})
}
