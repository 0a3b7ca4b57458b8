package ctrlkit

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

type noted struct{ reason, action, note string }

// recorded keeps the events it is given, as the events API would write them.
type recorded struct{ events []noted }

func (r *recorded) Eventf(_, _ runtime.Object, _, reason, action, note string, args ...any) {
	r.events = append(r.events, noted{reason, action, fmt.Sprintf(note, args...)})
}

// TestPrintableEvents: an event's note quoting a tenant's text is one printable line within
// the events API's bound, whatever the call site formats; a plain note passes unchanged, and a
// note with no arguments is not read as a format.
func TestPrintableEvents(t *testing.T) {
	inner := &recorded{}
	r := PrintableEvents(inner)
	r.Eventf(nil, nil, "Warning", "RunnerFailed", "Run", "runner 2: %s", "\x1b[2Jpwned\r\n"+strings.Repeat("x", 5000))
	r.Eventf(nil, nil, "Normal", "Started", "Run", "%s", "3 runners started")
	r.Eventf(nil, nil, "Normal", "Note", "Run", "100% done")
	want := []noted{
		{"RunnerFailed", "Run", `runner 2: \x1b[2Jpwned\r ` + strings.Repeat("x", MaxEventNote-len(`runner 2: \x1b[2Jpwned\r `)-len("…")) + "…"},
		{"Started", "Run", "3 runners started"},
		{"Note", "Run", "100% done"},
	}
	if len(inner.events) != len(want) {
		t.Fatalf("events = %q", inner.events)
	}
	for i, w := range want {
		if got := inner.events[i]; got != w {
			t.Errorf("event %d = %q, want %q", i, got, w)
		}
		if len(inner.events[i].note) > MaxEventNote {
			t.Errorf("event %d: note of %d bytes", i, len(inner.events[i].note))
		}
	}
}
