package ctrlkit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// MaxEventNote bounds an event's note: events.k8s.io refuses one of 1 KiB or more.
const MaxEventNote = 1000

// maxEventWord bounds an event's reason and action (events.k8s.io: 128 bytes each).
const maxEventWord = 128

// PrintableEvents wraps a recorder so that every event's note is one printable line, cut to
// MaxEventNote (textsafe.Short): notes quote what tenants wrote (a runner's error, a pod's
// termination message, a threshold or pattern name), and kubectl describe shows them on a
// terminal. Every controller records through it, so no call site can forget it.
func PrintableEvents(r events.EventRecorder) events.EventRecorder { return printableEvents{r} }

type printableEvents struct{ inner events.EventRecorder }

func (p printableEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	p.inner.Eventf(regarding, related, eventtype, textsafe.Short(reason, maxEventWord), textsafe.Short(action, maxEventWord),
		"%s", textsafe.Short(note, MaxEventNote))
}
